#pragma once

// Helpers shared by the policy layer's tests.

#include "dlsched/policy/framework/registry.h"
#include "policy/profiles.h"

namespace dlsched::policy::testing {

// From the shared test library (testing/policy).
using dlsched::testing::MakeProfile;

}  // namespace dlsched::policy::testing
