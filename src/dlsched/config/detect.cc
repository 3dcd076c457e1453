#include <string>

#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"

namespace dlsched::config {

core::Result<FileKind> DetectKind(const std::string& path) {
  auto text = internal::ReadFile(path);
  if (!text) return std::unexpected(text.error());
  try {
    auto root = internal::ParseYaml(*text, path);
    if (!root) return std::unexpected(root.error());
    const YAML::Node& n = *root;
    if (n.IsMap()) {
      if (n["nodes"].IsDefined()) return FileKind::kCluster;
      if (n["jobs"].IsDefined()) return FileKind::kWorkload;
      if (internal::Given(n["name"])) {
        for (const char* key :
             {"admission", "order", "filters", "packer", "scorers", "preemptor", "sizer"}) {
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
