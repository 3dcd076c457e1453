#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/engine/profile.h"

namespace dlsched::policy {

// Builds a runnable profile from its spec: looks up each named
// implementation and parses its arguments. Unknown names and bad arguments
// are errors naming the file and field, e.g.
//   "p.yaml: order.name: unknown JobOrder 'LIFO' (known: FIFO)".
core::Result<engine::Profile> BuildProfile(const config::ProfileSpec& spec);

// The implementations each extension point knows, sorted.
enum class Point { kAdmission, kOrder, kFilter, kPacker, kScorer, kPreemptor, kSizer };
std::vector<std::string_view> KnownNames(Point point);

struct BuiltinProfile {
  std::string_view name;
  std::string_view summary;  // one line, for `dlsched profiles`
  std::string_view yaml;     // the profile; examples/profiles/<name>.yaml holds the same text
};
std::span<const BuiltinProfile> BuiltinProfiles();

// `name_or_path` is a built-in profile name (including "static-<n>" for
// any slot size n >= 1) or a path to a profile YAML file.
core::Result<config::ProfileSpec> ResolveProfile(const std::string& name_or_path);

}  // namespace dlsched::policy
