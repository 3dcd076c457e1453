#pragma once

// Liveness properties of a whole run, checked on generated workloads by
// src/dlsched/sim/liveness_test.cc (CI) and bench/liveness_bench.cc (a
// sweep of 100,000 runs). Test-only code.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/engine/engine.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::testing {

// One generated case: a homogeneous cluster and a `dlsched generate`
// workload whose arrivals are scaled to offer `load`.
struct LivenessCase {
  uint64_t seed = 1;
  int jobs = 50;
  double load = 1;  // offered load (sim::OfferedLoad)
  int nodes = 2;
  int gpus_per_node = 8;
  double elastic_fraction = 0.2;
  bool delays = false;  // launch and checkpoint delays drawn per job
  std::string Describe() const;
};

// The case of `seed`: jobs log-uniform in [min_jobs, max_jobs], load in
// [0.3, 2], nodes log-uniform in [2, 64] with 4 or 8 GPUs, an elastic
// fraction of 0.2, 0.5 or 1, and delays half of the time.
LivenessCase DrawCase(uint64_t seed, int min_jobs, int max_jobs);

struct CaseInput {
  core::ClusterSpec cluster;
  config::WorkloadSpec workload;
};
core::Result<CaseInput> BuildCase(const LivenessCase& c);

// The built-in profiles to run: each by its name, `static-n` as static-2.
std::vector<std::string> BuiltinProfileRuns();

// Whether `job` alone starts on the empty cluster under `engine`.
bool CanEverStart(const core::ClusterSpec& cluster, const core::JobSpec& job,
                  const engine::Engine& engine);

// The bound on a job's scale events in a run (docs/architecture.md,
// "Liveness"): 2 + 2 x the arrivals and completions of other jobs while it
// was in the system (between its submission and its own end).
std::vector<int> ScaleEventBounds(const sim::SimResult& run);

struct LivenessStats {
  int max_scale_events = 0;  // of any job
  double max_bound_use = 0;  // max over jobs of scale events / bound
};

// Counts the resizes of each job at each instant, from the plans of a run
// (SimOptions::on_plan), so the run needs no timeline.
class ResizeCounter {
 public:
  void Hook(sim::SimOptions& options);
  // (job, time) of every resize of a job already resized at that instant.
  const std::vector<std::pair<int32_t, core::Time>>& Twice() const { return twice_; }

 private:
  core::Time now_ = -1;
  std::vector<int32_t> resized_now_;  // jobs resized at now_
  std::vector<std::pair<int32_t, core::Time>> twice_;
};

// The violations of `run` (of `input` under `engine`), one line each:
//   - a job that could start alone on the empty cluster did not complete
//     (under per-pod admission: unless the run says it deadlocked and the
//     job is stuck in that deadlock, not a livelock);
//   - a job was resized twice at one instant;
//   - a job's scale events exceed ScaleEventBounds.
// `resizes` counted them during the run.
std::vector<std::string> CheckLiveness(const CaseInput& input, const engine::Engine& engine,
                                       const sim::SimResult& run, const ResizeCounter& resizes,
                                       LivenessStats* stats = nullptr);

}  // namespace dlsched::testing
