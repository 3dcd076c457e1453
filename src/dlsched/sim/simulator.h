#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/engine/engine.h"
#include "dlsched/metrics/records.h"

namespace dlsched::sim {

struct SimOptions {
  // `dlsched explain`: record every cycle in which this job is considered.
  std::string trace_job;
  // Check the scheduling invariants after every cycle (no node
  // over-committed, gangs all or nothing, workers within [min, max]) and
  // fail the run with the first violation. For property tests.
  bool check_invariants = false;
  // Per-pod backoff, as kube-scheduler: initial, doubling up to max.
  core::Time backoff_initial = 1;
  core::Time backoff_max = 10;
  // Record the run's timeline (RunInput::events) and what each job held on
  // each node over time (RunInput::allocations): events.csv and
  // allocations.csv.
  bool timeline = true;
  // Called with every plan before it is applied (tests, debugging).
  std::function<void(core::Time, const engine::Plan&)> on_plan;
  // Where the run publishes its progress after every cycle, for a display
  // on another thread; nullptr for none.
  struct Progress* progress = nullptr;
  // When it becomes true (Ctrl-C), the run stops after the current cycle
  // and reports what it has, marked partial; jobs not finished then are
  // unfinished, not stuck.
  const std::atomic<bool>* stop = nullptr;
  // Finish-time fairness (Themis): after the run, each declared queue's
  // jobs run again alone, on the same nodes under the same profile with
  // their queue's nominal quota and no cohort (nothing to borrow, no one
  // to lend to), and each job's JCT there is its JobRecord::alone_jct.
  // One more simulation per queue with jobs; not after a stopped run.
  bool alone = false;
};

// A run's progress, written by the simulation and read by anyone.
struct Progress {
  std::atomic<int64_t> jobs_total{0};
  std::atomic<int64_t> jobs_finished{0};  // Completed or Failed
  std::atomic<double> now{0};             // simulated seconds
  std::atomic<bool> done{false};
};

struct SimResult {
  metrics::RunInput run;
  std::vector<engine::JobTrace> traces;  // of options.trace_job
};

// Replays `workload` on `cluster` under `engine`'s profile: a discrete-event
// simulation where progress between events is computed analytically
// (remaining steps / rate), so the result is exact and deterministic.
// Never hangs: when nothing can change any more (deadlock under per-pod
// scheduling, or jobs that can never fit), the run ends and reports the jobs
// left as stuck. The workload's throughput profiles must be resolved.
core::Result<SimResult> Simulate(const core::ClusterSpec& cluster,
                                 const config::WorkloadSpec& workload, const engine::Engine& engine,
                                 const SimOptions& options);

// Whether a run of `workload` on `cluster` can begin, as Simulate checks it
// before its first cycle (CheckRunnable; every job placed at the start on a
// node that exists and has room for it), without running a cycle: what
// `dlsched snapshot` asks of the files it writes.
core::Status CheckStart(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
                        const engine::Engine& engine);

// Fails when a job's throughput table is missing or gives rate 0 at the
// job's minimum size (it could never finish).
core::Status CheckRunnable(const config::WorkloadSpec& workload);
// Every job names a queue the cluster declares (or "default", the queue of
// a job that names none, which runs without quota unless declared); nothing
// to check when the cluster declares no queues.
core::Status CheckQueues(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload);

// Fills in the model-zoo throughput tables of a parsed workload and checks
// that every job can run (CheckRunnable); an unknown model is an error
// naming the job's field.
core::Status ResolveWorkload(config::WorkloadSpec& workload);

// Loads a workload and resolves it (ResolveWorkload).
core::Result<config::WorkloadSpec> LoadWorkload(const std::string& path);

}  // namespace dlsched::sim
