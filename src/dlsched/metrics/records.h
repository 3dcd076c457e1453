#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlsched/core/lifecycle.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"

namespace dlsched::metrics {

// What happened to one job in a run (filled by the backend).
struct JobRecord {
  std::string name;
  std::string namespace_name;
  core::Time submit = 0;
  core::Time first_start = core::kNever;  // first allocation (entered Launching)
  core::Time completion = core::kNever;   // Completed or Failed time
  core::JobPhase final_phase = core::JobPhase::kSubmitted;
  int64_t admission_seq = -1;  // order of first start across the run (0, 1, ...)
  // The three add up to the JCT (or, for a job not finished, to the time
  // from its submission to the run's end); docs/formats.md has a worked
  // timeline of each case.
  // Waiting for resources: from submission to the first start, and from
  // every stop (preemption, a lost task) to the relaunch (Waiting,
  // Starving, Standby).
  core::Time queueing = 0;
  // Launch and relaunch delays, and the checkpoints a job stops for
  // (Launching, Checkpointing, Stopping).
  core::Time launching = 0;
  core::Time running = 0;  // making progress: RunningProtected + Running
  int reallocations = 0;   // allocation changes after the first start
  int preemptions = 0;     // times the job was stopped or shrunk for another job
  int scale_events = 0;    // scale-in plus scale-out steps applied to it
  int final_workers = 0;
  // GPUs the job asks for at its requested size (every PS and Chief
  // replica and `replicas` workers), whatever it ran with.
  int64_t gpus = 0;
  // The most nodes, and network switches (nodes' dlsched.io/switch
  // labels), its tasks spanned at once; 0 if it never started.
  int max_nodes = 0;
  int max_switches = 0;
  // GPU-seconds of training it lost to stops and restarts: each checkpoint
  // it stopped for (GPUs held x checkpointDelay), each relaunch (GPUs x
  // launchDelay), and what it ran since its last checkpoint when it lost a
  // task (docs/formats.md, "Work lost").
  double lost_gpu_seconds = 0;
  // Time the job would need alone with its best allocation (total steps /
  // best throughput); 0 when unknown. Used for slowdown and fairness.
  core::Time ideal_runtime = 0;
  // Its JCT with its queue alone on the queue's nominal quota (the
  // simulator's `alone` runs); 0 when unknown: not asked for, no declared
  // queue, or it did not complete there. Used for finish-time fairness.
  core::Time alone_jct = 0;
  bool stuck = false;  // never finished because the run deadlocked
  std::string reason;  // last wait reason, or why it failed
  std::string queue;   // its declared queue; "" for none
};

// A team's queue, as the per-queue figures need it (QueueSummary).
struct QueueInfo {
  std::string name;
  std::string cohort;  // "" for none
  int64_t nominal_gpus = 0;
  // What of its nominal GPUs its cohort may borrow (nominal - what it
  // keeps); 0 without a cohort.
  int64_t lendable_gpus = 0;
};

// Allocated and effective (held by jobs making progress) amount of each
// resource, as a step function of time: each sample holds until the next.
struct UtilizationSample {
  core::Time time = 0;
  core::Resources allocated;
  core::Resources effective;
};

// One row of a run's timeline (events.csv): a decision about a job or a
// change of its phase, in the order they happened.
struct JobEvent {
  core::Time time = 0;
  int32_t job = -1;       // index into RunInput::jobs
  std::string_view kind;  // "submitted", "waiting", ... (static text)
  int workers = -1;       // its workers after the event; -1: does not apply
  int32_t by = -1;        // index into RunInput::jobs of the job that caused it, or -1
  std::string detail;
};

// What a job held on a node, over a maximal interval of constant holding
// (allocations.csv).
struct Allocation {
  int32_t node = -1;  // index into RunInput::nodes
  int32_t job = -1;   // index into RunInput::jobs
  core::Time start = 0;
  core::Time end = core::kNever;  // kNever: still held when the run ended
  int tasks = 0;
  int64_t gpus = 0;
};

struct RunInput {
  std::string profile;
  core::Resources capacity;  // cluster capacity per resource
  std::vector<JobRecord> jobs;
  std::vector<UtilizationSample> utilization;  // ascending time
  std::vector<JobEvent> events;                // ascending time
  std::vector<std::string> nodes;              // node names, for `allocations`
  std::vector<Allocation> allocations;         // by start time
  core::Time end_time = 0;                     // time of the last event
  bool deadlocked = false;
  // The run was stopped before its end (Ctrl-C): jobs not final then are
  // unfinished, not stuck.
  bool partial = false;
  int64_t cycles = 0;  // scheduling cycles run
  // The cluster's declared queues (empty: none), in the cluster file's order.
  std::vector<QueueInfo> queues;
};

}  // namespace dlsched::metrics
