#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dlsched/policy/framework/registry.h"
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

// Job `name`'s timeline, one "<time> <event>[ <workers>][ by <job>]" a row,
// in order (events.csv without the detail).
inline std::vector<std::string> Timeline(const SimResult& r, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& e : r.run.events) {
    if (r.run.jobs[e.job].name != name) continue;
    std::string row = fmt::format("{:g} {}", e.time, e.kind);
    if (e.workers >= 0) row += fmt::format(" {}", e.workers);
    if (e.by >= 0) row += " by " + r.run.jobs[e.by].name;
    out.push_back(std::move(row));
  }
  return out;
}

// The detail of job `name`'s first `kind` event, or "(none)".
inline std::string EventDetail(const SimResult& r, const std::string& name, std::string_view kind) {
  for (const auto& e : r.run.events) {
    if (r.run.jobs[e.job].name == name && e.kind == kind) return e.detail;
  }
  return "(none)";
}

// Workers of `milli_cpu` / `mem_gib` / 1 GPU, no PS, elastic in [min, max],
// f(n) = n steps/s up to max (or f(min) = min only, for a fixed job).
inline core::JobSpec GpuJob(std::string name, double arrival, int min, int max, int64_t milli_cpu,
                            int64_t mem_gib, double steps) {
  core::JobSpec j;
  j.name = std::move(name);
  j.submit_time = arrival;
  auto& w = j.role(core::Role::kWorker);
  w.replicas = w.min_replicas = min;
  w.max_replicas = max;
  w.resources[core::kCpu] = milli_cpu;
  w.resources[core::kMemory] = mem_gib << 30;
  w.resources[core::kGpu] = 1;
  for (int n = min; n <= max; ++n) j.throughput.steps_per_s[n] = n;
  j.total_steps = steps;
  return j;
}

}  // namespace dlsched::sim::testing
