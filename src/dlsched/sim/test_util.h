#pragma once

#include <gtest/gtest.h>

#include <string>

#include "dlsched/policy/registry.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::sim::testing {

// The engine of a built-in profile (or a profile file).
inline engine::Engine MakeEngine(const std::string& profile) {
  auto spec = policy::ResolveProfile(profile);
  EXPECT_TRUE(spec.has_value()) << profile << ": " << spec.error().message;
  auto built = policy::BuildProfile(*spec);
  EXPECT_TRUE(built.has_value()) << profile << ": " << built.error().message;
  return engine::Engine(std::move(*built));
}

// The record of job `name` in a run.
inline const metrics::JobRecord& Record(const SimResult& r, const std::string& name) {
  for (const auto& j : r.run.jobs) {
    if (j.name == name) return j;
  }
  ADD_FAILURE() << "no job " << name;
  return r.run.jobs.front();
}

}  // namespace dlsched::sim::testing
