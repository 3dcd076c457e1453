#include "dlsched/engine/lifecycle.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "dlsched/core/affinity.h"
#include "dlsched/engine/placement.h"

namespace dlsched::engine {

using core::JobPhase;

std::string_view TimelineKindName(TimelineKind kind) {
  // In TimelineKind's order.
  static constexpr std::string_view kNames[] = {
      "submitted",     "waiting",   "started", "running",     "resized",
      "checkpointing", "stopping",  "standby", "relaunching", "preempted",
      "starving",      "completed", "failed",  "restarted",   "level"};
  static_assert(std::size(kNames) == static_cast<size_t>(TimelineKind::kLevel) + 1);
  return kNames[static_cast<size_t>(kind)];
}

std::string JobLifecycle::Placement(JobIndex j) const {
  std::vector<std::pair<NodeIndex, int>> on;
  for (const NodeIndex n : state_.Job(j).task_node) {
    if (n == kNoNode) continue;
    auto it = std::find_if(on.begin(), on.end(), [n](const auto& p) { return p.first == n; });
    if (it == on.end()) {
      on.emplace_back(n, 1);
    } else {
      ++it->second;
    }
  }
  std::sort(on.begin(), on.end());
  std::string out;
  for (const auto& [n, tasks] : on) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{} ({})", state_.NodeName(n), tasks);
  }
  return out;
}

JobLifecycle::JobLifecycle(ClusterState& state, Backend& backend, const LifecycleOptions& options)
    : state_(state), backend_(backend), options_(options) {
  JobsAdded();
}

void JobLifecycle::JobsAdded() {
  // All at once when many were added (a simulation's workload), doubling
  // when a few were (the operator's jobs, one at a time).
  const auto n = static_cast<size_t>(state_.NumJobs());
  if (n > jobs_.capacity()) jobs_.reserve(std::max(n, 2 * jobs_.capacity()));
  for (auto j = static_cast<JobIndex>(jobs_.size()); j < state_.NumJobs(); ++j) {
    JobHistory& h = jobs_.emplace_back();
    h.checkpointed_steps = state_.Job(j).spec->steps_done;
    h.checkpointed_attained = state_.Job(j).attained;
    if (!core::IsFinal(state_.Job(j).phase)) ++unfinished_;
  }
}

void JobLifecycle::Enter(JobIndex j, JobPhase to) {
  const JobPhase from = state_.Job(j).phase;
  if (!jobs_[j].clock.Enter(to, backend_.Now())) return;
  state_.SetPhase(j, to, backend_.Now());
  if (core::IsFinal(to)) --unfinished_;
  backend_.OnPhase(j, from);
  const int workers = state_.Job(j).placed_workers;
  switch (to) {
    case JobPhase::kRunningProtected:
      Emit(j, TimelineKind::kRunning, workers, -1, [&] {
        return fmt::format("protected for {:g} s",
                           options_.protect_factor * state_.Job(j).last_launch);
      });
      break;
    case JobPhase::kRunning:
      if (from == JobPhase::kLaunching) Emit(j, TimelineKind::kRunning, workers);
      break;
    case JobPhase::kCheckpointing:
      Emit(j, TimelineKind::kCheckpointing, workers);
      break;
    case JobPhase::kStopping:
      Emit(j, TimelineKind::kStopping, workers);
      break;
    case JobPhase::kStandby:
      Emit(j, TimelineKind::kStandby, workers);
      break;
    case JobPhase::kStarving:
      Emit(j, TimelineKind::kStarving);
      break;
    case JobPhase::kCompleted:
      Emit(j, TimelineKind::kCompleted, 0);
      break;
    case JobPhase::kFailed:
      Emit(j, TimelineKind::kFailed, 0, -1, [&] { return jobs_[j].reason; });
      break;
    default:
      break;
  }
}

void JobLifecycle::Adopt(JobIndex j, JobPhase phase, int64_t admission_seq,
                         const AdoptTimes& times) {
  JobsAdded();
  JobHistory& h = jobs_[j];
  const core::Time now = backend_.Now();
  const core::Time since = times.since ? *times.since : now;
  const core::Time first = times.first_start ? *times.first_start : since;
  // Waiting (some pods bound), or the phases a started job went through.
  std::vector<std::pair<JobPhase, core::Time>> path = {{JobPhase::kWaiting, first}};
  if (phase == JobPhase::kFailed || phase == JobPhase::kWaiting) {
    path.front().second = since;
  } else {
    path.push_back({JobPhase::kLaunching, first});
    if (phase != JobPhase::kLaunching && phase != JobPhase::kRunningProtected) {
      path.push_back({JobPhase::kRunning, since});
    }
  }
  if (path.back().first != phase) path.push_back({phase, since});
  for (const auto& [p, at] : path) h.clock.Enter(p, at);
  if (!core::IsFinal(state_.Job(j).phase) && core::IsFinal(phase)) --unfinished_;
  state_.SetPhase(j, phase, since);
  JobState& js = state_.MutableJob(j);
  if (core::IsRunning(phase) || phase == JobPhase::kLaunching ||
      phase == JobPhase::kCheckpointing) {
    // (A checkpointing job relaunches on its placement.)
    js.target_workers = js.placed_workers;
    js.last_launch = times.last_launch;
    StampLaunch(j, first);
  }
  if (admission_seq >= 0) {
    h.admission_seq = admission_seq;
    next_admission_ = std::max(next_admission_, admission_seq + 1);
  }
  // What is still to come of the phase: the rest of its launch, or of its
  // protection under this life cycle's protect factor (none: Running).
  ++h.epoch;
  h.relaunch = first < since;
  if (phase == JobPhase::kLaunching) {
    h.launch_started = since;
    const core::Time end = since + js.spec->launch_delay;
    if (end > now) {
      backend_.SetTimer(end, TimerKind::kLaunchDone, j, h.epoch);
    } else {
      FinishLaunch(j);
    }
  } else if (phase == JobPhase::kCheckpointing) {
    backend_.SetTimer(std::max(now, since + js.spec->checkpoint_delay), TimerKind::kCheckpointDone,
                      j, h.epoch);
  } else if (phase == JobPhase::kRunningProtected) {
    const core::Time end = since + options_.protect_factor * js.last_launch;
    if (end > now) {
      backend_.SetTimer(end, TimerKind::kProtectEnd, j, h.epoch);
    } else {
      Enter(j, JobPhase::kRunning);
    }
  }
}

void JobLifecycle::Hold(TaskRef t) {
  JobsAdded();
  const NodeIndex n = state_.Job(t.job).NodeOf(t.role, t.index);
  if (n == kNoNode) return;
  state_.ReleaseTask(t);
  jobs_[t.job].held.emplace_back(t, n);
  ++num_held_;
}

void JobLifecycle::Arrive(std::span<const JobIndex> jobs) {
  for (const JobIndex j : jobs) {
    Emit(j, TimelineKind::kSubmitted);
    Enter(j, JobPhase::kWaiting);
  }
  if (pod_queue_) CreatePods(jobs);
}

void JobLifecycle::CreatePods(std::span<const JobIndex> jobs) {
  std::vector<std::vector<TaskRef>> per_job;
  size_t longest = 0;
  for (const JobIndex j : jobs) {
    std::vector<TaskRef> tasks;
    GangSlots(state_, j, state_.Job(j).target_workers, &tasks);
    longest = std::max(longest, tasks.size());
    per_job.push_back(std::move(tasks));
  }
  const core::Time now = backend_.Now();
  for (size_t i = 0; i < longest; ++i) {
    for (const auto& tasks : per_job) {
      if (i >= tasks.size()) continue;
      pods_.Add(tasks[i], now);
      backend_.CreateTask(tasks[i]);
    }
  }
}

namespace {

// The same text but for its digits (the timeline's wait rows are worth a
// row only when the reason changes in words, not in counts).
bool SameButNumbers(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && !(digit(a[i]) && digit(b[i]))) return false;
  }
  return true;
}

}  // namespace

void JobLifecycle::StartLaunch(JobIndex j, std::string_view reason) {
  JobHistory& h = jobs_[j];
  const bool first = h.clock.FirstEntered(JobPhase::kLaunching) == core::kNever;
  const core::Time now = backend_.Now();
  // Hand-over: the pods it replaces save their checkpoints first.
  const core::Time wait = std::max(0.0, h.hand_over_until - now);
  h.hand_over_until = 0;
  Enter(j, JobPhase::kLaunching);
  h.timeline_wait.clear();  // a wait after this one is news again
  Emit(j, first ? TimelineKind::kStarted : TimelineKind::kRelaunching, state_.Job(j).target_workers,
       -1, [&] {
         return wait > 0 ? fmt::format("{} on {}; its launch waits {:g} s for the checkpoint of {}",
                                       reason, Placement(j), wait, h.hand_over_from)
                         : fmt::format("{} on {}", reason, Placement(j));
       });
  h.hand_over_from.clear();
  NoteSpan(j);
  h.launch_started = now;
  h.relaunch = !first;
  StampLaunch(j, h.launch_started);
  ++h.epoch;
  const core::Time launch_delay = state_.Job(j).spec->launch_delay;
  if (!first) h.lost_gpu_seconds += static_cast<double>(HeldGpus(j)) * launch_delay;
  const core::Time delay = launch_delay + wait;
  if (delay > 0) {
    backend_.SetTimer(now + delay, TimerKind::kLaunchDone, j, h.epoch);
  } else {
    FinishLaunch(j);
  }
}

void JobLifecycle::FinishLaunch(JobIndex j) {
  JobHistory& h = jobs_[j];
  const core::Time now = backend_.Now();
  state_.MutableJob(j).last_launch = now - h.launch_started;
  state_.MutableJob(j).launch_attained +=
      static_cast<double>(state_.Held(j)[core::kGpu]) * state_.Job(j).last_launch;
  // Protection keeps a job that just paid for a launch from being resized
  // again before the launch paid off; RelaunchOnly spares first launches.
  const core::Time protect = options_.protect_relaunch_only && !h.relaunch
                                 ? 0
                                 : options_.protect_factor * state_.Job(j).last_launch;
  if (protect > 0) {
    Enter(j, JobPhase::kRunningProtected);
    backend_.SetTimer(now + protect, TimerKind::kProtectEnd, j, h.epoch);
  } else {
    Enter(j, JobPhase::kRunning);
  }
  backend_.OnProgressChange(j);
}

void JobLifecycle::NoteSpan(JobIndex j) {
  const ClusterState::Span span = state_.SpanOf(j);
  jobs_[j].max_nodes = std::max(jobs_[j].max_nodes, span.nodes);
  jobs_[j].max_switches = std::max(jobs_[j].max_switches, span.switches);
}

int64_t JobLifecycle::HeldGpus(JobIndex j) const {
  int64_t gpus = state_.Held(j)[core::kGpu];
  for (const auto& [t, n] : jobs_[j].held) gpus += state_.Request(t)[core::kGpu];
  return gpus;
}

void JobLifecycle::NoteStops(const Plan& plan, core::Time now) {
  for (const Action& a : plan.actions) {
    if (a.kind != ActionKind::kStop && !(a.kind == ActionKind::kResize && a.restart)) continue;
    const JobIndex j = a.task.job;
    jobs_[j].gpus_before_stop = HeldGpus(j);
    if (!options_.hand_over_after_checkpoint || a.by < 0) continue;
    const core::Time delay = state_.Job(j).spec->checkpoint_delay;
    if (delay <= 0) continue;
    JobHistory& to = jobs_[a.by];
    // Names left from a hand-over that never led to a launch are stale.
    if (to.hand_over_until < now) to.hand_over_from.clear();
    to.hand_over_until = std::max(to.hand_over_until, now + delay);
    to.hand_over_from += (to.hand_over_from.empty() ? "" : ", ") + state_.Job(j).spec->name;
  }
}

// Running -> Checkpointing; progress stops (steps so far are kept).
void JobLifecycle::Checkpoint(JobIndex j) {
  JobHistory& h = jobs_[j];
  const int64_t gpus = h.gpus_before_stop >= 0 ? h.gpus_before_stop : HeldGpus(j);
  h.gpus_before_stop = -1;
  h.lost_gpu_seconds += static_cast<double>(gpus) * state_.Job(j).spec->checkpoint_delay;
  ++h.epoch;
  Enter(j, JobPhase::kCheckpointing);
  backend_.OnProgressChange(j);
  backend_.SetTimer(backend_.Now() + state_.Job(j).spec->checkpoint_delay,
                    TimerKind::kCheckpointDone, j, h.epoch);
}

void JobLifecycle::Unplace(TaskRef t) {
  const NodeIndex n = state_.Job(t.job).NodeOf(t.role, t.index);
  state_.ReleaseTask(t);
  backend_.Unbind(t, n);
}

void JobLifecycle::LetGo(JobIndex j) {
  JobHistory& h = jobs_[j];
  num_held_ -= static_cast<int>(h.held.size());
  for (const auto& [t, n] : std::exchange(h.held, {})) backend_.Unbind(t, n);
}

void JobLifecycle::Release(JobIndex j) {
  // Freed resources (ClusterState::RoomEpoch) unpark every pending pod.
  LetGo(j);
  const JobState& js = state_.Job(j);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] != kNoNode) Unplace(js.TaskAt(j, s));
  }
  pods_.DropIf([&](const PendingPod& p) {
    if (p.task.job != j) return false;
    backend_.DeleteTask(p.task);
    return true;
  });
}

void JobLifecycle::OnTimer(TimerKind kind, JobIndex j, uint64_t epoch) {
  if (kind == TimerKind::kTaintEviction) {
    // Whatever the job did since: its placed tasks are looked at afresh.
    if (jobs_[j].taint_check <= backend_.Now()) jobs_[j].taint_check = core::kNever;
    const JobState& js = state_.Job(j);
    std::vector<TaskRef> placed;
    for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
      if (js.task_node[s] != kNoNode) placed.push_back(js.TaskAt(j, s));
    }
    CheckTaints(placed);
    return;
  }
  if (epoch != jobs_[j].epoch) return;
  const JobPhase phase = state_.Job(j).phase;
  switch (kind) {
    case TimerKind::kLaunchDone:
      if (phase == JobPhase::kLaunching) FinishLaunch(j);
      break;
    case TimerKind::kProtectEnd:
      if (phase == JobPhase::kRunningProtected) Enter(j, JobPhase::kRunning);
      break;
    case TimerKind::kTaintEviction:
      break;
    case TimerKind::kCheckpointDone:
      if (phase != JobPhase::kCheckpointing) return;
      jobs_[j].checkpointed_steps = state_.Job(j).steps_done;
      jobs_[j].checkpointed_attained = state_.Job(j).attained;
      Enter(j, JobPhase::kStopping);
      // The workers it gave up took part in the checkpoint; now they go,
      // and their room with them (to whoever the next cycle gives it).
      LetGo(j);
      Enter(j, JobPhase::kStandby);
      // A reallocated job holds its new allocation and relaunches at once;
      // a preempted one (nothing placed) waits in Standby to be admitted.
      if (state_.Job(j).placed_tasks > 0) {
        StartLaunch(j, fmt::format("relaunching with {} workers", state_.Job(j).target_workers));
      }
      break;
  }
}

void JobLifecycle::Complete(JobIndex j) {
  if (!core::IsRunning(state_.Job(j).phase)) return;
  ++jobs_[j].epoch;
  Enter(j, JobPhase::kCompleted);
  backend_.OnProgressChange(j);
  Release(j);
}

void JobLifecycle::Fail(JobIndex j, std::string reason) {
  if (core::IsFinal(state_.Job(j).phase)) return;
  ++jobs_[j].epoch;
  jobs_[j].reason = std::move(reason);
  state_.BumpReason(j);
  Enter(j, JobPhase::kFailed);
  backend_.OnProgressChange(j);
  Release(j);
}

void JobLifecycle::Suspend(JobIndex j, std::string reason) {
  if (!core::IsRunning(state_.Job(j).phase)) return;
  JobHistory& h = jobs_[j];
  h.reason = std::move(reason);
  state_.BumpReason(j);
  const JobState& js = state_.Job(j);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    const NodeIndex n = js.task_node[s];
    if (n == kNoNode) continue;
    const TaskRef t = js.TaskAt(j, s);
    state_.ReleaseTask(t);
    backend_.Held(t, n);
    h.held.emplace_back(t, n);
    ++num_held_;
  }
  Checkpoint(j);
}

void JobLifecycle::Apply(const Plan& plan) {
  const core::Time now = backend_.Now();
  NoteStops(plan, now);
  ApplyPlacements(plan);
  size_t pod_cursor = 0;
  for (const Action& a : plan.actions) ApplyJobAction(a, now, plan.room_epoch, &pod_cursor);
  DropBoundPods(plan);
}

void JobLifecycle::ApplyPlacements(const Plan& plan) {
  // Jobs that keep the workers they give up until their checkpoint is done.
  std::vector<JobIndex> holding;
  for (const Action& a : plan.actions) {
    if (a.kind == ActionKind::kResize && a.restart && a.hold) holding.push_back(a.task.job);
  }
  for (const Action& a : plan.actions) {
    if (a.kind == ActionKind::kBind) {
      state_.AssumeTask(a.task, a.node, a.device);
      backend_.Bind(a.task, a.node);
    } else if (a.kind == ActionKind::kUnbind) {
      if (std::find(holding.begin(), holding.end(), a.task.job) == holding.end()) {
        Unplace(a.task);
        continue;
      }
      const NodeIndex n = state_.Job(a.task.job).NodeOf(a.task.role, a.task.index);
      state_.ReleaseTask(a.task);
      backend_.Held(a.task, n);
      jobs_[a.task.job].held.emplace_back(a.task, n);
      ++num_held_;
    }
  }
}

void JobLifecycle::ApplyJobAction(const Action& a, core::Time now, uint64_t room_epoch,
                                  size_t* pod_cursor) {
  const JobIndex j = a.task.job;
  JobHistory& h = jobs_[j];
  switch (a.kind) {
    case ActionKind::kBind:
    case ActionKind::kUnbind:
      break;
    case ActionKind::kStart: {
      JobState& js = state_.MutableJob(j);
      js.target_workers = a.workers;
      js.sized_at = now;
      if (h.admission_seq < 0) h.admission_seq = next_admission_++;
      if (js.phase == JobPhase::kStandby) ++h.reallocations;
      h.reason = a.reason;
      state_.BumpReason(j);
      StartLaunch(j, a.reason);
      break;
    }
    case ActionKind::kResize:
      Emit(j, TimelineKind::kResized, a.workers, a.by, [&] {
        return fmt::format("{} -> {}: {}", state_.Job(j).target_workers, a.workers, a.reason);
      });
      state_.MutableJob(j).target_workers = a.workers;
      state_.MutableJob(j).sized_at = now;
      ++h.scale_events;
      if (a.preempted) ++h.preemptions;
      h.reason = a.reason;
      state_.BumpReason(j);
      if (a.restart) {
        ++h.reallocations;
        Checkpoint(j);
      } else {
        NoteSpan(j);
        backend_.OnProgressChange(j);
      }
      break;
    case ActionKind::kStop:
      Emit(j, TimelineKind::kPreempted, 0, a.by, [&] { return a.reason; });
      ++h.preemptions;
      h.reason = a.reason;
      state_.BumpReason(j);
      Checkpoint(j);
      break;
    case ActionKind::kWait:
      h.reason = a.reason;
      if (backend_.WantsTimeline() && !SameButNumbers(a.reason, h.timeline_wait)) {
        h.timeline_wait = a.reason;
        Emit(j, TimelineKind::kWaiting, -1, -1, [&] { return a.reason; });
      }
      break;
    case ActionKind::kStarve:
      if (state_.Job(j).phase == JobPhase::kWaiting) Enter(j, JobPhase::kStarving);
      break;
    case ActionKind::kSetRecord:
      SetRecord(j, *a.field, a.value);
      break;
    case ActionKind::kBackoff:
      BackOff(a, now, room_epoch, pod_cursor);
      break;
  }
}

void JobLifecycle::SetRecord(JobIndex j, const RecordField& field, double value) {
  const double was = state_.Record(j, field);
  if (!state_.SetRecord(j, field, value) || value == was || field.shown.empty()) return;
  Emit(j, TimelineKind::kLevel, -1, -1, [&] { return fmt::format("{} {}", field.shown, value); });
}

// The fields of job `j`'s record stamped at its launch (RecordField::
// stamped_at_launch) that are not set yet: set to `at`.
void JobLifecycle::StampLaunch(JobIndex j, core::Time at) {
  for (const RecordField* f : state_.RecordFields()) {
    if (f->stamped_at_launch && state_.Record(j, *f) == core::kNever) state_.SetRecord(j, *f, at);
  }
}

void JobLifecycle::BackOff(const Action& a, core::Time now, uint64_t room_epoch,
                           size_t* pod_cursor) {
  // Backoffs come in queue order: one forward walk finds them all. (It
  // counts in a local: a long queue of parked pods is walked here.)
  const size_t n = pods_.size();
  size_t i = *pod_cursor;
  for (; i < n; ++i) {
    PendingPod& pod = pods_.At(i);
    if (pod.task != a.task) continue;
    const core::Time delay =
        std::min(options_.backoff_max, options_.backoff_initial * std::pow(2.0, pod.attempts));
    ++pod.attempts;
    pod.not_before = now + delay;
    // Parked until room is freed after the cycle that tried it.
    pod.tried_epoch = room_epoch;
    pod.last_failure = a.reason;
    pod.unresolvable = a.status == WaitStatus::kUnschedulableUnresolvable;
    break;
  }
  *pod_cursor = i;
}

void JobLifecycle::DropBoundPods(const Plan& plan) {
  // Bound pods leave the queue: only jobs with a bind in the plan have any.
  std::vector<JobIndex> bound;
  for (const Action& a : plan.actions) {
    if (a.kind == ActionKind::kBind) bound.push_back(a.task.job);
  }
  if (bound.empty() || pods_.empty()) return;
  std::sort(bound.begin(), bound.end());
  pods_.DropIf([&](const PendingPod& p) {
    return std::binary_search(bound.begin(), bound.end(), p.task.job) &&
           state_.Job(p.task.job).NodeOf(p.task.role, p.task.index) != kNoNode;
  });
}

void JobLifecycle::BindFailed(TaskRef t, std::string_view why) {
  if (!state_.IsAssumed(t)) return;
  state_.ForgetTask(t);
  const JobIndex j = t.job;
  if (pod_queue_ && state_.Job(j).IsPending()) {
    // One pod of a job still gathering its pods: back to the queue.
    pods_.Add(t, backend_.Now());
    return;
  }
  Restart(j, fmt::format("binding {}[{}] failed: {}", core::RoleName(t.role), t.index, why));
}

void JobLifecycle::Restart(JobIndex j, std::string reason) {
  JobHistory& h = jobs_[j];
  if (core::IsFinal(state_.Job(j).phase)) return;
  if (options_.task_loss == TaskLossPolicy::kFail) {
    Fail(j, std::move(reason));
    return;
  }
  h.reason = std::move(reason);
  state_.BumpReason(j);
  Emit(j, TimelineKind::kRestarted, -1, -1, [&] { return h.reason; });
  const JobPhase phase = state_.Job(j).phase;
  if (InPendingPhase(phase)) {
    // Not started yet: it simply waits for its gang again.
    Release(j);
    if (pod_queue_) CreatePods(std::span<const JobIndex>(&j, 1));
    return;
  }
  ++h.epoch;
  Enter(j, JobPhase::kStopping);
  backend_.OnProgressChange(j);
  // Back to the last checkpoint: what was trained since is lost.
  state_.MutableJob(j).steps_done = h.checkpointed_steps;
  h.lost_gpu_seconds += std::max(0.0, state_.Job(j).attained - h.checkpointed_attained);
  h.checkpointed_attained = state_.Job(j).attained;
  Release(j);
  Enter(j, JobPhase::kStandby);
  if (pod_queue_) CreatePods(std::span<const JobIndex>(&j, 1));
}

void JobLifecycle::TasksLost(std::span<const TaskRef> tasks, std::string_view why) {
  std::vector<JobIndex> jobs;
  for (const TaskRef& t : tasks) {
    if (state_.Job(t.job).NodeOf(t.role, t.index) == kNoNode) continue;
    // Its pod is gone or going (evicted): releasing until the backend
    // says it is gone, or until its node is removed from the cache.
    Unplace(t);
    if (std::find(jobs.begin(), jobs.end(), t.job) == jobs.end()) jobs.push_back(t.job);
  }
  for (const JobIndex j : jobs) {
    ++jobs_[j].task_losses;
    const JobState& js = state_.Job(j);
    if (pod_queue_ && js.IsPending()) {
      // Pods of a job still gathering them go back to the queue, as a
      // controller recreates a deleted pod.
      for (const TaskRef& t : tasks) {
        if (t.job == j) pods_.Add(t, backend_.Now());
      }
      continue;
    }
    Restart(j, fmt::format("lost tasks: {}", why));
  }
}

void JobLifecycle::TaskFailed(TaskRef t, const core::TaskFailure& failure, std::string_view why) {
  const JobIndex j = t.job;
  const JobState& js = state_.Job(j);
  if (core::IsFinal(js.phase) || js.NodeOf(t.role, t.index) == kNoNode) return;
  const core::JobSpec& spec = *js.spec;
  const core::RestartPolicy policy = spec.role(t.role).restart_policy;
  if (!core::FailureRestarts(policy, failure)) {
    Fail(j, policy == core::RestartPolicy::kExitCode
                ? fmt::format("{}; restartPolicy ExitCode retries exit codes 130, 137, 138 and "
                              "143 only",
                              why)
                : fmt::format("{}; restartPolicy Never", why));
    return;
  }
  if (!failure.disruption) {
    JobHistory& h = jobs_[j];
    if (spec.backoff_limit && h.failures >= *spec.backoff_limit) {
      Fail(j, fmt::format("{}; backoffLimit {} reached", why, *spec.backoff_limit));
      return;
    }
    ++h.failures;
  }
  TasksLost(std::span<const TaskRef>(&t, 1), why);
}

void JobLifecycle::NodeRemoved(NodeIndex n, std::string_view why) {
  // Held tasks there go with the node (its releasing tasks leave the cache).
  for (JobHistory& h : jobs_) {
    num_held_ -=
        static_cast<int>(std::erase_if(h.held, [n](const auto& held) { return held.second == n; }));
  }
  const std::vector<TaskRef> lost = state_.TasksOn(n);
  no_execute_.erase(n);
  TasksLost(lost, fmt::format("node {} {}", state_.NodeName(n), why));
  state_.RemoveNode(n);
}

void JobLifecycle::NodeUpdated(NodeIndex n) {
  state_.NoteRoomChanged();
  // Its NoExecute taints, each with when it appeared (kept while it stays).
  const core::Time now = backend_.Now();
  std::vector<std::pair<core::Taint, core::Time>> taints;
  auto& known = no_execute_[n];
  for (const core::Taint& taint : state_.NodeSpecOf(n).taints) {
    if (taint.effect != core::TaintEffect::kNoExecute) continue;
    auto it =
        std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.first == taint; });
    taints.emplace_back(taint, it == known.end() ? now : it->second);
  }
  known = std::move(taints);
  if (known.empty()) {
    no_execute_.erase(n);
    return;
  }
  CheckTaints(state_.TasksOn(n));
}

void JobLifecycle::CheckTaints(std::span<const TaskRef> tasks) {
  const core::Time now = backend_.Now();
  std::vector<TaskRef> evicted;
  std::string why;
  for (const TaskRef& t : tasks) {
    const NodeIndex n = state_.Job(t.job).NodeOf(t.role, t.index);
    auto it = n == kNoNode ? no_execute_.end() : no_execute_.find(n);
    if (it == no_execute_.end()) continue;
    const auto& tolerations = state_.Job(t.job).spec->role(t.role).constraints.tolerations;
    core::Time at = core::kNever;
    const core::Taint* first = nullptr;
    std::optional<double> grace;
    for (const auto& [taint, since] : it->second) {
      const std::optional<double> g = core::NoExecuteGrace(taint, tolerations);
      if (g && since + *g < at) {
        at = since + *g;
        first = &taint;
        grace = g;
      }
    }
    if (first == nullptr) continue;
    if (at <= now) {
      if (evicted.empty()) {
        why = *grace > 0 ? fmt::format("evicted from node {} by taint {} after {:g} s",
                                       state_.NodeName(n), core::FormatTaint(*first), *grace)
                         : fmt::format("evicted from node {} by taint {}", state_.NodeName(n),
                                       core::FormatTaint(*first));
      }
      evicted.push_back(t);
    } else if (at < jobs_[t.job].taint_check) {
      jobs_[t.job].taint_check = at;
      backend_.SetTimer(at, TimerKind::kTaintEviction, t.job, jobs_[t.job].epoch);
    }
  }
  if (!evicted.empty()) TasksLost(evicted, why);
}

bool JobLifecycle::AnyPodUntried() const { return pods_.AnyUntried(state_.RoomEpoch()); }

core::Time JobLifecycle::NextPodRetry(core::Time now) const {
  return pods_.NextRetry(state_.RoomEpoch(), now);
}

}  // namespace dlsched::engine
