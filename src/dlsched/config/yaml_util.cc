#include "dlsched/config/yaml_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config::internal {
namespace {

// "%g"-like but exact for the integers and simple decimals found in configs.
std::string FormatNumber(double v) { return fmt::format("{}", v); }

std::string JoinKeys(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (auto k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string IntRangeText(int64_t min, int64_t max) {
  if (max >= kMaxInt) return fmt::format("an integer >= {}", min);
  if (max == min + 1) return fmt::format("{} or {}", min, max);
  return fmt::format("an integer between {} and {}", min, max);
}

}  // namespace

std::string Key(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

std::string Index(std::string_view parent, size_t i) { return fmt::format("{}[{}]", parent, i); }

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  // Errors are one line: escape line breaks and cut long block scalars.
  return fmt::format("'{}'", core::EscapeText(node.Scalar(), 60));
}

core::Result<std::string> ReadFile(const std::string& path) {
  // Non-blocking, so opening a FIFO with no writer returns at once instead
  // of waiting for one; anything but a regular file is refused before a
  // byte is read (a FIFO could block, /dev/zero never ends).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return core::Errorf("{}: cannot read file: {}", path, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return core::Errorf("{}: cannot read file: {}", path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return core::Errorf("{}: cannot read file: it is {}; dlsched reads regular files only", path,
                        what);
  }
  auto too_large = [&](uint64_t size) {
    return core::Errorf("{}: cannot read file: it has {} bytes; input files are limited to {} MiB",
                        path, size, core::kMaxInputBytes >> 20);
  };
  if (static_cast<uint64_t>(st.st_size) > core::kMaxInputBytes) return too_large(st.st_size);
  std::string text;
  text.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  // Read one byte past the size seen, so a file that grew is noticed.
  for (;;) {
    if (got == text.size()) {
      if (text.size() > core::kMaxInputBytes) return too_large(text.size());
      text.resize(std::max<size_t>(text.size() * 2, 4096));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
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

// Counts the nodes of a YAML stream without building them, and stops the
// parse once there are more than `max_nodes`.
class NodeCounter final : public YAML::EventHandler {
 public:
  struct TooMany {};
  explicit NodeCounter(int64_t max_nodes) : max_nodes_(max_nodes) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { Count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { Count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Count();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Count();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Count();
  }
  void OnMapEnd() override {}
  int64_t nodes() const { return nodes_; }

 private:
  void Count() {
    if (++nodes_ > max_nodes_) throw TooMany{};
  }
  int64_t max_nodes_;
  int64_t nodes_ = 0;
};

}  // namespace

int64_t CountYamlNodes(const std::string& text, int64_t max_nodes) {
  std::istringstream in(text);
  NodeCounter counter(max_nodes);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const NodeCounter::TooMany&) {
  } catch (const YAML::Exception&) {
  }
  return counter.nodes();
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
    if (NeedsNodeScan(text, max_nodes, scan_above) && CountYamlNodes(text, max_nodes) > max_nodes) {
      return core::Errorf(
          "{}: has more than {} YAML nodes; YAML inputs are limited to that many (each takes "
          "about 500 bytes of memory)",
          source, max_nodes);
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

std::string NumberRange::Describe() const {
  if (max.has_value()) {
    return fmt::format("a number in {}{}, {}]", min_exclusive ? "(" : "[", FormatNumber(min),
                       FormatNumber(*max));
  }
  if (std::isinf(min)) return "a number";
  return fmt::format("a number {} {}", min_exclusive ? ">" : ">=", FormatNumber(min));
}

std::unexpected<core::Error> Reader::Fail(std::string_view path, std::string_view what) const {
  if (path.empty()) return core::Errorf("{}: {}", source_, what);
  return core::Errorf("{}: {}: {}", source_, path, what);
}

std::unexpected<core::Error> Reader::Expected(std::string_view path, std::string_view expected,
                                              const YAML::Node& node) const {
  return Fail(path, fmt::format("expected {}, got {}", expected, internal::Describe(node)));
}

std::unexpected<core::Error> Reader::Missing(std::string_view path,
                                             std::string_view expected) const {
  return Fail(path, fmt::format("missing, expected {}", expected));
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

core::Result<int64_t> Reader::Int(const YAML::Node& node, std::string_view path, int64_t min,
                                  int64_t max) const {
  std::string expected = IntRangeText(min, max);
  if (!node.IsScalar()) return Expected(path, expected, node);
  const std::string& s = node.Scalar();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    return Expected(path, expected, node);
  }
  return v;
}

core::Result<double> Reader::Number(const YAML::Node& node, std::string_view path,
                                    const NumberRange& range) const {
  std::string expected = range.Describe();
  if (!node.IsScalar()) return Expected(path, expected, node);
  std::string_view s = node.Scalar();
  // from_chars does not take a leading '+', YAML does.
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return Expected(path, expected, node);
  }
  bool below = range.min_exclusive ? v <= range.min : v < range.min;
  if (below || (range.max.has_value() && v > *range.max)) return Expected(path, expected, node);
  return v;
}

core::Result<bool> Reader::Bool(const YAML::Node& node, std::string_view path) const {
  bool v = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) {
    return Expected(path, "true or false", node);
  }
  return v;
}

core::Result<core::Resources> Reader::Resources(const YAML::Node& node,
                                                std::string_view path) const {
  if (auto st = CheckAnyMap(node, path, "a map of resource name to quantity"); !st) {
    return std::unexpected(st.error());
  }
  core::Resources out;
  for (const auto& kv : node) {
    const std::string& name = kv.first.Scalar();
    std::string field = Key(path, name);
    auto id = core::InternResource(name);
    if (!id) return Fail(field, id.error().message);
    if (!kv.second.IsScalar()) return Expected(field, "a quantity", kv.second);
    auto amount = core::ParseResourceAmount(*id, kv.second.Scalar());
    if (!amount) return Fail(field, amount.error().message);
    if (*amount > core::kMaxAmount) {
      return Fail(field, fmt::format("{} is more than the limit of {}", Describe(kv.second),
                                     core::FormatResourceAmount(*id, core::kMaxAmount)));
    }
    out[*id] = *amount;
  }
  return out;
}

}  // namespace dlsched::config::internal
