#pragma once

#include <optional>
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
enum class Point { kAdmission, kOrder, kFilter, kPacker, kScorer, kPreemptor, kSizer, kQueueOrder };
std::vector<std::string_view> KnownNames(Point point);

struct BuiltinProfile {
  std::string_view name;
  std::string_view summary;  // one line, for `dlsched profiles`
  std::string_view yaml;     // the profile: examples/profiles/<name>.yaml, built in
};
std::span<const BuiltinProfile> BuiltinProfiles();

// The YAML text of built-in profile `name`, including "static-<n>" for any
// slot size n >= 1 (the static-n profile with slotGpus n), or nullopt.
std::optional<std::string> BuiltinProfileText(std::string_view name);

// `name_or_path` is a built-in profile name (BuiltinProfileText) or a path
// to a profile YAML file; `overrides` ("PATH=VALUE", config::
// ApplyProfileOverrides) change it before it is checked. A profile with
// overrides is named after them unless one sets `name`: kod2 with
// order.args.kappa=2 is "kod2-kappa-2".
core::Result<config::ProfileSpec> ResolveProfile(const std::string& name_or_path,
                                                 std::span<const std::string> overrides = {});

// The YAML of the profile ResolveProfile builds: the built-in's text
// (BuiltinProfileText) or the file's, unchanged without overrides; with
// them, the document with each override applied and `name` set to the
// profile's name (kod2-kappa-2), re-emitted by yaml-cpp (comments dropped).
// Running it as a profile file runs the same profile.
core::Result<std::string> ResolvedProfileText(const std::string& name_or_path,
                                              std::span<const std::string> overrides = {});

}  // namespace dlsched::policy
