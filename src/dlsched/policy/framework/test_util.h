#pragma once

// Helpers shared by the policy layer's tests.

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::policy::testing {

// The profile a YAML text describes, built (failures are test failures).
inline engine::Profile MakeProfile(const std::string& yaml) {
  auto spec = config::ParseProfile(yaml, "p.yaml");
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  auto built = BuildProfile(*spec);
  EXPECT_TRUE(built.has_value()) << built.error().message;
  return std::move(*built);
}

}  // namespace dlsched::policy::testing
