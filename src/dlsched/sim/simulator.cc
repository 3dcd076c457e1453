#include "dlsched/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "dlsched/core/limits.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/lifecycle.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/scheduler.h"
#include "dlsched/sim/event_queue.h"
#include "dlsched/sim/model_zoo.h"

namespace dlsched::sim {
namespace {

using core::JobPhase;
using engine::JobIndex;

// The simulator is a Backend of the shared scheduler loop (engine::
// Scheduler): its events come from a queue in time order, timers are events
// on it, binds and unbinds take effect at once, and a job's completion is
// an event at the time its rate (the loop's progress estimate) says.
class Simulation final : public engine::Backend {
 public:
  Simulation(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
             const engine::Engine& engine, const SimOptions& options)
      : cluster_(cluster),
        workload_(workload),
        engine_(engine),
        options_(options),
        scheduler_(cluster, engine, *this, SchedulerOptionsOf(options)),
        state_(scheduler_.state()) {}

  core::Result<SimResult> Run();

  // engine::Backend
  core::Time Now() const override { return now_; }
  void SetTimer(core::Time at, engine::TimerKind kind, JobIndex j, uint64_t epoch) override;
  void Bind(engine::TaskRef t, engine::NodeIndex n) override;
  void Unbind(engine::TaskRef t, engine::NodeIndex n) override;
  void Held(engine::TaskRef t, engine::NodeIndex n) override;
  void CreateTask(engine::TaskRef) override {}
  void DeleteTask(engine::TaskRef) override {}
  void OnProgressChange(JobIndex j) override { SetRate(j); }
  void OnPhase(JobIndex j, JobPhase from) override;
  bool WantsTimeline() const override { return options_.timeline; }
  void OnTimeline(engine::TimelineEvent e) override {
    result_.run.events.push_back(metrics::JobEvent{e.time, e.job, engine::TimelineKindName(e.kind),
                                                   e.workers, e.by, std::move(e.detail)});
  }

 private:
  static engine::SchedulerOptions SchedulerOptionsOf(const SimOptions& options) {
    engine::SchedulerOptions o;
    o.backoff_initial = options.backoff_initial;
    o.backoff_max = options.backoff_max;
    return o;
  }
  // Reprices the job (its rate from its placement) and queues its completion.
  void SetRate(JobIndex j);
  // How the loop ended.
  struct LoopEnd {
    int64_t cycles = 0;
    int64_t max_idle_cycles = 0;  // the livelock guard's limit
    bool stopped = false;         // SimOptions::stop
    bool livelock = false;
  };
  core::Status Setup();
  core::Result<LoopEnd> Loop();
  void Records(const LoopEnd& loop);
  void HandleEvent(const Event& e);
  void HandleNodeEvent(const core::NodeEvent& e);
  core::Status PlaceInitial();
  core::Status CheckInvariants() const;
  core::Status CheckQuotas() const;
  void SampleUtilization(core::Time now);
  // Task `t` came onto (+1) or left (-1) node `n`: the job's open
  // allocation row there closes and a new one opens.
  void Hold(engine::TaskRef t, engine::NodeIndex n, int sign);
  double IdealRuntime(const core::JobSpec& spec) const;

  const core::ClusterSpec& cluster_;
  const config::WorkloadSpec& workload_;
  const engine::Engine& engine_;
  const SimOptions& options_;
  engine::Scheduler scheduler_;
  const engine::ClusterState& state_;  // the scheduler's cache, read-only
  // Per job: bumps whenever its pending completion event becomes stale.
  std::vector<uint64_t> completion_epoch_;
  EventQueue queue_;
  core::Time now_ = 0;
  int active_events_ = 0;  // queued events other than ticks
  // Resources held by jobs making progress (RunningProtected, Running),
  // kept up to date at every phase change and placement.
  core::Resources effective_;
  core::Time next_tick_ = core::kNever;
  // (job, node) -> its open row of result_.run.allocations.
  std::unordered_map<uint64_t, size_t> open_allocation_;
  SimResult result_;
};

void Simulation::SetRate(JobIndex j) {
  const double rate = scheduler_.Reprice(j, now_);
  const uint64_t epoch = ++completion_epoch_[j];
  if (rate > 0) {
    const engine::JobState& js = state_.Job(j);
    const double remaining = std::max(0.0, js.spec->total_steps - js.steps_done);
    queue_.Push(now_ + remaining / rate, EventKind::kCompletion, j, epoch);
    ++active_events_;
  }
}

void Simulation::OnPhase(JobIndex j, JobPhase from) {
  const JobPhase to = state_.Job(j).phase;
  if (core::IsRunning(from) == core::IsRunning(to)) return;
  const core::Resources held = state_.Held(j);
  if (core::IsRunning(to)) {
    effective_ += held;
  } else {
    effective_ -= held;
  }
}

void Simulation::SetTimer(core::Time at, engine::TimerKind kind, JobIndex j, uint64_t epoch) {
  EventKind k = EventKind::kLaunchDone;
  switch (kind) {
    case engine::TimerKind::kLaunchDone:
      k = EventKind::kLaunchDone;
      break;
    case engine::TimerKind::kProtectEnd:
      k = EventKind::kProtectEnd;
      break;
    case engine::TimerKind::kCheckpointDone:
      k = EventKind::kCheckpointDone;
      break;
    case engine::TimerKind::kTaintEviction:
      k = EventKind::kTaintEviction;
      break;
  }
  queue_.Push(at, k, j, epoch);
  ++active_events_;
}

// A simulated bind always succeeds, at once.
void Simulation::Bind(engine::TaskRef t, engine::NodeIndex n) {
  scheduler_.BindDone(t);
  if (core::IsRunning(state_.Job(t.job).phase)) effective_ += state_.Request(t);
  Hold(t, n, +1);
}

// A simulated pod is gone at once.
void Simulation::Unbind(engine::TaskRef t, engine::NodeIndex n) {
  scheduler_.TaskGone(t);
  if (core::IsRunning(state_.Job(t.job).phase)) effective_ -= state_.Request(t);
  Hold(t, n, -1);
}

// A task held until its job's checkpoint is done: its pod runs on (its
// allocation row stays open until Unbind) but no longer trains.
void Simulation::Held(engine::TaskRef t, engine::NodeIndex) {
  if (core::IsRunning(state_.Job(t.job).phase)) effective_ -= state_.Request(t);
}

void Simulation::Hold(engine::TaskRef t, engine::NodeIndex n, int sign) {
  if (!options_.timeline) return;
  auto& rows = result_.run.allocations;
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(t.job)) << 32) | static_cast<uint32_t>(n);
  metrics::Allocation next{n, t.job, now_, core::kNever, 0, 0};
  auto it = open_allocation_.find(key);
  if (it != open_allocation_.end()) {
    metrics::Allocation& open = rows[it->second];
    next.tasks = open.tasks;
    next.gpus = open.gpus;
    if (open.start == now_) {
      // Changed again at the same instant: the row was never held as it was.
      open.tasks += sign;
      open.gpus += sign * state_.Request(t)[core::kGpu];
      if (open.tasks == 0) open_allocation_.erase(it);
      return;
    }
    open.end = now_;
    open_allocation_.erase(it);
  }
  next.tasks += sign;
  next.gpus += sign * state_.Request(t)[core::kGpu];
  if (next.tasks <= 0) return;
  open_allocation_[key] = rows.size();
  rows.push_back(next);
}

core::Status Simulation::CheckInvariants() const {
  core::Resources effective;
  for (core::JobPhase p : {JobPhase::kRunningProtected, JobPhase::kRunning}) {
    for (JobIndex j : state_.JobsInPhase(p)) effective += state_.Held(j);
  }
  if (!(effective == effective_)) {
    return core::Errorf("t={}: effective resources tracked as {}, held by running jobs {}", now_,
                        core::FormatResources(effective_), core::FormatResources(effective));
  }
  for (engine::NodeIndex n = 0; n < state_.NumNodes(); ++n) {
    // GPU shares: no device above one GPU, their sum the node's, and every
    // device holding one counted out of its whole GPUs.
    int64_t shares = 0;
    int64_t shared_devices = 0;
    for (const int16_t used : state_.SharesOn(n)) {
      if (used > core::kMilliPerGpu) {
        return core::Errorf("t={}: node {}: a GPU device holds {} thousandths", now_,
                            state_.NodeName(n), used);
      }
      shares += used;
      shared_devices += used > 0 ? 1 : 0;
    }
    if (shares != state_.Requested(n)[core::kGpuMilli] ||
        shared_devices > state_.Requested(n)[core::kGpu]) {
      return core::Errorf(
          "t={}: node {}: devices hold {} thousandths on {} devices, requested {} on {} GPUs", now_,
          state_.NodeName(n), shares, shared_devices, state_.Requested(n)[core::kGpuMilli],
          state_.Requested(n)[core::kGpu]);
    }
    if (!state_.Requested(n).FitsIn(state_.Allocatable(n))) {
      return core::Errorf("t={}: node {} over-committed: requested {} of {}", now_,
                          state_.NodeName(n), core::FormatResources(state_.Requested(n)),
                          core::FormatResources(state_.Allocatable(n)));
    }
  }
  // Releasing tasks in a simulation are the ones held until their job's
  // checkpoint is done, and only those.
  if (state_.NumAssumed() != 0 || state_.NumReleasing() != scheduler_.lifecycle().NumHeld()) {
    return core::Errorf(
        "t={}: {} assumed and {} releasing tasks left in a simulation ({} held for a checkpoint)",
        now_, state_.NumAssumed(), state_.NumReleasing(), scheduler_.lifecycle().NumHeld());
  }
  DLSCHED_TRY(CheckQuotas());
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

// The queues' quotas, worked out afresh from the cluster's queues and
// cohorts and what the jobs hold: the book keeps the same usage, no queue
// is above its nominal quota plus its borrowing limit or its capability,
// no cohort borrows more than its borrowing limit, and no root cohort
// lends more than its tree has to lend.
core::Status Simulation::CheckQuotas() const {
  const engine::QuotaBook& book = state_.Quotas();
  std::vector<core::Resources> usage(book.NumQueues());
  for (JobIndex j = 0; j < state_.NumJobs(); ++j) {
    const engine::JobState& js = state_.Job(j);
    if (js.queue < 0) continue;
    if (!state_.HasFlavors()) {
      usage[js.queue] += state_.Held(j);
      continue;
    }
    // Each task also under its node's GPU type (ClusterState::Charged),
    // and only on a type its queue may use.
    for (int slot = 0; slot < static_cast<int>(js.task_node.size()); ++slot) {
      const engine::NodeIndex n = js.task_node[slot];
      if (n == engine::kNoNode) continue;
      const core::Resources& req = state_.Request(js.TaskAt(j, slot));
      if (auto why = state_.FlavorTypeRefusal(j, req, n)) {
        return core::Errorf("t={}: job {} holds a task on node {}, but {}", now_, js.spec->name,
                            state_.NodeName(n), *why);
      }
      usage[js.queue] += state_.Charged(req, n);
    }
  }
  for (int q = 0; q < book.NumQueues(); ++q) {
    const core::QueueSpec& spec = book.Spec(q);
    if (!(usage[q] == book.Usage(q))) {
      return core::Errorf("t={}: queue {} uses {}, its book says {}", now_, spec.name,
                          core::FormatResources(usage[q]), core::FormatResources(book.Usage(q)));
    }
    for (const auto& [id, limit] : spec.capability) {
      if (usage[q][id] > limit) {
        return core::Errorf("t={}: queue {} uses {} {}, above its capability {}", now_, spec.name,
                            usage[q][id], core::ResourceName(id), limit);
      }
    }
    for (const core::QuotaLine& l : spec.quota) {
      const int64_t used = usage[q][l.id];
      if (l.borrowing_limit && used > l.nominal + *l.borrowing_limit) {
        return core::Errorf("t={}: queue {} uses {} {}, above nominal {} + borrowing limit {}",
                            now_, spec.name, used, core::ResourceName(l.id), l.nominal,
                            *l.borrowing_limit);
      }
    }
  }
  // Per cohort and resource, leaves up: what its subtree has (its own
  // nominal and what each member lends past its lending limit) and uses
  // (each member's usage past the part its lending limit keeps back).
  struct Level {
    int64_t subtree = 0;
    int64_t usage = 0;
  };
  auto local = [](const core::QuotaLine& l, int64_t subtree) {
    return l.lending_limit ? std::max<int64_t>(0, subtree - *l.lending_limit) : 0;
  };
  std::map<std::string, const core::CohortSpec*> declared;
  for (const core::CohortSpec& c : cluster_.cohorts) declared[c.name] = &c;
  std::map<std::pair<std::string, core::ResourceId>, Level> levels;
  auto pass_up = [&](const std::string& cohort, const core::QuotaLine& l, const Level& child) {
    Level& p = levels[{cohort, l.id}];
    const int64_t kept = local(l, child.subtree);
    p.subtree += child.subtree - kept;
    p.usage += std::max<int64_t>(0, child.usage - kept);
  };
  for (int q = 0; q < book.NumQueues(); ++q) {
    const core::QueueSpec& spec = book.Spec(q);
    if (spec.cohort.empty()) continue;
    for (const core::QuotaLine& l : spec.quota)
      pass_up(spec.cohort, l, {l.nominal, usage[q][l.id]});
  }
  // A cohort passes up once all its members have: deepest first.
  auto depth = [&](std::string name) {
    int d = 0;
    for (auto it = declared.find(name); it != declared.end() && !it->second->parent.empty();
         it = declared.find(name)) {
      name = it->second->parent;
      ++d;
    }
    return d;
  };
  std::vector<const core::CohortSpec*> order;
  for (const core::CohortSpec& c : cluster_.cohorts) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto* a, const auto* b) { return depth(a->name) > depth(b->name); });
  for (const core::CohortSpec* c : order) {
    for (const core::QuotaLine& l : c->quota) levels[{c->name, l.id}].subtree += l.nominal;
    if (c->parent.empty()) continue;
    for (auto it = levels.lower_bound({c->name, 0});
         it != levels.end() && it->first.first == c->name; ++it) {
      const core::QuotaLine* l = nullptr;
      for (const core::QuotaLine& k : c->quota) {
        if (k.id == it->first.second) l = &k;
      }
      const Level& lv = it->second;
      if (l != nullptr && l->borrowing_limit && lv.usage > lv.subtree + *l->borrowing_limit) {
        return core::Errorf("t={}: cohort {} uses {} {}, above its {} + borrowing limit {}", now_,
                            c->name, lv.usage, core::ResourceName(it->first.second), lv.subtree,
                            *l->borrowing_limit);
      }
      core::QuotaLine none;
      none.id = it->first.second;
      pass_up(c->parent, l != nullptr ? *l : none, lv);
    }
  }
  for (const auto& [key, lv] : levels) {
    const auto it = declared.find(key.first);
    const bool root = it == declared.end() || it->second->parent.empty();
    if (root && lv.usage > lv.subtree) {
      return core::Errorf("t={}: cohort {} holds {} {} of the {} its tree lends", now_, key.first,
                          lv.usage, core::ResourceName(key.second), lv.subtree);
    }
  }
  return {};
}

// "worker-1 evicted", "worker-1 failed with exit code 137": a scheduled
// failure as the job's reason words it.
std::string FailureText(core::Role role, int index, const core::TaskFailure& f) {
  std::string what = f.disruption  ? "evicted"
                     : f.exit_code ? fmt::format("failed with exit code {}", *f.exit_code)
                                   : "failed";
  return fmt::format("{}-{} {}", core::RoleKey(role), index, what);
}

void Simulation::HandleEvent(const Event& e) {
  if (e.kind != EventKind::kTick) --active_events_;
  const JobIndex j = e.job;
  switch (e.kind) {
    case EventKind::kArrival:
      break;  // handled in batch by Run()
    case EventKind::kLaunchDone:
      scheduler_.OnTimer(engine::TimerKind::kLaunchDone, j, e.epoch);
      break;
    case EventKind::kProtectEnd:
      scheduler_.OnTimer(engine::TimerKind::kProtectEnd, j, e.epoch);
      break;
    case EventKind::kCheckpointDone:
      scheduler_.OnTimer(engine::TimerKind::kCheckpointDone, j, e.epoch);
      break;
    case EventKind::kTaintEviction:
      scheduler_.OnTimer(engine::TimerKind::kTaintEviction, j, e.epoch);
      break;
    case EventKind::kCompletion: {
      if (e.epoch != completion_epoch_[j] || !core::IsRunning(state_.Job(j).phase)) return;
      scheduler_.Finished(j, now_);
      break;
    }
    case EventKind::kDeadline:
      scheduler_.Fail(
          j, fmt::format("deadline of {:g}s after arrival passed", *state_.Job(j).spec->deadline));
      break;
    case EventKind::kNode:
      HandleNodeEvent(cluster_.events[e.job]);
      break;
    case EventKind::kTaskFailure: {
      const core::ScheduledFailure& f = state_.Job(j).spec->failures[e.epoch];
      scheduler_.TaskFailed(engine::TaskRef{j, f.role, f.index}, f.failure,
                            FailureText(f.role, f.index, f.failure));
      break;
    }
    case EventKind::kTick:
      if (next_tick_ == e.time) next_tick_ = core::kNever;
      break;
  }
}

// The jobs a workload gives as already placed at its start (`running`):
// their tasks are bound to the named nodes and they enter their phase as
// the operator's adoption does; what is left of a launch or of a
// protection runs on this profile's timers.
core::Status Simulation::PlaceInitial() {
  for (JobIndex j = 0; j < state_.NumJobs(); ++j) {
    const core::JobSpec& spec = *state_.Job(j).spec;
    if (!spec.initial) continue;
    const core::InitialState& in = *spec.initial;
    for (const bool held : {false, true}) {
      for (const auto& t : held ? in.held : in.tasks) {
        const std::string where =
            fmt::format("{}: job '{}': running.{}.{}-{}", workload_.source, spec.name,
                        held ? "held" : "nodes", core::RoleKey(t.role), t.index);
        const engine::NodeIndex n = state_.FindNode(t.node);
        if (n == engine::kNoNode) {
          return core::Errorf("{}: no node '{}' in the cluster", where, t.node);
        }
        const core::Resources& request = spec.role(t.role).resources;
        if (!state_.FreeHolds(request, n)) {
          return core::Errorf("{}: node '{}' has {} free, not enough for {}", where, t.node,
                              core::FormatResources(state_.Free(n)),
                              core::FormatResources(request));
        }
        scheduler_.Place(engine::TaskRef{j, t.role, t.index}, n, held);
      }
    }
    if (in.phase == JobPhase::kWaiting) continue;  // arrives with some pods bound
    engine::AdoptTimes times;
    times.since = in.since;
    times.first_start = in.first_start;
    times.last_launch = in.last_launch;
    scheduler_.Adopt(j, in.phase, in.admission_seq, times);
    if (spec.deadline) {
      queue_.Push(std::max(now_, spec.submit_time + *spec.deadline), EventKind::kDeadline, j);
      ++active_events_;
    }
  }
  return {};
}

// A change of the cluster from the cluster file's events.
void Simulation::HandleNodeEvent(const core::NodeEvent& e) {
  const engine::NodeIndex n = state_.FindNode(e.node.name);
  switch (e.kind) {
    case core::NodeEvent::Kind::kAdd:
      if (n == engine::kNoNode) {
        scheduler_.AddNode(e.node);  // news that pending pods deserve a new try
        return;
      }
      break;
    case core::NodeEvent::Kind::kRemove:
      if (n != engine::kNoNode) scheduler_.RemoveNode(n, "removed");
      break;
    case core::NodeEvent::Kind::kFail:
      if (n != engine::kNoNode) scheduler_.RemoveNode(n, "failed");
      break;
    case core::NodeEvent::Kind::kUpdate: {
      if (n == engine::kNoNode) break;
      core::NodeSpec spec = state_.NodeSpecOf(n);
      if (e.allocatable) spec.allocatable = *e.allocatable;
      if (e.labels) spec.labels = *e.labels;
      if (e.taints) spec.taints = *e.taints;
      if (e.schedulable) spec.schedulable = *e.schedulable;
      scheduler_.UpdateNode(n, spec);
      break;
    }
  }
  // Every kind changes what fits where: pending pods deserve a new try.
  scheduler_.ClusterChanged();
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

// The cluster's reserved pods, the jobs, those placed at the start, and
// the events the inputs give (arrivals, deadlines, node events) queued.
core::Status Simulation::Setup() {
  const auto& specs = workload_.jobs;
  completion_epoch_.resize(specs.size());
  // A workload's `start` (a snapshot of a live cluster): the run begins
  // there; what arrived or was due before happens at it.
  const core::Time start = workload_.start;
  now_ = start;
  // Nodes' `reserved` resources: held by pods outside the workload.
  for (const auto& [name, reserved] : cluster_.reserved) {
    scheduler_.ForeignPodBound(fmt::format("reserved/{}", name), state_.FindNode(name), reserved,
                               reserved);
  }
  scheduler_.ReserveJobs(specs.size());
  result_.run.jobs.reserve(specs.size());
  // Every job that runs has at least four rows (submitted, started,
  // running, completed), most a wait or two: room for six each, so the
  // timeline is seldom moved as it grows.
  if (options_.timeline) result_.run.events.reserve(6 * specs.size());
  for (const auto& spec : specs) scheduler_.AddJob(&spec, spec.submit_time);
  scheduler_.JobsAdded();
  DLSCHED_TRY(PlaceInitial());
  // A continued run decides at its start even when nothing arrives there.
  if (start > 0) queue_.Push(start, EventKind::kTick);
  for (JobIndex j = 0; j < static_cast<JobIndex>(specs.size()); ++j) {
    if (specs[j].initial && specs[j].initial->phase != JobPhase::kWaiting) continue;
    queue_.Push(std::max(start, specs[j].submit_time), EventKind::kArrival, j);
    ++active_events_;
    if (specs[j].deadline) {
      queue_.Push(std::max(start, specs[j].submit_time + *specs[j].deadline), EventKind::kDeadline,
                  j);
      ++active_events_;
    }
    // Failures scheduled before the run begins (a snapshot's past) are gone.
    const auto& failures = specs[j].failures;
    for (size_t f = 0; f < failures.size(); ++f) {
      const core::Time at = specs[j].submit_time + failures[f].after;
      if (at < start) continue;
      queue_.Push(at, EventKind::kTaskFailure, j, f);
      ++active_events_;
    }
  }
  for (size_t i = 0; i < cluster_.events.size(); ++i) {
    queue_.Push(std::max(start, cluster_.events[i].time), EventKind::kNode,
                static_cast<int32_t>(i));
    ++active_events_;
  }
  return {};
}

core::Result<SimResult> Simulation::Run() {
  DLSCHED_TRY(Setup());
  DLSCHED_TRY_LET(end, Loop());
  Records(*end);
  return std::move(result_);
}

// Every instant with events, in time order: the events told to the
// scheduler, one cycle, the wake-ups it asks for. Ends when every job is
// done, nothing is left to happen, the caller stops it or a livelock.
core::Result<Simulation::LoopEnd> Simulation::Loop() {
  const auto& specs = workload_.jobs;
  LoopEnd end;
  engine::CycleOptions cycle_options;
  cycle_options.trace_job = options_.trace_job.empty() ? -1 : state_.FindJob(options_.trace_job);
  cycle_options.traces = &result_.traces;
  int64_t& cycles = end.cycles;
  // Livelock guard: a profile that keeps changing the plan while no job
  // trains, arrives or ends (e.g. resizing a job back and forth with zero
  // delays, all at one instant) would cycle for ever. Legitimate runs have
  // a few such cycles per task in a row at most (per-pod backoff retries).
  int64_t tasks = 0;
  for (const auto& spec : specs)
    tasks += spec.NumTasks(spec.role(core::Role::kWorker).max_replicas);
  end.max_idle_cycles = 1000 + 10 * tasks;
  const int64_t max_idle_cycles = end.max_idle_cycles;
  int64_t idle_cycles = 0;
  bool& livelock = end.livelock;
  Progress* progress = options_.progress;
  if (progress != nullptr) progress->jobs_total = static_cast<int64_t>(specs.size());
  bool& stopped = end.stopped;
  while (!queue_.Empty() && scheduler_.Unfinished() > 0) {
    if (options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed)) {
      stopped = true;
      break;
    }
    const int unfinished_before = scheduler_.Unfinished();
    const bool trained = queue_.Top().time > now_ && scheduler_.NumTraining() > 0;
    now_ = queue_.Top().time;
    std::vector<JobIndex> arrived;
    while (!queue_.Empty() && queue_.Top().time == now_) {
      const Event e = queue_.Pop();
      if (e.kind == EventKind::kArrival) {
        --active_events_;
        arrived.push_back(e.job);
      } else {
        HandleEvent(e);
      }
    }
    if (!arrived.empty()) scheduler_.Arrive(arrived);
    if (trained || !arrived.empty() || scheduler_.Unfinished() != unfinished_before) {
      idle_cycles = 0;
    } else if (++idle_cycles > max_idle_cycles) {
      livelock = true;
      break;
    }
    cycle_options.cycle = cycles++;
    const engine::Plan plan = scheduler_.Cycle(now_, cycle_options);
    if (options_.on_plan) options_.on_plan(now_, plan);
    const core::Time revisit = scheduler_.RevisitAt();
    if (revisit > now_ && revisit < next_tick_) {
      queue_.Push(revisit, EventKind::kTick);
      next_tick_ = revisit;
    }
    SampleUtilization(now_);
    if (progress != nullptr) {
      progress->jobs_finished.store(static_cast<int64_t>(specs.size()) - scheduler_.Unfinished(),
                                    std::memory_order_relaxed);
      progress->now.store(now_, std::memory_order_relaxed);
    }
    if (options_.check_invariants) {
      DLSCHED_TRY(CheckInvariants());
    }
    // A pod is worth a wake-up (at its backoff expiry) only if it has not
    // been tried since the state last changed. With no such pod, the next
    // real event (an arrival, a completion, a deadline) is the next thing
    // that can change anything, however far away it is; with no event left
    // either, the state is a fixed point (a deadlock if jobs are unfinished).
    if (!scheduler_.PodsUntried()) {
      // (A cycle the plan asked for, e.g. a scheduling round, still counts.)
      if (active_events_ == 0 && !(revisit > now_)) break;
      continue;
    }
    const core::Time wake = scheduler_.NextPodRetry(now_);
    if (wake != core::kNever && wake < next_tick_) {
      queue_.Push(wake, EventKind::kTick);
      next_tick_ = wake;
    }
  }
  return end;
}

// The run's records: one per job, the nodes, the figures of the run.
void Simulation::Records(const LoopEnd& loop) {
  const auto& specs = workload_.jobs;
  const bool stopped = loop.stopped;
  const bool livelock = loop.livelock;
  Progress* progress = options_.progress;
  metrics::RunInput& run = result_.run;
  // Rows opened and emptied at one instant held nothing.
  std::erase_if(run.allocations, [](const metrics::Allocation& a) { return a.tasks == 0; });
  for (engine::NodeIndex n = 0; n < state_.NumNodes(); ++n) run.nodes.push_back(state_.NodeName(n));
  run.profile = engine_.profile().name;
  run.capacity = state_.Capacity();
  run.end_time = now_;
  run.cycles = loop.cycles;
  for (int q = 0; q < state_.Quotas().NumQueues(); ++q) {
    const core::QueueSpec& spec = state_.Quotas().Spec(q);
    metrics::QueueInfo info{spec.name, spec.cohort, 0, 0};
    if (const core::QuotaLine* gpu = spec.Line(core::kGpu)) {
      info.nominal_gpus = gpu->nominal;
      if (!spec.cohort.empty()) {
        info.lendable_gpus = gpu->lending_limit ? *gpu->lending_limit : gpu->nominal;
      }
    }
    run.queues.push_back(std::move(info));
  }
  run.deadlocked = false;
  run.partial = stopped;
  for (JobIndex j = 0; j < state_.NumJobs(); ++j) {
    const engine::JobState& js = state_.Job(j);
    const engine::JobHistory& sj = scheduler_.History(j);
    metrics::JobRecord r;
    r.name = js.spec->name;
    r.namespace_name = js.spec->namespace_name;
    r.submit = js.spec->submit_time;
    r.first_start = sj.clock.FirstEntered(JobPhase::kLaunching);
    r.final_phase = js.phase;
    if (core::IsFinal(js.phase)) r.completion = js.phase_since;
    r.admission_seq = sj.admission_seq;
    const core::Time end = core::IsFinal(js.phase) ? js.phase_since : now_;
    r.launching = sj.clock.TimeIn(JobPhase::kLaunching, end) +
                  sj.clock.TimeIn(JobPhase::kCheckpointing, end) +
                  sj.clock.TimeIn(JobPhase::kStopping, end);
    r.running = sj.clock.TimeIn(JobPhase::kRunningProtected, end) +
                sj.clock.TimeIn(JobPhase::kRunning, end);
    // Waiting for room: before its first start, and in Standby after a stop
    // (a preemption, a lost task) until it relaunched. That is the queueing
    // delay of the Tiresias and Pollux papers, not launching. The three add
    // up to end - submit.
    const core::Time entered = sj.clock.FirstEntered(JobPhase::kWaiting);
    r.queueing = std::max(0.0, (entered != core::kNever ? entered : end) - r.submit) +
                 sj.clock.TimeIn(JobPhase::kWaiting, end) +
                 sj.clock.TimeIn(JobPhase::kStarving, end) +
                 sj.clock.TimeIn(JobPhase::kStandby, end);
    r.reallocations = sj.reallocations;
    r.preemptions = sj.preemptions;
    r.scale_events = sj.scale_events;
    r.lost_gpu_seconds = sj.lost_gpu_seconds;
    r.max_nodes = sj.max_nodes;
    r.max_switches = sj.max_switches;
    r.final_workers = js.placed_workers > 0 ? js.placed_workers : js.target_workers;
    r.ideal_runtime = IdealRuntime(*js.spec);
    r.gpus = js.spec->Demand(js.spec->role(core::Role::kWorker).replicas)[core::kGpu];
    if (js.queue >= 0) r.queue = js.spec->queue;
    r.stuck = !stopped && !core::IsFinal(js.phase);
    run.deadlocked = run.deadlocked || r.stuck;
    r.reason = sj.reason;
    if (livelock && r.stuck) {
      r.reason = fmt::format(
          "run stopped at {:g}s: {} scheduling cycles in a row without any job training, "
          "arriving or ending (livelock); last reason: {}",
          now_, loop.max_idle_cycles, sj.reason.empty() ? "none" : sj.reason);
    }
    if (options_.timeline && r.stuck) {
      run.events.push_back(metrics::JobEvent{now_, j, "stuck", -1, -1,
                                             r.reason.empty() ? "never started" : r.reason});
    }
    run.jobs.push_back(std::move(r));
  }
  if (progress != nullptr) {
    progress->jobs_finished.store(static_cast<int64_t>(specs.size()) - scheduler_.Unfinished());
    progress->now.store(now_);
    progress->done.store(true);
  }
}

}  // namespace

core::Status CheckRunnable(const config::WorkloadSpec& workload) {
  for (const auto& job : workload.jobs) {
    const auto& tp = job.throughput;
    if (!tp.HasRates()) {
      return core::Errorf("{}: job '{}': throughput: model '{}' is not resolved", workload.source,
                          job.name, tp.model);
    }
    const int min = job.role(core::Role::kWorker).min_replicas;
    const double rate = tp.Rate(min);
    if (rate <= 0) {
      return core::Errorf(
          "{}: job '{}': throughput: the rate at minReplicas {} workers is 0 (the table starts at "
          "{} workers), so the job could never finish",
          workload.source, job.name, min, tp.FirstSize());
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

core::Status CheckQueues(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload) {
  if (cluster.queues.empty()) return {};
  std::set<std::string_view> declared;
  for (const core::QueueSpec& q : cluster.queues) declared.insert(q.name);
  for (const auto& job : workload.jobs) {
    // A job that names no queue is in "default", which runs without quota
    // unless the cluster declares it.
    if (job.queue == "default" || declared.contains(job.queue)) continue;
    std::string names;
    for (const core::QueueSpec& q : cluster.queues) {
      if (names.size() > 200) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "" : ", ") + q.name;
    }
    return core::Errorf("{}: job '{}': queue: no queue '{}' in the cluster (it declares {})",
                        workload.source, job.name, job.queue, names);
  }
  return {};
}

namespace {

// SimOptions::alone: each declared queue's jobs again, alone on its
// nominal quota; their JCTs into `result`'s records.
core::Status RunAlone(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
                      const engine::Engine& engine, const SimOptions& options, SimResult& result) {
  SimOptions alone;
  alone.backoff_initial = options.backoff_initial;
  alone.backoff_max = options.backoff_max;
  alone.timeline = false;
  alone.stop = options.stop;
  for (const core::QueueSpec& q : cluster.queues) {
    std::vector<size_t> mine;
    for (size_t j = 0; j < workload.jobs.size(); ++j) {
      if (workload.jobs[j].queue == q.name) mine.push_back(j);
    }
    if (mine.empty()) continue;
    core::ClusterSpec own = cluster;
    own.queues = {q};
    own.queues[0].cohort.clear();
    config::WorkloadSpec jobs;
    jobs.source = workload.source;
    jobs.start = workload.start;
    jobs.jobs.reserve(mine.size());
    for (size_t j : mine) jobs.jobs.push_back(workload.jobs[j]);
    DLSCHED_TRY_LET(run, Simulate(own, jobs, engine, alone));
    if (run->run.partial) return {};
    for (size_t k = 0; k < mine.size(); ++k) {
      const metrics::JobRecord& r = run->run.jobs[k];
      if (r.final_phase == JobPhase::kCompleted) {
        result.run.jobs[mine[k]].alone_jct = r.completion - r.submit;
      }
    }
  }
  return {};
}

}  // namespace

core::Result<SimResult> Simulate(const core::ClusterSpec& cluster,
                                 const config::WorkloadSpec& workload, const engine::Engine& engine,
                                 const SimOptions& options) {
  DLSCHED_TRY(CheckRunnable(workload));
  DLSCHED_TRY(CheckQueues(cluster, workload));
  Simulation sim(cluster, workload, engine, options);
  DLSCHED_TRY_LET(result, sim.Run());
  if (options.alone && !result->run.partial)
    DLSCHED_TRY(RunAlone(cluster, workload, engine, options, *result));
  return result;
}

core::Status CheckStart(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
                        const engine::Engine& engine) {
  // Stopped before its first cycle: only the setup runs.
  const std::atomic<bool> stop{true};
  SimOptions options;
  options.timeline = false;
  options.stop = &stop;
  DLSCHED_TRY_LET(run, Simulate(cluster, workload, engine, options));
  return {};
}

}  // namespace dlsched::sim
