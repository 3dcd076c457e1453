#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/builders.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/sim/simulator.h"
#include "policy/profiles.h"
#include "sim/scenario.h"

namespace dlsched::sim::testing {

// Engines and jobs come from the shared test library (testing/).
using dlsched::testing::GpuJob;
using dlsched::testing::MakeEngine;
using dlsched::testing::Timeline;

// A test name for a profile run: its file's stem (profile-deadline) or
// its name, in the letters a test name allows.
inline std::string ProfileTestName(const std::string& profile) {
  std::string n = std::filesystem::path(profile).stem().string();
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

// The record of job `name` in a run.
inline const metrics::JobRecord& Record(const SimResult& r, const std::string& name) {
  for (const auto& j : r.run.jobs) {
    if (j.name == name) return j;
  }
  ADD_FAILURE() << "no job " << name;
  return r.run.jobs.front();
}

// The detail of job `name`'s first `kind` event, or "(none)".
inline std::string EventDetail(const SimResult& r, const std::string& name, std::string_view kind) {
  for (const auto& e : r.run.events) {
    if (r.run.jobs[e.job].name == name && e.kind == kind) return e.detail;
  }
  return "(none)";
}

}  // namespace dlsched::sim::testing
