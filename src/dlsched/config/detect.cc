#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <yaml-cpp/eventhandler.h>

#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"

namespace dlsched::config {
namespace {

// Whether a root map key "nodes" may come after the first keys, judged
// from the bytes: in an internal::IsOneBlockMap text every root key starts
// a line, so it cannot when no line starts with "nodes" or with a quote,
// tag, anchor, alias or `?` (the other ways to write that key).
bool NodesMayFollow(std::string_view text) {
  if (!internal::IsOneBlockMap(text)) return true;
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string_view line = text.substr(pos, text.find('\n', pos) - pos);
    if (line.starts_with("nodes") ||
        (!line.empty() && std::string_view("\"'!&*?").find(line[0]) != std::string_view::npos)) {
      return true;
    }
    pos += line.size() + 1;
  }
  return false;
}

// Reads a YAML stream's events only as far as the root map's keys decide
// the kind, as DetectKind's tree lookups would: a "nodes" key makes a
// cluster, whatever follows; a "jobs" key a workload once no "nodes" key
// can follow (NodesMayFollow, or the root map's end). Stops by throwing
// Stop, also when the root is not a map.
class TopKeys final : public YAML::EventHandler {
 public:
  struct Stop {};
  explicit TopKeys(std::string_view text) : text_(text) {}

  std::optional<FileKind> kind() const { return kind_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override { throw Stop{}; }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { Node(nullptr); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { Node(nullptr); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    Node(&value);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    if (depth_ == 0) throw Stop{};  // not a map
    Node(nullptr);
    ++depth_;
  }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    if (depth_ > 0) Node(nullptr);
    ++depth_;
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapEnd() override {
    if (--depth_ > 0) return;
    // Every root key seen: no "nodes" among them.
    if (jobs_) kind_ = FileKind::kWorkload;
    throw Stop{};
  }

 private:
  // A node; a key or a value of the root map when depth_ is 1.
  void Node(const std::string* scalar) {
    if (depth_ == 0) throw Stop{};  // a scalar root
    if (depth_ > 1) return;
    const bool key = at_key_;
    at_key_ = !at_key_;
    if (!key || scalar == nullptr) return;
    if (*scalar == "nodes") {
      kind_ = FileKind::kCluster;
      throw Stop{};
    }
    if (*scalar == "jobs") {
      jobs_ = true;
      if (!NodesMayFollow(text_)) {
        kind_ = FileKind::kWorkload;
        throw Stop{};
      }
    }
  }

  std::string_view text_;
  int depth_ = 0;
  bool at_key_ = true;
  bool jobs_ = false;
  std::optional<FileKind> kind_;
};

// The kind from the first keys of the root map, without reading the rest
// of the file; nullopt when they do not decide it (or the YAML is broken
// before they do).
std::optional<FileKind> QuickKind(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  TopKeys keys(text);
  try {
    parser.HandleNextDocument(keys);
  } catch (const TopKeys::Stop&) {
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  return keys.kind();
}

}  // namespace

core::Result<FileKind> DetectKind(const std::string& path) {
  DLSCHED_TRY_LET(text, internal::ReadFile(path));
  try {
    // A cluster or a workload is told by its first keys; the command that
    // reads it next parses the whole file, reporting what is wrong with it.
    if (auto kind = QuickKind(*text)) return *kind;
    // Anything else is parsed whole: a profile is small, and what is neither
    // gets the parser's error if it is not YAML.
    DLSCHED_TRY_LET(root, internal::ParseYaml(*text, path));
    const YAML::Node& n = *root;
    if (n.IsMap()) {
      if (n["nodes"].IsDefined()) return FileKind::kCluster;
      if (n["jobs"].IsDefined()) return FileKind::kWorkload;
      if (internal::Given(n["name"])) {
        for (const char* key : {"admission", "order", "filters", "packer", "scorers", "preemptor",
                                "sizer", "queueOrder"}) {
          if (n[key].IsDefined()) return FileKind::kProfile;
        }
      }
    }
  } catch (const std::exception& e) {
    return std::unexpected(internal::FromException(path, e));
  }
  return core::Errorf(
      "{}: cannot tell what this file is (expected a cluster with 'nodes', a workload with "
      "'jobs', or a profile with 'name' and extension points)",
      path);
}

}  // namespace dlsched::config
