#pragma once

#include <span>
#include <string>
#include <vector>

#include "dlsched/core/job.h"

namespace dlsched::policy {

// The F-scheduling allocation (docs/policies/fsched.md) as a pure function of
// plain numbers, so it can be tested (and reasoned about) without a cluster.
//
// Units: a job grows by whole workers; a worker costs `gpus_per_worker` GPUs
// and the job's PS/Chief replicas cost `fixed_gpus` while it holds anything.
// F-scheduling counts "GPUs (or workers)"; with one GPU per worker the two
// agree.

// One job as the allocation sees it.
struct FschedJob {
  const core::ThroughputProfile* throughput = nullptr;  // f(n), n = workers; never null
  int min_workers = 1;
  int max_workers = 1;
  int gpus_per_worker = 1;  // >= 1 for a job that is not frozen
  int fixed_gpus = 0;       // GPUs of the PS and Chief replicas
  // Workers the job holds now; 0 = it waits for its first allocation.
  int current_workers = 0;
  // Frozen (Standby, Launching, RunningProtected, Checkpointing, Stopping, or
  // anything the caller will not resize): it keeps current_workers, its GPUs
  // are not part of FschedInput::free_gpus, and its slowdown still counts in
  // the variance when it holds workers.
  bool frozen = false;
  // Heterogeneity-aware (FschedInput::types not empty): the GPU type (an
  // index into types) the job holds its GPUs on; -1 for a job that waits
  // (the allocation picks its type) or holds GPUs on none of them.
  int type = -1;
};

struct FschedInput {
  std::span<const FschedJob> jobs;  // in arrival order (earlier first)
  // GPUs the jobs that are not frozen share: idle GPUs plus those the
  // non-frozen jobs hold now.
  int free_gpus = 0;
  // Every GPU of the cluster: f_best of a job is the max of f(n) over the n
  // it could use if it had the whole cluster.
  int cluster_gpus = 0;
  double v_bound = 0.5;
  // Heterogeneity-aware allocation (empty: every GPU alike). A worker on a
  // GPU of type A is worth its throughput on A: f(n) of a job is its
  // ThroughputProfile::RateOn(types[type], n), f_best the best over the
  // types (each up to its own GPUs), and each type is a pool of its own:
  // `type_free` GPUs per type (as free_gpus, which is then unused),
  // `type_gpus` the type's GPUs (as cluster_gpus). A job grows on the type
  // it holds; a waiting job gets its minimum on the type where its minimum
  // runs fastest among those with room for it (ties: the lower index).
  std::span<const std::string> types;
  std::span<const int> type_free;
  std::span<const int> type_gpus;
};

// One candidate plan of a greedy step: job `job` with one more worker.
struct FschedCandidate {
  int job = -1;
  int workers = 0;           // the job's workers in this candidate
  double variance = 0;       // of the slowdowns with this candidate
  double throughput = 0;     // total steps/s with this candidate
  bool under_bound = false;  // variance < v_bound
};

// One greedy step (one worker handed out), for tests and diagnostics.
struct FschedStep {
  int gpus_left = 0;                        // before this step
  std::vector<FschedCandidate> candidates;  // in job order
  int chosen = -1;                          // index into candidates
  bool smallest_variance = false;           // no candidate was under the bound
};

struct FschedAllocation {
  std::vector<int> workers;      // target per job; 0 = waits (or holds nothing)
  std::vector<double> best;      // f_best per job
  std::vector<double> slowdown;  // f(workers) / f_best per job (0 if it holds nothing)
  double throughput = 0;         // sum of f(workers) over all jobs, frozen included
  double variance = 0;           // population variance of the slowdowns of jobs holding workers
  int gpus_left = 0;             // GPUs of free_gpus (aware: of every type) nobody took
  // For a job that waits (not frozen, held nothing, got nothing): the GPUs
  // left when its turn came in step 1 (aware: the most left on one type);
  // -1 for every other job.
  std::vector<int> left_at_turn;
  // Aware: the type of each job (FschedJob::type, or the one picked for a
  // waiting job that got its minimum); empty otherwise.
  std::vector<int> type;
};

// Step 1: every job that is not frozen and already holds workers keeps at
// least its minimum (a reallocation never stops a running job); then, in
// arrival order, each waiting job gets its minimum if it fits in the GPUs
// left. A waiting job that does not fit waits, and later smaller jobs may
// still take their minimum (backfill, as the Gang admission of the profile).
// Step 2: while GPUs are left, one candidate per admitted, non-frozen job
// below max_workers whose next worker fits; among candidates with variance <
// v_bound the one with the largest total throughput, else the one with the
// smallest variance; ties go to the earlier job. Stops when no job can grow.
// `trace`, when given, receives every greedy step.
FschedAllocation AllocateFsched(const FschedInput& input, std::vector<FschedStep>* trace = nullptr);

// Population variance of `values` (0 for an empty span).
double PopulationVariance(std::span<const double> values);

}  // namespace dlsched::policy
