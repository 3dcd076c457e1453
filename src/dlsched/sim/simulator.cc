#include "dlsched/sim/simulator.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dlsched/core/limits.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/placement.h"
#include "dlsched/sim/event_queue.h"
#include "dlsched/sim/model_zoo.h"

namespace dlsched::sim {
namespace {

using core::JobPhase;
using engine::JobIndex;

// What the simulator knows of a job beyond the engine's JobState.
struct SimJob {
  core::PhaseClock clock;
  double rate = 0;             // steps/s while running
  core::Time progress_at = 0;  // steps_done is exact at this time
  uint64_t epoch = 0;          // bumps whenever a pending completion becomes stale
  core::Time launch_started = 0;
  int64_t admission_seq = -1;
  int reallocations = 0;
  int preemptions = 0;
  int scale_events = 0;
  std::string reason;
};

class Simulation {
 public:
  Simulation(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
             const engine::Engine& engine, const SimOptions& options)
      : workload_(workload), engine_(engine), options_(options), state_(cluster) {}

  core::Result<SimResult> Run();

 private:
  void Advance(JobIndex j, core::Time now);
  void SetRate(JobIndex j, core::Time now);
  void Enter(JobIndex j, JobPhase to, core::Time now);
  void Release(JobIndex j);
  void HandleEvent(const Event& e);
  void StartLaunch(JobIndex j);
  void FinishLaunch(JobIndex j);
  void Checkpoint(JobIndex j, core::Time now);
  core::Status CheckInvariants() const;
  void CreatePods(const std::vector<JobIndex>& arrived);
  void ApplyPlan(const engine::Plan& plan, core::Time now);
  void SetJobRate(JobIndex j, double rate);
  bool AnyPodUntried() const;
  void SampleUtilization(core::Time now);
  core::Resources Held(JobIndex j) const;
  double IdealRuntime(const core::JobSpec& spec) const;

  const config::WorkloadSpec& workload_;
  const engine::Engine& engine_;
  const SimOptions& options_;
  engine::ClusterState state_;
  std::vector<SimJob> jobs_;
  EventQueue queue_;
  core::Time now_ = 0;
  int64_t next_admission_ = 0;
  int active_events_ = 0;  // queued events other than ticks
  int unfinished_ = 0;     // jobs not Completed or Failed
  // Bumped at every change of state; a pod tried in this epoch has seen it.
  uint64_t change_epoch_ = 1;
  int training_jobs_ = 0;  // jobs with a positive rate
  // Resources held by jobs making progress (RunningProtected, Running),
  // kept up to date at every phase change and placement.
  core::Resources effective_;
  core::Time next_tick_ = core::kNever;
  SimResult result_;
};

void Simulation::Advance(JobIndex j, core::Time now) {
  SimJob& sj = jobs_[j];
  engine::JobState& js = state_.MutableJob(j);
  if (sj.rate > 0 && now > sj.progress_at) {
    js.steps_done =
        std::min(js.spec->total_steps, js.steps_done + sj.rate * (now - sj.progress_at));
  }
  sj.progress_at = now;
}

double LocalityFactor(const engine::JobState& js) {
  engine::NodeIndex first = engine::kNoNode;
  for (engine::NodeIndex n : js.task_node) {
    if (n == engine::kNoNode) continue;
    if (first == engine::kNoNode) first = n;
    if (n != first) return 1.0 - js.spec->throughput.locality_sensitivity;
  }
  return 1.0;
}

// Recomputes the job's rate from its placement and schedules its completion.
void Simulation::SetRate(JobIndex j, core::Time now) {
  SimJob& sj = jobs_[j];
  const engine::JobState& js = state_.Job(j);
  Advance(j, now);
  ++sj.epoch;
  SetJobRate(j, core::IsRunning(js.phase)
                    ? js.spec->throughput.Rate(js.placed_workers) * LocalityFactor(js)
                    : 0);
  if (sj.rate > 0) {
    const double remaining = std::max(0.0, js.spec->total_steps - js.steps_done);
    queue_.Push(now + remaining / sj.rate, EventKind::kCompletion, j, sj.epoch);
    ++active_events_;
  }
}

core::Resources Simulation::Held(JobIndex j) const {
  const engine::JobState& js = state_.Job(j);
  core::Resources held;
  for (int slot = 0; slot < static_cast<int>(js.task_node.size()); ++slot) {
    if (js.task_node[slot] != engine::kNoNode) held += state_.Request(js.TaskAt(j, slot));
  }
  return held;
}

void Simulation::Enter(JobIndex j, JobPhase to, core::Time now) {
  SimJob& sj = jobs_[j];
  const JobPhase from = state_.Job(j).phase;
  if (!sj.clock.Enter(to, now)) return;
  if (core::IsRunning(from) != core::IsRunning(to)) {
    const core::Resources held = Held(j);
    if (core::IsRunning(to)) {
      effective_ += held;
    } else {
      effective_ -= held;
    }
  }
  state_.SetPhase(j, to, now);
  if (core::IsFinal(to)) --unfinished_;
}

void Simulation::Release(JobIndex j) {
  // Freed resources are a change: every pending pod deserves another try.
  ++change_epoch_;
  const engine::JobState& js = state_.Job(j);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] != engine::kNoNode) state_.RemoveTask(js.TaskAt(j, s));
  }
  auto& pods = state_.MutablePods();
  std::erase_if(pods, [j](const engine::PendingPod& p) { return p.task.job == j; });
}

void Simulation::StartLaunch(JobIndex j) {
  SimJob& sj = jobs_[j];
  const engine::JobState& js = state_.Job(j);
  Enter(j, JobPhase::kLaunching, now_);
  sj.launch_started = now_;
  ++sj.epoch;
  if (js.spec->launch_delay > 0) {
    queue_.Push(now_ + js.spec->launch_delay, EventKind::kLaunchDone, j, sj.epoch);
    ++active_events_;
  } else {
    FinishLaunch(j);
  }
}

void Simulation::FinishLaunch(JobIndex j) {
  SimJob& sj = jobs_[j];
  state_.MutableJob(j).last_launch = now_ - sj.launch_started;
  const core::Time protect = engine_.profile().protect_factor * state_.Job(j).last_launch;
  if (protect > 0) {
    Enter(j, JobPhase::kRunningProtected, now_);
    queue_.Push(now_ + protect, EventKind::kProtectEnd, j, sj.epoch);
    ++active_events_;
  } else {
    Enter(j, JobPhase::kRunning, now_);
  }
  SetRate(j, now_);
}

// Running -> Checkpointing; progress stops (steps so far are kept).
void Simulation::Checkpoint(JobIndex j, core::Time now) {
  SimJob& sj = jobs_[j];
  Advance(j, now);
  ++sj.epoch;
  SetJobRate(j, 0);
  Enter(j, JobPhase::kCheckpointing, now);
  queue_.Push(now + state_.Job(j).spec->checkpoint_delay, EventKind::kCheckpointDone, j);
  ++active_events_;
}

core::Status Simulation::CheckInvariants() const {
  core::Resources effective;
  for (core::JobPhase p : {JobPhase::kRunningProtected, JobPhase::kRunning}) {
    for (JobIndex j : state_.JobsInPhase(p)) effective += Held(j);
  }
  if (!(effective == effective_)) {
    return core::Errorf("t={}: effective resources tracked as {}, held by running jobs {}", now_,
                        core::FormatResources(effective_), core::FormatResources(effective));
  }
  for (engine::NodeIndex n = 0; n < state_.NumNodes(); ++n) {
    if (!state_.Requested(n).FitsIn(state_.Allocatable(n))) {
      return core::Errorf("t={}: node {} over-committed: requested {} of {}", now_,
                          state_.NodeName(n), core::FormatResources(state_.Requested(n)),
                          core::FormatResources(state_.Allocatable(n)));
    }
  }
  for (JobIndex j = 0; j < state_.NumJobs(); ++j) {
    const engine::JobState& js = state_.Job(j);
    if (js.IsPending() && js.placed_tasks > 0 && !engine_.profile().admission->UsesPodQueue()) {
      return core::Errorf("t={}: pending job {} holds {} tasks under gang admission", now_,
                          js.spec->name, js.placed_tasks);
    }
    if (js.placed_tasks == 0 || js.IsPending()) continue;
    const core::RoleSpec& w = js.spec->role(core::Role::kWorker);
    const int fixed = js.NumPs() + js.NumChief();
    if (js.placed_tasks - js.placed_workers != fixed) {
      return core::Errorf("t={}: job {} runs with {} of its {} PS/Chief tasks", now_, js.spec->name,
                          js.placed_tasks - js.placed_workers, fixed);
    }
    if (js.placed_workers < w.min_replicas || js.placed_workers > w.max_replicas) {
      return core::Errorf("t={}: job {} has {} workers, outside [{}, {}]", now_, js.spec->name,
                          js.placed_workers, w.min_replicas, w.max_replicas);
    }
  }
  return {};
}

void Simulation::HandleEvent(const Event& e) {
  if (e.kind != EventKind::kTick) --active_events_;
  const JobIndex j = e.job;
  switch (e.kind) {
    case EventKind::kArrival:
      break;  // handled in batch by Run()
    case EventKind::kLaunchDone:
      if (e.epoch != jobs_[j].epoch || state_.Job(j).phase != JobPhase::kLaunching) return;
      FinishLaunch(j);
      break;
    case EventKind::kProtectEnd:
      if (state_.Job(j).phase == JobPhase::kRunningProtected) Enter(j, JobPhase::kRunning, now_);
      break;
    case EventKind::kCompletion: {
      if (e.epoch != jobs_[j].epoch || !core::IsRunning(state_.Job(j).phase)) return;
      Advance(j, now_);
      state_.MutableJob(j).steps_done = state_.Job(j).spec->total_steps;
      SetJobRate(j, 0);
      Enter(j, JobPhase::kCompleted, now_);
      Release(j);
      break;
    }
    case EventKind::kCheckpointDone:
      if (state_.Job(j).phase != JobPhase::kCheckpointing) return;
      Enter(j, JobPhase::kStopping, now_);
      Enter(j, JobPhase::kStandby, now_);
      // A reallocated job holds its new allocation and relaunches at once;
      // a preempted one (nothing placed) waits in Standby to be admitted.
      if (state_.Job(j).placed_tasks > 0) StartLaunch(j);
      break;
    case EventKind::kDeadline: {
      if (core::IsFinal(state_.Job(j).phase)) return;
      Advance(j, now_);
      ++jobs_[j].epoch;
      SetJobRate(j, 0);
      jobs_[j].reason =
          fmt::format("deadline of {:g}s after arrival passed", *state_.Job(j).spec->deadline);
      Enter(j, JobPhase::kFailed, now_);
      Release(j);
      break;
    }
    case EventKind::kTick:
      if (next_tick_ == e.time) next_tick_ = core::kNever;
      break;
  }
}

// Per-pod queue: pods of jobs that arrive at the same instant are created
// interleaved (round robin over the jobs), as concurrent controllers do.
void Simulation::CreatePods(const std::vector<JobIndex>& arrived) {
  std::vector<std::vector<engine::TaskRef>> per_job;
  size_t longest = 0;
  for (JobIndex j : arrived) {
    std::vector<engine::TaskRef> tasks;
    engine::GangSlots(state_, j, state_.Job(j).target_workers, &tasks);
    longest = std::max(longest, tasks.size());
    per_job.push_back(std::move(tasks));
  }
  auto& pods = state_.MutablePods();
  for (size_t i = 0; i < longest; ++i) {
    for (const auto& tasks : per_job) {
      if (i < tasks.size()) pods.push_back(engine::PendingPod{tasks[i], now_, 0});
    }
  }
}

void Simulation::ApplyPlan(const engine::Plan& plan, core::Time now) {
  for (const engine::Action& a : plan.actions) {
    if (a.kind != engine::ActionKind::kBind && a.kind != engine::ActionKind::kUnbind) continue;
    const bool running = core::IsRunning(state_.Job(a.task.job).phase);
    if (a.kind == engine::ActionKind::kBind) {
      state_.PlaceTask(a.task, a.node);
      if (running) effective_ += state_.Request(a.task);
    } else {
      state_.RemoveTask(a.task);
      if (running) effective_ -= state_.Request(a.task);
    }
  }
  bool changed = false;
  size_t pod_cursor = 0;
  for (const engine::Action& a : plan.actions) {
    const JobIndex j = a.task.job;
    switch (a.kind) {
      case engine::ActionKind::kBind:
      case engine::ActionKind::kUnbind:
        changed = true;
        break;
      case engine::ActionKind::kStart: {
        SimJob& sj = jobs_[j];
        engine::JobState& js = state_.MutableJob(j);
        js.target_workers = a.workers;
        if (sj.admission_seq < 0) sj.admission_seq = next_admission_++;
        if (js.phase == JobPhase::kStandby) ++sj.reallocations;
        sj.reason = a.reason;
        StartLaunch(j);
        changed = true;
        break;
      }
      case engine::ActionKind::kResize: {
        SimJob& sj = jobs_[j];
        state_.MutableJob(j).target_workers = a.workers;
        ++sj.scale_events;
        if (a.preempted) ++sj.preemptions;
        sj.reason = a.reason;
        if (a.restart) {
          ++sj.reallocations;
          Checkpoint(j, now);
        } else {
          SetRate(j, now);
        }
        changed = true;
        break;
      }
      case engine::ActionKind::kStop: {
        SimJob& sj = jobs_[j];
        ++sj.preemptions;
        sj.reason = a.reason;
        Checkpoint(j, now);
        changed = true;
        break;
      }
      case engine::ActionKind::kWait:
        jobs_[j].reason = a.reason;
        break;
      case engine::ActionKind::kStarve:
        if (state_.Job(j).phase == JobPhase::kWaiting) Enter(j, JobPhase::kStarving, now);
        break;
      case engine::ActionKind::kBackoff:
        // Backoffs come in queue order: one forward walk finds them all.
        for (auto& pods = state_.MutablePods(); pod_cursor < pods.size(); ++pod_cursor) {
          engine::PendingPod& pod = pods[pod_cursor];
          if (pod.task == a.task) {
            const core::Time delay = std::min(
                options_.backoff_max, options_.backoff_initial * std::pow(2.0, pod.attempts));
            ++pod.attempts;
            pod.not_before = now + delay;
            pod.tried_epoch = change_epoch_;
            break;
          }
        }
        break;
    }
  }
  if (changed) ++change_epoch_;
  // Bound pods leave the queue.
  std::erase_if(state_.MutablePods(), [this](const engine::PendingPod& p) {
    return state_.Job(p.task.job).NodeOf(p.task.role, p.task.index) != engine::kNoNode;
  });
}

void Simulation::SetJobRate(JobIndex j, double rate) {
  double& r = jobs_[j].rate;
  training_jobs_ += (rate > 0) - (r > 0);
  r = rate;
}

// True when some pending pod has not been tried since the state last
// changed: retrying it might succeed. A pod that failed since then would
// fail again, so waking up for it is pointless.
bool Simulation::AnyPodUntried() const {
  for (const auto& pod : state_.Pods()) {
    if (pod.tried_epoch != change_epoch_) return true;
  }
  return false;
}

void Simulation::SampleUtilization(core::Time now) {
  metrics::UtilizationSample s;
  s.time = now;
  s.allocated = state_.TotalRequested();
  s.effective = effective_;
  auto& series = result_.run.utilization;
  if (!series.empty() && series.back().allocated == s.allocated &&
      series.back().effective == s.effective) {
    return;
  }
  if (!series.empty() && series.back().time == now) {
    series.back() = s;
  } else {
    series.push_back(s);
  }
}

double Simulation::IdealRuntime(const core::JobSpec& spec) const {
  const core::RoleSpec& w = spec.role(core::Role::kWorker);
  double best = 0;
  for (int n = std::max(1, w.min_replicas); n <= w.max_replicas; ++n) {
    if (!spec.Demand(n).FitsIn(state_.Capacity())) break;
    best = std::max(best, spec.throughput.Rate(n));
  }
  return best > 0 ? spec.total_steps / best : 0;
}

core::Result<SimResult> Simulation::Run() {
  const auto& specs = workload_.jobs;
  jobs_.resize(specs.size());
  unfinished_ = static_cast<int>(specs.size());
  for (const auto& spec : specs) state_.AddJob(&spec, spec.submit_time);
  for (JobIndex j = 0; j < static_cast<JobIndex>(specs.size()); ++j) {
    queue_.Push(specs[j].submit_time, EventKind::kArrival, j);
    ++active_events_;
    if (specs[j].deadline) {
      queue_.Push(specs[j].submit_time + *specs[j].deadline, EventKind::kDeadline, j);
      ++active_events_;
    }
  }
  engine::CycleOptions cycle_options;
  cycle_options.trace_job = options_.trace_job.empty() ? -1 : state_.FindJob(options_.trace_job);
  cycle_options.traces = &result_.traces;
  const bool per_pod = engine_.profile().admission->UsesPodQueue();
  int64_t cycles = 0;
  // Livelock guard: a profile that keeps changing the plan while no job
  // trains, arrives or ends (e.g. resizing a job back and forth with zero
  // delays, all at one instant) would cycle for ever. Legitimate runs have
  // a few such cycles per task in a row at most (per-pod backoff retries).
  int64_t tasks = 0;
  for (const auto& spec : specs)
    tasks += spec.NumTasks(spec.role(core::Role::kWorker).max_replicas);
  const int64_t max_idle_cycles = 1000 + 10 * tasks;
  int64_t idle_cycles = 0;
  bool livelock = false;
  while (!queue_.Empty() && unfinished_ > 0) {
    const int unfinished_before = unfinished_;
    const bool trained = queue_.Top().time > now_ && training_jobs_ > 0;
    now_ = queue_.Top().time;
    std::vector<JobIndex> arrived;
    while (!queue_.Empty() && queue_.Top().time == now_) {
      const Event e = queue_.Pop();
      if (e.kind == EventKind::kArrival) {
        --active_events_;
        Enter(e.job, JobPhase::kWaiting, now_);
        arrived.push_back(e.job);
      } else {
        HandleEvent(e);
      }
    }
    if (!arrived.empty()) {
      if (per_pod) CreatePods(arrived);
      ++change_epoch_;
    }
    if (trained || !arrived.empty() || unfinished_ != unfinished_before) {
      idle_cycles = 0;
    } else if (++idle_cycles > max_idle_cycles) {
      livelock = true;
      break;
    }
    cycle_options.cycle = cycles++;
    const engine::Plan plan = engine_.Cycle(state_, now_, cycle_options);
    ApplyPlan(plan, now_);
    SampleUtilization(now_);
    if (options_.check_invariants) {
      if (auto st = CheckInvariants(); !st) return std::unexpected(st.error());
    }
    // A pod is worth a wake-up (at its backoff expiry) only if it has not
    // been tried since the state last changed. With no such pod, the next
    // real event (an arrival, a completion, a deadline) is the next thing
    // that can change anything, however far away it is; with no event left
    // either, the state is a fixed point (a deadlock if jobs are unfinished).
    if (!AnyPodUntried()) {
      if (active_events_ == 0) break;
      continue;
    }
    core::Time wake = core::kNever;
    for (const auto& pod : state_.Pods()) {
      if (pod.tried_epoch != change_epoch_ && pod.not_before > now_) {
        wake = std::min(wake, pod.not_before);
      }
    }
    if (wake != core::kNever && wake < next_tick_) {
      queue_.Push(wake, EventKind::kTick);
      next_tick_ = wake;
    }
  }

  // Records.
  metrics::RunInput& run = result_.run;
  run.profile = engine_.profile().name;
  run.capacity = state_.Capacity();
  run.end_time = now_;
  run.cycles = cycles;
  run.deadlocked = false;
  for (JobIndex j = 0; j < state_.NumJobs(); ++j) {
    const engine::JobState& js = state_.Job(j);
    const SimJob& sj = jobs_[j];
    metrics::JobRecord r;
    r.name = js.spec->name;
    r.namespace_name = js.spec->namespace_name;
    r.submit = js.spec->submit_time;
    r.first_start = sj.clock.FirstEntered(JobPhase::kLaunching);
    r.final_phase = js.phase;
    if (core::IsFinal(js.phase)) r.completion = js.phase_since;
    r.admission_seq = sj.admission_seq;
    const core::Time end = core::IsFinal(js.phase) ? js.phase_since : now_;
    r.queueing = (r.first_start != core::kNever ? r.first_start : end) - r.submit;
    r.launching =
        sj.clock.TimeIn(JobPhase::kStandby, end) + sj.clock.TimeIn(JobPhase::kLaunching, end) +
        sj.clock.TimeIn(JobPhase::kCheckpointing, end) + sj.clock.TimeIn(JobPhase::kStopping, end);
    r.running = sj.clock.TimeIn(JobPhase::kRunningProtected, end) +
                sj.clock.TimeIn(JobPhase::kRunning, end);
    r.reallocations = sj.reallocations;
    r.preemptions = sj.preemptions;
    r.scale_events = sj.scale_events;
    r.final_workers = js.placed_workers > 0 ? js.placed_workers : js.target_workers;
    r.ideal_runtime = IdealRuntime(*js.spec);
    r.stuck = !core::IsFinal(js.phase);
    run.deadlocked = run.deadlocked || r.stuck;
    r.reason = sj.reason;
    if (livelock && r.stuck) {
      r.reason = fmt::format(
          "run stopped at {:g}s: {} scheduling cycles in a row without any job training, "
          "arriving or ending (livelock); last reason: {}",
          now_, max_idle_cycles, sj.reason.empty() ? "none" : sj.reason);
    }
    run.jobs.push_back(std::move(r));
  }
  return std::move(result_);
}

}  // namespace

core::Status CheckRunnable(const config::WorkloadSpec& workload) {
  for (const auto& job : workload.jobs) {
    const auto& tp = job.throughput;
    if (tp.steps_per_s.empty()) {
      return core::Errorf("{}: job '{}': throughput: model '{}' is not resolved", workload.source,
                          job.name, tp.model);
    }
    const int min = job.role(core::Role::kWorker).min_replicas;
    const double rate = tp.Rate(min);
    if (rate <= 0) {
      return core::Errorf(
          "{}: job '{}': throughput: the rate at minReplicas {} workers is 0 (the table starts at "
          "{} workers), so the job could never finish",
          workload.source, job.name, min, tp.steps_per_s.begin()->first);
    }
    if (job.total_steps / rate > core::kMaxTime) {
      return core::Errorf(
          "{}: job '{}': totalSteps: {:g} steps at {:g} steps/s ({} workers) take {:.3g} s, more "
          "than the limit of {:g} s",
          workload.source, job.name, job.total_steps, rate, min, job.total_steps / rate,
          core::kMaxTime);
    }
  }
  return {};
}

core::Result<SimResult> Simulate(const core::ClusterSpec& cluster,
                                 const config::WorkloadSpec& workload, const engine::Engine& engine,
                                 const SimOptions& options) {
  if (auto st = CheckRunnable(workload); !st) return std::unexpected(st.error());
  Simulation sim(cluster, workload, engine, options);
  return sim.Run();
}

}  // namespace dlsched::sim
