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
  // Jobs whose workers ask for a GPU share (sim::GenerateOptions), on
  // nodes that take shares when above 0.
  double shared_fraction = 0;
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

// The profile files of `source_dir`/examples (profile-*.yaml), by path,
// sorted: the liveness and property tests run them as they run the
// built-in profiles, so a profile added there is checked as they are.
std::vector<std::string> ExampleProfileRuns(const std::string& source_dir);

// Whether `job` alone starts on the empty cluster under `engine`.
bool CanEverStart(const core::ClusterSpec& cluster, const core::JobSpec& job,
                  const engine::Engine& engine);

// The gain a reallocation of running jobs must bring under `profile`'s
// sizer (F-scheduling's minGain, steps/s), or 0 for a profile whose sizer
// has no such rule.
double GainRuleOf(const std::string& profile);

struct LivenessStats {
  int max_scale_events = 0;    // of any job
  double max_bound_use = 0;    // max over jobs of scale events / bound
  double max_stretch_use = 0;  // max over stretches of quiet resize instants / bound
};

// Counts the resizes of each job at each instant, from the plans of a run
// (SimOptions::on_plan), so the run needs no timeline.
class ResizeCounter {
 public:
  void Hook(sim::SimOptions& options);
  // (job, time) of every resize of a job already resized at that instant.
  const std::vector<std::pair<int32_t, core::Time>>& Twice() const { return twice_; }
  // Every instant at which some job was resized, in time order.
  const std::vector<core::Time>& Instants() const { return instants_; }

 private:
  core::Time now_ = -1;
  std::vector<int32_t> resized_now_;  // jobs resized at now_
  std::vector<std::pair<int32_t, core::Time>> twice_;
  std::vector<core::Time> instants_;
};

// The bound on each job's scale events in a run (docs/architecture.md,
// "Liveness"): 2 + 2 x the arrivals and completions of other jobs while it
// was in the system (between its submission and its own end); under a
// sizer with a gain rule (min_gain > 0), plus the quiet instants (no
// arrival, no completion) at which some job was resized while it was in
// the system, whose number CheckLiveness bounds per stretch.
std::vector<int> ScaleEventBounds(const sim::SimResult& run, const ResizeCounter& resizes,
                                  double min_gain);

// The violations of `run` (of `input` under `engine`), one line each:
//   - a job that could start alone on the empty cluster did not complete
//     (under per-pod admission: unless the run says it deadlocked and the
//     job is stuck in that deadlock, not a livelock);
//   - a job was resized twice at one instant;
//   - a job's scale events exceed ScaleEventBounds;
//   - under a gain rule (min_gain > 0): between two consecutive arrivals or
//     completions (a stretch, in which the same n jobs are in the system),
//     more than 2 (n + 1) (1 + ceil(F / min_gain)) quiet instants with a
//     resize, F being the sum of those jobs' best throughputs. Each
//     reallocation either gives workers to a job that held none (at most n:
//     F-scheduling never shrinks a running job to nothing) or raises the
//     total throughput by min_gain, and the total never exceeds F; an
//     admission may lower it, so at most 1 + ceil(F / min_gain) gains
//     between two admissions; and a decision shows at two instants at most
//     (the shrink, then at the checkpoint's end the growth it pays for).
// `resizes` counted them during the run.
std::vector<std::string> CheckLiveness(const CaseInput& input, const engine::Engine& engine,
                                       const sim::SimResult& run, const ResizeCounter& resizes,
                                       double min_gain, LivenessStats* stats = nullptr);

}  // namespace dlsched::testing
