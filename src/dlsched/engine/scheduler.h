#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/core/node.h"
#include "dlsched/core/time.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/lifecycle.h"
#include "dlsched/engine/memos.h"
#include "dlsched/engine/plan.h"

namespace dlsched::engine {

struct SchedulerOptions {
  // Per-pod backoff, as kube-scheduler's: initial, doubling up to max.
  core::Time backoff_initial = 1;
  core::Time backoff_max = 10;
};

// The scheduler loop, once for both backends: what happens in a cycle,
// and everything between a backend's world and the pure engine.
//
//   the backend's news at time t (the simulator: its event queue; the
//   operator: its informers and timers), told here:
//     nodes and other owners' pods -> AddNode, UpdateNode, RemoveNode,
//                                     ForeignPodBound, ForeignPodGone, PodGone
//     jobs                         -> AddJob, Arrive, OnTimer, Complete, Fail,
//                                     TasksLost, TaskFailed, BindFailed, RemoveJob;
//                                     Place / Adopt for a job found running
//   Cycle(t):
//     1. the progress of running jobs brought to t, when the profile's
//        order or sizer reads it (the estimate below)
//     2. Engine::Cycle(state, t): a Plan; pure, no clock, no I/O
//     3. JobLifecycle::Apply(plan): binds, unbinds and job actions, acted
//        out through the Backend (which sets timers for the life cycle)
//     4. the time the plan asked to be looked at again (RevisitAt)
//   when to cycle without news: RevisitAt, and the per-pod queue's next
//   backoff expiry (PodsUntried, NextPodRetry); Due / NextWakeup combine them
//
// Progress is estimated the same way for both backends: a running job
// trains at ClusterState::PlacedRate (its throughput table at the placed
// workers, times the locality factor), so steps done and attained
// GPU-seconds are exact at any time (Advance). The backend reprices a job
// when the life cycle says its progress changed (Backend::OnProgressChange).
class Scheduler {
 public:
  Scheduler(const core::ClusterSpec& cluster, const Engine& engine, Backend& backend,
            const SchedulerOptions& options = {});

  const Engine& engine() const { return engine_; }
  const ClusterState& state() const { return state_; }
  // For what a backend restores of a job (its progress as last written).
  ClusterState& MutableState() { return state_; }
  const JobLifecycle& lifecycle() const { return lifecycle_; }
  const JobHistory& History(JobIndex j) const;
  // Jobs neither Completed nor Failed.
  int Unfinished() const;

  // --- Nodes and pods of other owners.
  // A node came: pending pods deserve a new try.
  NodeIndex AddNode(const core::NodeSpec& spec);
  // A node changed: tasks that do not tolerate a NoExecute taint it now
  // has are evicted.
  void UpdateNode(NodeIndex n, const core::NodeSpec& spec);
  // A node is gone (`why`: "removed", "failed") with its tasks.
  void RemoveNode(NodeIndex n, std::string_view why);
  // Something outside the plan changed what fits where: every parked pod
  // deserves another try.
  void ClusterChanged();
  // A pod dlsched does not own holds `request` on node `n` (`scoring`: its
  // requests as scorers count them; `device`: its GPU share's device, or -1).
  void ForeignPodBound(std::string_view key, NodeIndex n, const core::Resources& request,
                       const core::Resources& scoring, int device = -1);
  // ... and it is gone.
  void ForeignPodGone(std::string_view key);
  // The pod of a released task is gone: its room is free, news that
  // parked pods deserve another try.
  void PodGone(TaskRef t);

  // --- What a backend reports while it acts (Backend::Bind, Unbind).
  // Task `t`, assumed, is bound (ClusterState::ConfirmTask).
  void BindDone(TaskRef t);
  // Task `t`'s pod is gone as it was unbound (ClusterState::TaskGone).
  void TaskGone(TaskRef t);

  // --- Jobs.
  void ReserveJobs(size_t n);
  JobIndex AddJob(const core::JobSpec* spec, core::Time now);
  // Jobs added since the last call enter the life cycle (Submitted).
  void JobsAdded();
  // Submitted -> Waiting.
  void Arrive(std::span<const JobIndex> jobs);
  // A timer set through Backend::SetTimer is due.
  void OnTimer(TimerKind kind, JobIndex j, uint64_t epoch);
  // The job's work is done (its workers succeeded).
  void Complete(JobIndex j);
  // ... as the progress estimate says at `now` (the simulator): its steps
  // are all done, then Complete.
  void Finished(JobIndex j, core::Time now);
  void Fail(JobIndex j, std::string reason);
  // The backend stops a running job to Standby (JobLifecycle::Suspend).
  void Suspend(JobIndex j, std::string reason);
  // Tasks gone without their job giving them up (a pod deleted, evicted).
  void TasksLost(std::span<const TaskRef> tasks, std::string_view why);
  // A task failed: its job restarts or fails by its restart policy and
  // backoff limit (JobLifecycle::TaskFailed).
  void TaskFailed(TaskRef t, const core::TaskFailure& failure, std::string_view why) {
    lifecycle_.TaskFailed(t, failure, why);
  }
  // A job found with `failures` already counted against its backoff limit,
  // `reason` as its last reason and its last checkpoint at
  // `checkpointed_steps` (JobLifecycle::Restore).
  void Restore(JobIndex j, int failures, std::string reason, double checkpointed_steps) {
    lifecycle_.Restore(j, failures, std::move(reason), checkpointed_steps);
  }
  // A bind the backend could not make.
  void BindFailed(TaskRef t, std::string_view why);
  // The job's object was deleted: it fails and leaves the cache.
  void RemoveJob(JobIndex j, std::string reason);
  // A job found running (an operator restarted, a snapshot replayed): its
  // task `t` is on node `n` (`held`: given up and kept until the job's
  // checkpoint is done) ...
  void Place(TaskRef t, NodeIndex n, bool held = false, int device = -1);
  // ... and the job enters `phase` (JobLifecycle::Adopt); a running one
  // trains from now on at its placement's rate (Backend::OnProgressChange).
  void Adopt(JobIndex j, core::JobPhase phase, int64_t admission_seq, const AdoptTimes& times = {});

  // --- The progress estimate.
  // Steps done and GPU-seconds attained by job `j` up to `now`.
  void Advance(JobIndex j, core::Time now);
  // Advance, then the job's rate from its phase and placement: returns it
  // (steps/s; 0 unless it runs).
  double Reprice(JobIndex j, core::Time now);
  double Rate(JobIndex j) const;
  // Jobs training now (a positive rate).
  int NumTraining() const;

  // --- The cycle.
  Plan Cycle(core::Time now, const CycleOptions& options);
  // When the last plan asked for a cycle (a job's level in its order
  // changes), or kNever.
  core::Time RevisitAt() const;
  // Per-pod queue: a pending pod is not parked (JobLifecycle::AnyPodUntried) ...
  bool PodsUntried() const;
  // ... and the next unparked pod's backoff expiry after `now`, or kNever.
  core::Time NextPodRetry(core::Time now) const;
  // A cycle is due at `now` without news: the plan's revisit time has come,
  // or an unparked pod has no backoff left.
  bool Due(core::Time now) const;
  // The next time after `now` a cycle is wanted without news, or kNever.
  core::Time NextWakeup(core::Time now) const;

 private:
  struct Progress {
    double rate = 0;    // steps/s while running
    int64_t gpus = 0;   // GPUs held while it trains (JobState::attained)
    core::Time at = 0;  // steps_done is exact at this time
  };

  const Engine& engine_;
  Backend& backend_;
  ClusterState state_;
  JobLifecycle lifecycle_;
  // What the engine remembers between this scheduler's cycles.
  Memos memos_;
  std::vector<Progress> progress_;
  int training_ = 0;
  bool reads_progress_ = false;
  core::Time revisit_at_ = core::kNever;
};

}  // namespace dlsched::engine
