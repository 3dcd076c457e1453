#include "dlsched/config/yaml_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config::internal {
namespace {

std::string JoinKeys(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (auto k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

}  // namespace

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  // Errors are one line: escape line breaks and cut long block scalars.
  return fmt::format("'{}'", core::EscapeText(node.Scalar(), 60));
}

core::Result<InputFile> OpenInputFile(const std::string& path, uint64_t max_bytes,
                                      std::string_view limited) {
  // Non-blocking, so opening a FIFO with no writer returns at once instead
  // of waiting for one; anything but a regular file is refused before a
  // byte is read (a FIFO could block, /dev/zero never ends).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return core::Errorf("{}: cannot read file: {}", path, std::strerror(errno));
  auto fail = [&](std::unexpected<core::Error> e) -> core::Result<InputFile> {
    ::close(fd);
    return e;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fail(core::Errorf("{}: cannot read file: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return fail(core::Errorf("{}: cannot read file: it is {}; dlsched reads regular files only",
                             path, what));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return fail(TooLargeFile(path, st.st_size, max_bytes, limited));
  }
  return InputFile{fd, static_cast<uint64_t>(st.st_size)};
}

std::unexpected<core::Error> TooLargeFile(const std::string& path, uint64_t size,
                                          uint64_t max_bytes, std::string_view limited) {
  return core::Errorf("{}: cannot read file: it has {} bytes; {} are limited to {} MiB", path, size,
                      limited, max_bytes >> 20);
}

core::Result<std::string> ReadFile(const std::string& path) {
  constexpr std::string_view kLimited = "input files";
  DLSCHED_TRY_LET(file, OpenInputFile(path, core::kMaxInputBytes, kLimited));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{file->fd};
  auto too_large = [&](uint64_t size) {
    return TooLargeFile(path, size, core::kMaxInputBytes, kLimited);
  };
  std::string text;
  text.resize(static_cast<size_t>(file->size));
  size_t got = 0;
  // Read one byte past the size seen, so a file that grew is noticed.
  for (;;) {
    if (got == text.size()) {
      if (text.size() > core::kMaxInputBytes) return too_large(text.size());
      text.resize(std::max<size_t>(text.size() * 2, 4096));
    }
    const ssize_t n = ::read(file->fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::Errorf("{}: cannot read file: {}", path, std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  if (text.size() > core::kMaxInputBytes) return too_large(text.size());
  return text;
}

namespace {

// Counts the nodes of a YAML stream without building them: the nodes
// yaml-cpp builds (an alias is one), and the nodes a reader walking the
// tree meets (an alias stands for every node of what it names: yaml-cpp
// shares that subtree, but each use of it is read again). Stops the parse
// once either is over its limit.
class NodeCounter final : public YAML::EventHandler {
 public:
  struct TooMany {};
  NodeCounter(int64_t max_nodes, int64_t max_expanded)
      : max_nodes_(max_nodes), max_expanded_(max_expanded) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { Leaf(anchor); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    // An alias of a node still open (`&a [*a]`, a cycle) counts as one.
    const int64_t size = anchor < sizes_.size() && sizes_[anchor] > 0 ? sizes_[anchor] : 1;
    count_.aliased += size;
    Count(size);
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    Leaf(anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(anchor);
  }
  void OnMapEnd() override { Close(); }
  const YamlCount& count() const { return count_; }

 private:
  void Count(int64_t expanded) {
    ++count_.nodes;
    count_.expanded += expanded;
    if (count_.nodes > max_nodes_ || count_.expanded > max_expanded_) throw TooMany{};
  }
  void Leaf(YAML::anchor_t anchor) {
    Count(1);
    Anchored(anchor, 1);
  }
  void Open(YAML::anchor_t anchor) {
    Count(1);
    open_.push_back({anchor, count_.expanded - 1});
  }
  void Close() {
    if (open_.empty()) return;
    const auto [anchor, first] = open_.back();
    open_.pop_back();
    Anchored(anchor, count_.expanded - first);
  }
  void Anchored(YAML::anchor_t anchor, int64_t size) {
    if (anchor == YAML::NullAnchor) return;
    if (anchor >= sizes_.size()) sizes_.resize(anchor + 1, 0);
    sizes_[anchor] = size;
  }
  int64_t max_nodes_;
  int64_t max_expanded_;
  YamlCount count_;
  std::vector<std::pair<YAML::anchor_t, int64_t>> open_;  // anchor, expanded before it
  std::vector<int64_t> sizes_;                            // by anchor: expanded nodes
};

}  // namespace

YamlCount CountYamlExpansion(const std::string& text, int64_t max_nodes, int64_t max_expanded) {
  std::istringstream in(text);
  NodeCounter counter(max_nodes, max_expanded);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const NodeCounter::TooMany&) {
  } catch (const YAML::Exception&) {
  }
  return counter.count();
}

int64_t CountYamlNodes(const std::string& text, int64_t max_nodes) {
  return CountYamlExpansion(text, max_nodes, std::numeric_limits<int64_t>::max()).nodes;
}

double AllowedAliasShare(int64_t expanded) {
  constexpr double kLow = 400'000;
  constexpr double kHigh = 4'000'000;
  const auto n = static_cast<double>(expanded);
  if (n <= kLow) return 0.99;
  if (n >= kHigh) return 0.10;
  return 0.99 - 0.89 * (n - kLow) / (kHigh - kLow);
}

bool ExcessiveAliasing(const YamlCount& c) {
  return c.aliased > 100 && c.expanded > 1000 &&
         static_cast<double>(c.aliased) / static_cast<double>(c.expanded) >
             AllowedAliasShare(c.expanded);
}

bool IsOneBlockMap(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return false;
  bool first = true;  // before the first line with content
  size_t pos = 0;
  while (pos <= text.size()) {
    // yaml-cpp breaks lines at \n and \r\n only: a lone \r would hide
    // a line from this look, so it is refused.
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (end < text.size() && line.ends_with('\r')) line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return false;
    if (line.starts_with("---") || line.starts_with("...") || line.starts_with("%")) return false;
    if (!first) continue;
    const size_t content = line.find_first_not_of(" \t");
    if (content == std::string_view::npos || line[content] == '#') continue;
    // The first key: [A-Za-z_][A-Za-z0-9_.-]* then ':' and a blank or the
    // end of the line (a plain scalar that is a simple key).
    auto alpha = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    auto word = [&](char c) { return alpha(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; };
    if (!alpha(line[0])) return false;
    size_t i = 1;
    while (i < line.size() && word(line[i])) ++i;
    if (i == line.size() || line[i] != ':') return false;
    if (i + 1 < line.size() && line[i + 1] != ' ' && line[i + 1] != '\t') return false;
    first = false;
  }
  return !first;
}

// The bound. yaml-cpp's event pass (SingleDocParser) emits one node event
// (null, scalar, alias, map or sequence start: what NodeCounter counts) for
// each "slot" it fills: the root of each document, and
//   - each block sequence entry `-`: 1;
//   - each block map entry (a KEY and/or a VALUE token): 2, key and value
//     (a missing one is a null);
//   - each flow sequence entry: 1, and each flow map entry: 2; an entry
//     follows the opener `[` / `{` or a `,` (`{,,}` is two null pairs);
//   - each single-pair map in a flow sequence (`[a: b]`, a KEY there) and
//     each key-less pair (`: b` anywhere, a VALUE where a node is due): 2.
// A map or sequence start is the event of the slot it fills, so these
// count every event. Now charge each to the text's "items": the flow
// openers `[`, `{` and the commas (at most 1, 2 and 2 each), and the
// words, maximal runs of other non-blank bytes. A word holds at most one
// `-` entry (it needs a blank after it and cannot follow a token without
// one), at most one block map entry (a block `:` needs a blank after it), and
// in a flow at most one single-pair map and one key-less pair: `"a"::` in
// `["a":: ]` (JSON-style `:` right after a quoted key, then `: `) charges 4,
// the most. Anchors, tags (`key: &a !t`: the value's null), comments,
// quoted and block scalars, multi-line plain scalars only add words. So a
// document has at most 1 + 4 x items events; IsOneBlockMap texts have one
// document. (The worst seen by the tests' adversarial texts is 3 x items:
// a lone `a:` is a map, its key and a null.)
std::optional<int64_t> YamlNodeBound(std::string_view text) {
  if (!IsOneBlockMap(text)) return std::nullopt;
  int64_t items = 0;
  bool in_word = false;
  for (const char c : text) {
    switch (c) {
      case ' ':
      case '\t':
      case '\n':
      case '\r':
      case ']':
      case '}':
        in_word = false;
        break;
      case '[':
      case '{':
      case ',':
        ++items;
        in_word = false;
        break;
      default:
        if (!in_word) ++items;
        in_word = true;
    }
  }
  return 1 + 4 * items;
}

bool NeedsNodeScan(std::string_view text, int64_t max_nodes, size_t scan_above) {
  if (text.size() <= scan_above) return false;
  const auto bound = YamlNodeBound(text);
  return !bound || *bound > max_nodes;
}

core::Result<YAML::Node> ParseYaml(const std::string& text, const std::string& source,
                                   int64_t max_nodes, size_t scan_above) {
  // As ReadFile keeps a file: text from elsewhere (an operator's snapshot)
  // is held to what a file may hold.
  if (text.size() > core::kMaxInputBytes) {
    return core::Errorf("{}: has {} bytes; YAML inputs are limited to {} MiB", source, text.size(),
                        core::kMaxInputBytes >> 20);
  }
  try {
    // A syntax error stops the count early; YAML::Load reports it below.
    const bool count_nodes = NeedsNodeScan(text, max_nodes, scan_above);
    // An alias (`*name`) needs an anchor (`&name`).
    const bool count_aliases =
        text.find('&') != std::string::npos && text.find('*') != std::string::npos;
    if (count_nodes || count_aliases) {
      const YamlCount c = CountYamlExpansion(
          text, count_nodes ? max_nodes : std::numeric_limits<int64_t>::max(), max_nodes);
      if (count_nodes && c.nodes > max_nodes) {
        return core::Errorf(
            "{}: has more than {} YAML nodes; YAML inputs are limited to that many (each takes "
            "about 500 bytes of memory)",
            source, max_nodes);
      }
      if (c.expanded > max_nodes) {
        return core::Errorf(
            "{}: its aliases (*name) repeat nodes to more than {} in all; YAML inputs are limited "
            "to that many, counting each alias as the nodes it repeats",
            source, max_nodes);
      }
      if (ExcessiveAliasing(c)) {
        return core::Errorf(
            "{}: its aliases (*name) repeat nodes to {} in all, {} of them through aliases: more "
            "than {:.0f}% of a document of that size may not come from aliases",
            source, c.expanded, c.aliased, 100 * AllowedAliasShare(c.expanded));
      }
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return core::MakeError(FromException(source, e).message);
  }
}

core::Error FromException(const std::string& source, const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) throw;  // the one being handled
  if (const auto* ye = dynamic_cast<const YAML::Exception*>(&e)) {
    if (!ye->mark.is_null()) {
      return core::Error{
          fmt::format("{}:{}:{}: {}", source, ye->mark.line + 1, ye->mark.column + 1, ye->msg)};
    }
    return core::Error{fmt::format("{}: {}", source, ye->msg)};
  }
  return core::Error{fmt::format("{}: {}", source, e.what())};
}

core::Status Reader::CheckAnyMap(const YAML::Node& node, std::string_view path,
                                 std::string_view what) const {
  if (!node.IsMap()) return Expected(path, what, node);
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      return Fail(path, fmt::format("keys must be plain names, got {}", Describe(kv.first)));
    }
    if (!seen.insert(kv.first.Scalar()).second) {
      return Fail(Key(path, kv.first.Scalar()), "duplicate key");
    }
  }
  return {};
}

core::Status Reader::CheckMap(const YAML::Node& node, std::string_view path, std::string_view what,
                              std::initializer_list<std::string_view> allowed) const {
  if (auto st = CheckAnyMap(node, path, what); !st) return st;
  for (const auto& kv : node) {
    const std::string& k = kv.first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || a == k;
    if (!known) {
      return Fail(Key(path, k),
                  fmt::format("unknown key (allowed: {}){}", JoinKeys(allowed),
                              core::DidYouMean(k, {allowed.begin(), allowed.size()})));
    }
  }
  return {};
}

core::Result<std::string> Reader::String(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar() || node.Scalar().empty()) return Expected(path, "a non-empty string", node);
  return node.Scalar();
}

core::Result<std::string> Reader::Name(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) return Expected(path, "a name", node);
  if (auto problem = core::NameProblem(node.Scalar())) return Fail(path, *problem);
  return node.Scalar();
}

std::optional<int64_t> YamlFields::ToInt(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  const std::string& s = node.Scalar();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> YamlFields::ToNumber(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  std::string_view s = node.Scalar();
  // from_chars does not take a leading '+', YAML does.
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlFields::ToBool(const YAML::Node& node) {
  bool v = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) return std::nullopt;
  return v;
}

core::Result<core::Resources> Reader::Resources(const YAML::Node& node,
                                                std::string_view path) const {
  DLSCHED_TRY(CheckAnyMap(node, path, "a map of resource name to quantity"));
  core::Resources out;
  for (const auto& kv : node) {
    const std::string& name = kv.first.Scalar();
    std::string field = Key(path, name);
    auto id = core::InternResource(name);
    if (!id) return Fail(field, id.error().message);
    DLSCHED_TRY_LET(amount, Amount(*id, kv.second, field));
    out[*id] = *amount;
  }
  return out;
}

core::Result<int64_t> Reader::Amount(core::ResourceId id, const YAML::Node& node,
                                     std::string_view path) const {
  if (!node.IsScalar()) return Expected(path, "a quantity", node);
  auto amount = core::ParseResourceAmount(id, node.Scalar());
  if (!amount) return Fail(path, amount.error().message);
  if (*amount > core::kMaxAmount) {
    return Fail(path, fmt::format("{} is more than the limit of {}", Describe(node),
                                  core::FormatResourceAmount(id, core::kMaxAmount)));
  }
  return *amount;
}

}  // namespace dlsched::config::internal
