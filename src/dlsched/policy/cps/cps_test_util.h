#pragma once

// Test data for the combined-priority experiments (docs/experiments.md), shared
// by the policy unit tests and the simulation tests (header only).

#include <array>
#include <string>
#include <vector>

#include "core/builders.h"
#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/policy/cps/order_cps.h"

namespace dlsched::policy::testing {

// A job whose user priority is carried by its namespace "u<user>" (see
// CpsUserWeights), with `ps` PS and `workers` workers of `cores` cpu and
// `mem_gib` memory each, no GPU. It trains 100 steps at 1 step/s whatever
// its size, so every job runs for 100 s once started.
inline core::JobSpec CpsJob(int number, int user, core::PriorityClass priority,
                            double max_wait_minutes, int ps, int workers, int64_t cores = 1,
                            int64_t mem_gib = 1) {
  const core::Resources each = dlsched::testing::Res(cores * 1000, dlsched::testing::GiB(mem_gib));
  return dlsched::testing::JobBuilder("job" + std::to_string(number))
      .Namespace("u" + std::to_string(user))
      .Priority(priority)
      .MaxWait(max_wait_minutes)
      .Ps(ps, each)
      .Workers(workers)
      .WorkerResources(each)
      .Steps(100, {{1, 1.0}});
}

// Namespace "u<n>" has user priority n, n = 1..10.
inline void AddCpsUserWeights(CpsParams* p) {
  for (int u = 1; u <= 10; ++u) p->namespace_weights["u" + std::to_string(u)] = u;
}

// The parameter table of the CPS paper's scenarios
// (docs/policies/cps-volcano-affinity.md).
//   row 1 user priority 5 5 5 5 5         row 2 user priority 9 7 5 3 1
//   row 3 normal x5                       row 4 normal normal high high low
//   row 5 parallelism 6 6 6 6 6           row 6 parallelism 8 6 4 3 2
//   row 7 max wait 20 x5                  row 8 max wait 20 30 40 50 60
// S1 rows 1,4,5,7; S2 rows 1,3,5,8; S3 rows 1,3,6,7; S4 rows 2,3,6,7.
// One PS per job (the table does not say), 1 cpu / 1 GiB per task.
inline std::vector<core::JobSpec> CpsScenarioJobs(int scenario) {
  using P = core::PriorityClass;
  constexpr std::array<int, 5> kUsersFlat = {5, 5, 5, 5, 5}, kUsersRanked = {9, 7, 5, 3, 1};
  constexpr std::array<P, 5> kNormal = {P::kNormal, P::kNormal, P::kNormal, P::kNormal, P::kNormal},
                             kMixed = {P::kNormal, P::kNormal, P::kHigh, P::kHigh, P::kLow};
  constexpr std::array<int, 5> kParFlat = {6, 6, 6, 6, 6}, kParRanked = {8, 6, 4, 3, 2};
  constexpr std::array<double, 5> kWaitFlat = {20, 20, 20, 20, 20},
                                  kWaitRanked = {20, 30, 40, 50, 60};
  const auto& users = scenario == 4 ? kUsersRanked : kUsersFlat;
  const auto& prio = scenario == 1 ? kMixed : kNormal;
  const auto& par = scenario >= 3 ? kParRanked : kParFlat;
  const auto& wait = scenario == 2 ? kWaitRanked : kWaitFlat;
  std::vector<core::JobSpec> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(CpsJob(i + 1, users[i], prio[i], wait[i], 1, par[i]));
  return jobs;
}

// The group-scheduling case: jobs 1-4 are 2 PS + 4 workers, job 5 is 2 PS +
// 6 workers, every task 2 cpu / 2 GiB; user priority 1 3 5 7 9; priority
// high high normal normal low; max wait 60 50 40 30 20 minutes.
inline std::vector<core::JobSpec> CpsGroupJobs() {
  using P = core::PriorityClass;
  const int users[] = {1, 3, 5, 7, 9};
  const P prio[] = {P::kHigh, P::kHigh, P::kNormal, P::kNormal, P::kLow};
  const double wait[] = {60, 50, 40, 30, 20};
  std::vector<core::JobSpec> jobs;
  for (int i = 0; i < 5; ++i) {
    jobs.push_back(CpsJob(i + 1, users[i], prio[i], wait[i], 2, i == 4 ? 6 : 4, 2, 2));
  }
  return jobs;
}

// Its cluster: 3 VMs, one the control plane, so 2 worker nodes of 8 cpu /
// 16 GiB.
inline core::ClusterSpec CpsGroupCluster() {
  return dlsched::testing::Nodes(2, 8, 16, 0, "worker-");
}

}  // namespace dlsched::policy::testing
