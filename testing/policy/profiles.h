#pragma once

// Profiles and engines for tests: a built-in profile (or a profile file)
// by its name, optionally edited before it is built, or a profile's YAML
// text. A failure to resolve or build is a test failure. Test-only code.

#include <functional>
#include <memory>
#include <string>

#include "dlsched/config/specs.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/profile.h"

namespace dlsched::testing {

// Changes a profile's spec before it is built.
using ProfileEdit = std::function<void(config::ProfileSpec&)>;

// The profile of a built-in name or a profile file, after `edit`.
engine::Profile BuiltinProfile(const std::string& name_or_path, const ProfileEdit& edit = {});

// The profile a YAML text describes (read as "p.yaml").
engine::Profile MakeProfile(const std::string& yaml);

// The engine of a built-in profile or a profile file, after `edit`.
engine::Engine MakeEngine(const std::string& name_or_path, const ProfileEdit& edit = {});
// The same on the heap, for a holder that outlives the call.
std::unique_ptr<engine::Engine> NewEngine(const std::string& name_or_path);

}  // namespace dlsched::testing
