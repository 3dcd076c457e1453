#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dlsched/core/lifecycle.h"
#include "dlsched/core/time.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/plan.h"
#include "dlsched/engine/pod_queue.h"
#include "dlsched/engine/profile.h"

namespace dlsched::engine {

// Timers the life cycle asks its backend for.
enum class TimerKind : uint8_t {
  kLaunchDone,      // Launching -> RunningProtected / Running
  kProtectEnd,      // RunningProtected -> Running
  kCheckpointDone,  // Checkpointing -> Stopping -> Standby (-> Launching)
  kTaintEviction,   // a NoExecute taint's tolerationSeconds may have run out
};

// One row of a job's timeline: a decision about it or a change of its
// phase (the simulator's events.csv, docs/formats.md).
enum class TimelineKind : uint8_t {
  kSubmitted,
  kWaiting,  // a wait reason that differs in words from the last one
  kStarted,  // first launch, on its nodes
  kRunning,
  kResized,
  kCheckpointing,
  kStopping,
  kStandby,
  kRelaunching,  // a later launch (after a reallocation or a preemption)
  kPreempted,    // stopped as a whole for another job
  kStarving,
  kCompleted,
  kFailed,
  kRestarted,  // lost tasks: back to its last checkpoint
  kLevel,      // a shown field of its record changed (RecordField::shown: its queue)
};
std::string_view TimelineKindName(TimelineKind kind);  // "submitted", ...

struct TimelineEvent {
  core::Time time = 0;
  JobIndex job = -1;
  TimelineKind kind = TimelineKind::kSubmitted;
  int workers = -1;  // its workers after the event; -1 when it does not apply
  JobIndex by = -1;  // the job that caused it (a preemption, a scale-in), or -1
  std::string detail;
};

// What a backend does for the life cycle: the simulator acts it out on its
// event queue, the Kubernetes operator on the API server. The life cycle has
// already updated the ClusterState (the cache) when it calls these.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual core::Time Now() const = 0;
  // Calls JobLifecycle::OnTimer(kind, j, epoch) at time `at` (>= Now()).
  virtual void SetTimer(core::Time at, TimerKind kind, JobIndex j, uint64_t epoch) = 0;
  // Runs task `t` on node `n` (creating its pod if it has none). The task
  // is assumed in the cache: the backend confirms it (ClusterState::
  // ConfirmTask) once bound, or calls JobLifecycle::BindFailed.
  virtual void Bind(TaskRef t, NodeIndex n) = 0;
  // Stops task `t` (deletes its pod; also called for a task lost with its
  // node or to an eviction, whose pod may be gone already). The cache holds
  // its resources as releasing until the backend calls
  // ClusterState::TaskGone(t).
  virtual void Unbind(TaskRef t, NodeIndex n) = 0;
  // Task `t` was taken off its job, which checkpoints before it lets the
  // task go (a kResize with `hold`): the cache holds its resources as
  // releasing, its pod keeps running, and Unbind follows when the job's
  // checkpoint is done (or the job ends or loses its tasks first).
  virtual void Held(TaskRef t, NodeIndex n) {
    (void)t;
    (void)n;
  }
  // Creates task `t` unbound, to be placed on its own (a pending pod of the
  // per-pod queue), and deletes such a task that was never placed.
  virtual void CreateTask(TaskRef t) = 0;
  virtual void DeleteTask(TaskRef t) = 0;
  // The job's rate of progress may have changed (it started or stopped
  // running, or its placement changed while running). The simulator
  // recomputes its speed; a real cluster needs nothing.
  virtual void OnProgressChange(JobIndex j) = 0;
  // Job `j` moved from phase `from` to its current phase.
  virtual void OnPhase(JobIndex j, core::JobPhase from) {
    (void)j;
    (void)from;
  }
  // A row of the timeline, when WantsTimeline (its text is worded only
  // then).
  virtual bool WantsTimeline() const { return false; }
  virtual void OnTimeline(TimelineEvent event) { (void)event; }
};

struct LifecycleOptions {
  // RunningProtected lasts protect_factor x the last launch (Profile).
  double protect_factor = 0;
  // Only relaunches are protected; a first launch goes straight to Running.
  bool protect_relaunch_only = false;
  // Hand-over at checkpoints: a job started (or relaunched) with room taken
  // from other jobs (a kStop or a restarting kResize whose `by` is the job)
  // launches only once their checkpoints are done, as a preempting pod
  // waits for its victims' pods to terminate; its Launching phase covers
  // the wait. False: it launches at once.
  bool hand_over_after_checkpoint = false;
  TaskLossPolicy task_loss = TaskLossPolicy::kRestart;
  // Per-pod backoff, as kube-scheduler: initial, doubling up to max.
  core::Time backoff_initial = 1;
  core::Time backoff_max = 10;
};

// When an adopted job (JobLifecycle::Adopt) entered its phases.
struct AdoptTimes {
  std::optional<core::Time> since;        // entered its phase (default: now)
  std::optional<core::Time> first_start;  // first launch (default: since)
  core::Time last_launch = 0;             // seconds its last launch took
};

// The life cycle of one job beyond what the engine reads: its phase
// history and what it went through.
struct JobHistory {
  core::PhaseClock clock;
  uint64_t epoch = 0;  // bumps when a pending timer becomes stale
  core::Time launch_started = 0;
  bool relaunch = false;  // its current or last launch is not its first
  // Tasks it gave up that keep their pods (and the cache their room) until
  // its checkpoint is done: a kResize with `hold`.
  std::vector<std::pair<TaskRef, NodeIndex>> held;
  int64_t admission_seq = -1;  // order of first start, -1 before
  int reallocations = 0;       // relaunches after a checkpoint or a loss
  int preemptions = 0;         // stopped or shrunk for another job
  int scale_events = 0;        // resizes
  int task_losses = 0;         // times it lost tasks to a node or an eviction
  // The most nodes, and network switches (ClusterState::SpanOf), its tasks
  // spanned at any launch or in-place resize.
  int max_nodes = 0;
  int max_switches = 0;
  // Failures of its tasks counted against its backoff limit: those that
  // restarted it, disruptions excepted (JobLifecycle::TaskFailed).
  int failures = 0;
  // When a pending kTaintEviction timer fires, or kNever.
  core::Time taint_check = core::kNever;
  double checkpointed_steps = 0;     // progress at its last checkpoint
  double checkpointed_attained = 0;  // JobState::attained at its last checkpoint
  // GPU-seconds of training it lost to stops and restarts: each checkpoint
  // it stopped for (the GPUs it held then x its checkpointDelay), each
  // relaunch (the GPUs it relaunched on x its launchDelay), and the
  // GPU-seconds it ran since its last checkpoint when it lost a task.
  double lost_gpu_seconds = 0;
  // GPUs it held when this plan began, for the checkpoint a stop or a
  // restarting resize in it makes it pay for (-1: none pending).
  int64_t gpus_before_stop = -1;
  // Its launch begins no earlier than this: the end of the checkpoints of
  // the jobs that gave it room (hand_over_after_checkpoint).
  core::Time hand_over_until = 0;
  // The jobs whose checkpoints it waits for, as "a, b".
  std::string hand_over_from;
  std::string reason;  // of the last decision about it
  // The last wait reason on its timeline (a reason that changes only in
  // its digits, its counts, is not a new row).
  std::string timeline_wait;
};

// Applies the engine's Plans and drives every job through its life cycle
// (docs/formats.md, "Phases and figures") against a Backend, keeping the
// ClusterState (the cache) and the counts of preemptions and scale events. One
// of these serves the simulator and the operator alike, so a policy means the
// same on both.
//
//   Submitted -> Waiting -> (Starving) -> Launching -> RunningProtected -> Running
//   Running -> Checkpointing -> Stopping -> Standby -> Launching   (reallocation, Stop)
//   any placed phase -> Stopping -> Standby      (a task lost; restart from checkpoint)
//   Running/RunningProtected -> Completed; any -> Failed
class JobLifecycle {
 public:
  JobLifecycle(ClusterState& state, Backend& backend, const LifecycleOptions& options);

  // Per-pod admission: the life cycle keeps a queue of pods (tasks
  // created unbound) instead of placing gangs.
  void UsePodQueue(bool on) { pod_queue_ = on; }
  // That queue, which the engine's cycles read.
  const PodQueue& pods() const { return pods_; }
  // Forgets the queued pods of job `j` (its pods are gone with it).
  void ForgetPods(JobIndex j) {
    pods_.DropIf([j](const PendingPod& p) { return p.task.job == j; });
  }

  // Jobs added to the state after construction (ClusterState::AddJob).
  void JobsAdded();
  // Submitted -> Waiting; under per-pod admission their pods are created,
  // interleaved over the jobs arriving together as concurrent controllers do.
  void Arrive(std::span<const JobIndex> jobs);
  // Applies a cycle's plan: binds and unbinds first, then the job actions.
  void Apply(const Plan& plan);
  // A timer set through Backend::SetTimer fired.
  void OnTimer(TimerKind kind, JobIndex j, uint64_t epoch);
  // The job's work is done (the backend saw its workers succeed).
  void Complete(JobIndex j);
  // The job fails with `reason` (deadline, an error of the backend).
  void Fail(JobIndex j, std::string reason);
  // The backend stops a running job as a whole (a suspension): it keeps
  // its tasks' pods while it checkpoints, then lets them go and waits in
  // Standby (Checkpointing -> Stopping -> Standby), its progress that of
  // the checkpoint. Not a running job: nothing.
  void Suspend(JobIndex j, std::string reason);
  // A bind the backend could not make: the task leaves its node, and the
  // job goes back to wait for all of its gang (nothing else of it runs).
  void BindFailed(TaskRef t, std::string_view why);
  // Tasks gone without the job giving them up; their jobs follow the
  // task-loss policy.
  void TasksLost(std::span<const TaskRef> tasks, std::string_view why);
  // Task `t` failed (`why`: its pod and how, for the reason). Under its
  // role's restart policy the job either restarts from its last checkpoint
  // (TasksLost), counting the failure against its backoff limit unless it
  // was a disruption, or fails: a permanent failure, or one past the limit.
  // No effect on a task not placed.
  void TaskFailed(TaskRef t, const core::TaskFailure& failure, std::string_view why);
  // A backend that adopts a job gives what it had kept of its history: the
  // failures counted against its backoff limit, the reason last given and
  // the steps of its last checkpoint (at most its steps done), where a
  // loss takes it back to.
  void Restore(JobIndex j, int failures, std::string reason, double checkpointed_steps) {
    JobsAdded();
    jobs_[j].failures = failures;
    jobs_[j].reason = std::move(reason);
    jobs_[j].checkpointed_steps = std::clamp(checkpointed_steps, 0.0, state_.Job(j).steps_done);
  }
  // Node `n` is gone (failed or removed) with its tasks.
  void NodeRemoved(NodeIndex n, std::string_view why);
  // Node `n` changed (ClusterState::UpdateNode done): tasks that do not
  // tolerate a NoExecute taint it now has are evicted (TasksLost); those
  // that tolerate it for a while (tolerationSeconds; 300 s for the
  // not-ready and unreachable taints unless a toleration says otherwise:
  // core::NoExecuteGrace) are evicted once that much time has passed since
  // the taint appeared, on a kTaintEviction timer.
  void NodeUpdated(NodeIndex n);

  // A job a backend finds already running or finished when it starts (an
  // operator restarted): its tasks are already placed in the state
  // (ClusterState::PlaceTask) for kRunning. It enters `phase` (kRunning,
  // kCompleted or kFailed) through valid transitions, with no timer and no
  // backend call; `admission_seq` (>= 0, or -1 if unknown) keeps the order
  // jobs first started in.
  //
  // A replay of a snapshot also adopts kLaunching, kRunningProtected and
  // kCheckpointing (a timer ends them: the launch delay, the profile's
  // protection after `times.last_launch`, the checkpoint delay; tasks
  // placed are where the job relaunches), and gives the times each phase
  // began.
  void Adopt(JobIndex j, core::JobPhase phase, int64_t admission_seq, const AdoptTimes& times = {});

  // Task `t`, placed in the state, was given up by its job, which holds it
  // until its checkpoint is done (a replay of a snapshot taken while a job
  // checkpoints: running.held). No backend call.
  void Hold(TaskRef t);

  const JobHistory& History(JobIndex j) const { return jobs_[j]; }
  // Jobs neither Completed nor Failed.
  int Unfinished() const { return unfinished_; }
  // Tasks held until their job's checkpoint is done (JobHistory::held),
  // over every job: the releasing tasks a simulation may have.
  int NumHeld() const { return num_held_; }
  // Per-pod queue, as kube-scheduler's: a pod that failed is parked (its
  // PendingPod::tried_epoch is the ClusterState::RoomEpoch() of the cycle
  // that tried it) until room is freed or a node changes, the events
  // kube's NodeResourcesFit and node filters queue a pod again on; an
  // arrival, a bind or a start cannot help it. Once unparked it is tried
  // when its backoff has expired.
  // True when some pending pod is not parked.
  bool AnyPodUntried() const;
  // When the next unparked pod's backoff completes after `now` (at the
  // next whole second: kube flushes its backoff queue once a second), or
  // kNever.
  core::Time NextPodRetry(core::Time now) const;
  // Something outside the plan changed what fits where (a node came,
  // went or changed): every parked pod deserves another try.
  void ClusterChanged() { state_.NoteRoomChanged(); }

 private:
  void Enter(JobIndex j, core::JobPhase to);
  // Sends a timeline row to the backend if it wants one; `detail` is worded
  // only then.
  template <typename Detail>
  void Emit(JobIndex j, TimelineKind kind, int workers, JobIndex by, Detail&& detail) {
    if (!backend_.WantsTimeline()) return;
    backend_.OnTimeline(TimelineEvent{backend_.Now(), j, kind, workers, by, detail()});
  }
  void Emit(JobIndex j, TimelineKind kind, int workers = -1) {
    Emit(j, kind, workers, -1, [] { return std::string(); });
  }
  // "node-0 (2) node-1 (1)": the tasks the job holds on each node.
  std::string Placement(JobIndex j) const;
  void StartLaunch(JobIndex j, std::string_view reason);
  void FinishLaunch(JobIndex j);
  void Checkpoint(JobIndex j);
  // GPUs job `j`'s pods hold: its placed tasks and those it holds until
  // its checkpoint is done.
  int64_t HeldGpus(JobIndex j) const;
  // Brings jobs_[j].max_nodes and max_switches up to date with where it is.
  void NoteSpan(JobIndex j);
  // Before the plan's placements: what each job it stops or restarts holds,
  // and (hand_over_after_checkpoint) whose checkpoints each job given room
  // waits for.
  void NoteStops(const Plan& plan, core::Time now);
  void Release(JobIndex j);
  // Lets the tasks job `j` held until its checkpoint go (Backend::Unbind).
  void LetGo(JobIndex j);
  void Unplace(TaskRef t);
  void Restart(JobIndex j, std::string reason);
  void CreatePods(std::span<const JobIndex> jobs);
  // Apply's parts: the plan's binds and unbinds, then each job-level
  // action in order, then the bound pods out of the queue.
  void ApplyPlacements(const Plan& plan);
  void ApplyJobAction(const Action& a, core::Time now, uint64_t room_epoch, size_t* pod_cursor);
  void SetRecord(JobIndex j, const RecordField& field, double value);
  void StampLaunch(JobIndex j, core::Time at);
  // A pod's failed try (kBackoff): its backoff doubles; `pod_cursor` walks
  // the queue forward, as backoffs come in queue order.
  void BackOff(const Action& a, core::Time now, uint64_t room_epoch, size_t* pod_cursor);
  void DropBoundPods(const Plan& plan);
  // Evicts those of `tasks` whose NoExecute taints' grace has run out, and
  // asks for a timer when the next one will.
  void CheckTaints(std::span<const TaskRef> tasks);

  ClusterState& state_;
  Backend& backend_;
  LifecycleOptions options_;
  bool pod_queue_ = false;
  PodQueue pods_;
  std::vector<JobHistory> jobs_;
  int64_t next_admission_ = 0;
  int unfinished_ = 0;
  int num_held_ = 0;
  // Each node's NoExecute taints and when each appeared (NodeUpdated).
  std::unordered_map<NodeIndex, std::vector<std::pair<core::Taint, core::Time>>> no_execute_;
};

}  // namespace dlsched::engine
