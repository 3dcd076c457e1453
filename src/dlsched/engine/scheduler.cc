#include "dlsched/engine/scheduler.h"

#include <algorithm>

namespace dlsched::engine {
namespace {

LifecycleOptions LifecycleOptionsOf(const Profile& profile, const SchedulerOptions& options) {
  LifecycleOptions o;
  o.protect_factor = profile.protect_factor;
  o.protect_relaunch_only = profile.protect_relaunch_only;
  o.hand_over_after_checkpoint = profile.hand_over_after_checkpoint;
  o.task_loss = profile.task_loss;
  o.backoff_initial = options.backoff_initial;
  o.backoff_max = options.backoff_max;
  return o;
}

}  // namespace

Scheduler::Scheduler(const core::ClusterSpec& cluster, const Engine& engine, Backend& backend,
                     const SchedulerOptions& options)
    : engine_(engine),
      backend_(backend),
      state_(cluster),
      lifecycle_(state_, backend, LifecycleOptionsOf(engine.profile(), options)),
      reads_progress_(engine.profile().order->ReadsProgress() ||
                      engine.profile().sizer->ReadsProgress()) {
  lifecycle_.UsePodQueue(engine.profile().admission->UsesPodQueue());
  state_.UseRecordFields(engine.profile().RecordFields());
}

const JobHistory& Scheduler::History(JobIndex j) const { return lifecycle_.History(j); }

int Scheduler::Unfinished() const { return lifecycle_.Unfinished(); }

void Scheduler::ClusterChanged() { lifecycle_.ClusterChanged(); }

NodeIndex Scheduler::AddNode(const core::NodeSpec& spec) {
  const NodeIndex n = state_.AddNode(spec);
  lifecycle_.ClusterChanged();
  return n;
}

void Scheduler::UpdateNode(NodeIndex n, const core::NodeSpec& spec) {
  state_.UpdateNode(n, spec);
  lifecycle_.NodeUpdated(n);
}

void Scheduler::RemoveNode(NodeIndex n, std::string_view why) { lifecycle_.NodeRemoved(n, why); }

void Scheduler::ForeignPodBound(std::string_view key, NodeIndex n, const core::Resources& request,
                                const core::Resources& scoring, int device) {
  state_.AddForeignTask(key, n, request, scoring, device);
}

void Scheduler::ForeignPodGone(std::string_view key) {
  state_.RemoveForeignTask(key);
  lifecycle_.ClusterChanged();
}

void Scheduler::PodGone(TaskRef t) {
  state_.TaskGone(t);
  lifecycle_.ClusterChanged();
}

void Scheduler::BindDone(TaskRef t) { state_.ConfirmTask(t); }

void Scheduler::TaskGone(TaskRef t) { state_.TaskGone(t); }

void Scheduler::ReserveJobs(size_t n) { state_.ReserveJobs(n); }

JobIndex Scheduler::AddJob(const core::JobSpec* spec, core::Time now) {
  const JobIndex j = state_.AddJob(spec, now);
  progress_.resize(static_cast<size_t>(state_.NumJobs()));
  return j;
}

void Scheduler::JobsAdded() { lifecycle_.JobsAdded(); }

void Scheduler::Arrive(std::span<const JobIndex> jobs) { lifecycle_.Arrive(jobs); }

void Scheduler::OnTimer(TimerKind kind, JobIndex j, uint64_t epoch) {
  lifecycle_.OnTimer(kind, j, epoch);
}

void Scheduler::Complete(JobIndex j) { lifecycle_.Complete(j); }

void Scheduler::Finished(JobIndex j, core::Time now) {
  Advance(j, now);
  state_.MutableJob(j).steps_done = state_.Job(j).spec->total_steps;
  lifecycle_.Complete(j);
}

void Scheduler::Fail(JobIndex j, std::string reason) { lifecycle_.Fail(j, std::move(reason)); }

void Scheduler::TasksLost(std::span<const TaskRef> tasks, std::string_view why) {
  lifecycle_.TasksLost(tasks, why);
}

void Scheduler::BindFailed(TaskRef t, std::string_view why) { lifecycle_.BindFailed(t, why); }

void Scheduler::Suspend(JobIndex j, std::string reason) {
  lifecycle_.Suspend(j, std::move(reason));
}

void Scheduler::RemoveJob(JobIndex j, std::string reason) {
  lifecycle_.Fail(j, std::move(reason));
  lifecycle_.ForgetPods(j);
  state_.RemoveJob(j);
}

void Scheduler::Place(TaskRef t, NodeIndex n, bool held, int device) {
  state_.PlaceTask(t, n, device);
  if (held) lifecycle_.Hold(t);
}

void Scheduler::Adopt(JobIndex j, core::JobPhase phase, int64_t admission_seq,
                      const AdoptTimes& times) {
  lifecycle_.Adopt(j, phase, admission_seq, times);
  if (core::IsRunning(state_.Job(j).phase)) backend_.OnProgressChange(j);
}

void Scheduler::Advance(JobIndex j, core::Time now) {
  Progress& p = progress_[j];
  if (p.rate > 0 && now > p.at) {
    JobState& js = state_.MutableJob(j);
    js.steps_done = std::min(js.spec->total_steps, js.steps_done + p.rate * (now - p.at));
    js.attained += static_cast<double>(p.gpus) * (now - p.at);
  }
  p.at = now;
}

double Scheduler::Reprice(JobIndex j, core::Time now) {
  Advance(j, now);
  const JobState& js = state_.Job(j);
  Progress& p = progress_[j];
  const double rate = core::IsRunning(js.phase) ? state_.PlacedRate(j) : 0;
  training_ += (rate > 0) - (p.rate > 0);
  p.rate = rate;
  p.gpus = rate > 0 ? state_.Held(j)[core::kGpu] : 0;
  return rate;
}

double Scheduler::Rate(JobIndex j) const { return progress_[j].rate; }

int Scheduler::NumTraining() const { return training_; }

Plan Scheduler::Cycle(core::Time now, const CycleOptions& options) {
  // An order or a sizer that reads progress sees it as of now.
  if (reads_progress_) {
    for (core::JobPhase p : {core::JobPhase::kRunning, core::JobPhase::kRunningProtected}) {
      for (JobIndex j : state_.JobsInPhase(p)) Advance(j, now);
    }
  }
  Plan plan = engine_.Cycle(state_, lifecycle_.pods(), memos_, now, options);
  revisit_at_ = plan.revisit_at;
  lifecycle_.Apply(plan);
  return plan;
}

core::Time Scheduler::RevisitAt() const { return revisit_at_; }

bool Scheduler::PodsUntried() const { return lifecycle_.AnyPodUntried(); }

core::Time Scheduler::NextPodRetry(core::Time now) const { return lifecycle_.NextPodRetry(now); }

bool Scheduler::Due(core::Time now) const {
  return revisit_at_ <= now || (PodsUntried() && NextPodRetry(now) == core::kNever);
}

core::Time Scheduler::NextWakeup(core::Time now) const {
  core::Time next = revisit_at_;
  if (PodsUntried()) next = std::min(next, NextPodRetry(now));
  return next;
}

}  // namespace dlsched::engine
