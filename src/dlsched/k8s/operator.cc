#include "dlsched/k8s/operator.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

Operator::Operator(RestConfig config, const engine::Engine& engine, OperatorOptions options)
    : config_(std::move(config)),
      engine_(engine),
      options_(std::move(options)),
      client_(config_),
      scheduler_(empty_cluster_, engine, *this),
      state_(scheduler_.state()),
      start_(std::chrono::steady_clock::now()) {}

Operator::~Operator() { Stop(); }

core::Time Operator::Now() const {
  if (options_.clock) return options_.clock() + clock_offset_;
  return clock_offset_ +
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Operator::Log(std::string_view level, std::string_view msg, const json& fields) {
  json line = {{"ts", NowRfc3339()}, {"level", level}, {"msg", msg}};
  if (fields.is_object()) line.update(fields);
  if (options_.log) {
    options_.log(line.dump());
  } else {
    std::fprintf(stderr, "%s\n", line.dump().c_str());
  }
}

std::string Operator::PodsPath(const std::string& ns) const {
  return fmt::format("/api/v1/namespaces/{}/pods", ns);
}

std::string Operator::JobPath(const TrainingJob& tj) const {
  return fmt::format("/apis/{}/{}/namespaces/{}/{}/{}", kGroup, kVersion, tj.namespace_name,
                     kPlural, tj.name);
}

std::string Operator::PodNameOf(TaskRef t) const {
  const TrainingJob& tj = tjs_[t.job];
  std::string base = PodName(tj.name, t.role, t.index);
  auto it = pod_names_.find(tj.namespace_name + "/" + base);
  return it == pod_names_.end() ? base : it->second;
}

std::string Operator::PodKey(TaskRef t) const {
  return tjs_[t.job].namespace_name + "/" + PodNameOf(t);
}

void Operator::NameNewPod(TaskRef t) {
  const TrainingJob& tj = tjs_[t.job];
  const std::string& ns = tj.namespace_name;
  const std::string kept = PodNameOf(t);
  auto pod = pods_->Get(ns + "/" + kept);
  if (!pod || (!Terminated(*pod) && !Terminating(*pod))) return;
  const std::string base = PodName(tj.name, t.role, t.index);
  auto name = [&](int n) { return n == 0 ? base : fmt::format("{}-{}", base, n); };
  int n = 1;
  if (kept.size() > base.size() + 1) {
    const char* digits = kept.data() + base.size() + 1;
    std::from_chars(digits, kept.data() + kept.size(), n);
    ++n;
  }
  while (pods_->Get(ns + "/" + name(n))) ++n;
  pod_names_[ns + "/" + base] = name(n);
  // An earlier run's success is of no use to the job running again: it goes
  // (the task keeps one pod). A failed pod stays for its logs, and ...
  if (PodPhase(*pod) == "Succeeded" && !Terminating(*pod)) {
    Call("DELETE", PodsPath(ns) + "/" + kept);
  }
  // ... finished ones before it go.
  for (int k = 0; k < n; ++k) {
    if (name(k) == kept) continue;
    auto old = pods_->Get(ns + "/" + name(k));
    if (old && Terminated(*old) && !Terminating(*old) && ControllerUid(*old) == tj.uid) {
      Call("DELETE", PodsPath(ns) + "/" + name(k));
    }
  }
}

core::Result<Response> Operator::Call(std::string_view method, const std::string& path,
                                      const json& body, std::string_view content_type) {
  if (options_.crash_after_calls > 0 && stats_.api_calls >= options_.crash_after_calls) {
    return core::Errorf("{} {}: the operator is down (test hook)", method, path);
  }
  if (method != "GET" && options_.may_write && !options_.may_write()) {
    ++stats_.api_errors[0];
    return core::Errorf("{} {}: withheld: this replica no longer holds the leader lease", method,
                        path);
  }
  ++stats_.api_calls;
  auto r = client_.Request(method, path, body.is_null() ? "" : body.dump(), content_type);
  if (!r) {
    ++stats_.api_errors[0];
    Log("error", "API request failed", {{"error", r.error().message}});
  } else if (r->status >= 400) {
    ++stats_.api_errors[r->status];
  }
  return r;
}

core::Status Operator::Start(double sync_seconds) {
  auto enqueue = [this](std::string prefix) {
    InformerHandlers h;
    h.on_add = [this, prefix](const json& o) { queue_.Add(prefix + ObjectKey(o)); };
    h.on_update = [this, prefix](const json&, const json& o) { queue_.Add(prefix + ObjectKey(o)); };
    h.on_delete = [this, prefix](const json& o) { queue_.Add(prefix + ObjectKey(o)); };
    return h;
  };
  const std::string jobs_path = options_.namespace_name.empty()
                                    ? fmt::format("/apis/{}/{}/{}", kGroup, kVersion, kPlural)
                                    : fmt::format("/apis/{}/{}/namespaces/{}/{}", kGroup, kVersion,
                                                  options_.namespace_name, kPlural);
  nodes_ =
      std::make_unique<Informer>(config_, "/api/v1/nodes", enqueue("node/"), options_.informer);
  pods_ = std::make_unique<Informer>(config_, "/api/v1/pods", enqueue("pod/"), options_.informer);
  jobs_ = std::make_unique<Informer>(config_, jobs_path, enqueue("tj/"), options_.informer);
  nodes_->Start();
  pods_->Start();
  jobs_->Start();
  StartQueueInformers(enqueue);
  for (Informer* inf :
       {nodes_.get(), pods_.get(), jobs_.get(), queue_objects_.get(), cohort_objects_.get()}) {
    if (inf == nullptr) continue;
    const bool synced = inf->WaitForSync(sync_seconds);
    inf->RethrowFailure();
    if (!synced) {
      return core::Errorf("{}: could not list nodes, pods, trainingjobs and queues within {} s",
                          config_.server, sync_seconds);
    }
  }
  Adopt();
  Log("info", "started",
      {{"profile", engine_.profile().name},
       {"nodes", state_.NumPresentNodes()},
       {"jobs", state_.NumJobs()}});
  return {};
}

void Operator::Stop() {
  queue_.ShutDown();
  for (auto* inf :
       {nodes_.get(), pods_.get(), jobs_.get(), queue_objects_.get(), cohort_objects_.get()}) {
    if (inf != nullptr) inf->Stop();
  }
}

void Operator::Cycle() {
  const auto t0 = std::chrono::steady_clock::now();
  engine::CycleOptions options;
  options.cycle = cycle_seq_++;
  const engine::Plan plan = scheduler_.Cycle(Now(), options);
  FlushBinds();
  dirty_ = false;
  queues_changed_ = true;  // usage and jobs per queue
  for (const engine::Action& a : plan.actions) {
    const JobIndex j = a.task.job;
    switch (a.kind) {
      case engine::ActionKind::kStart: {
        std::string nodes;
        const engine::JobState& js = state_.Job(j);
        for (NodeIndex n : js.task_node) {
          if (n == engine::kNoNode) continue;
          const std::string& name = state_.NodeName(n);
          if (nodes.find(name) == std::string::npos) nodes += (nodes.empty() ? "" : ",") + name;
        }
        Event(j, "Normal", "Scheduled",
              fmt::format("started with {} workers on {}{}", a.workers, nodes,
                          state_.Job(j).queue >= 0 ? " in queue " + tjs_[j].job.queue : ""));
        queue_told_.erase(j);
        break;
      }
      case engine::ActionKind::kResize:
        ++stats_.scale_events;
        if (a.preempted) ++stats_.preemptions;
        Event(j, a.preempted ? "Warning" : "Normal", a.preempted ? "Preempted" : "Scaled",
              fmt::format("{} workers{}: {}", a.workers,
                          a.restart ? " (restart from checkpoint)" : "", a.reason));
        status_dirty_.push_back(j);
        break;
      case engine::ActionKind::kStop:
        ++stats_.preemptions;
        Event(j, "Warning", "Preempted", a.reason);
        break;
      case engine::ActionKind::kWait:
        status_dirty_.push_back(j);
        if (QueueMissing(j)) {
          if (queue_told_.insert(j).second) {
            Event(j, "Warning", "QueueNotFound",
                  fmt::format("no Queue named {}: the job waits until one is created",
                              tjs_[j].job.queue));
          }
          break;
        }
        if (state_.Job(j).queue >= 0 && a.reason.find("'s quota: ") != std::string::npos &&
            queue_told_.insert(j).second) {
          Event(j, "Normal", "Pending", a.reason);
        }
        if (a.status == engine::WaitStatus::kUnschedulableUnresolvable &&
            !never_fits_.contains(j)) {
          never_fits_.insert(j);
          Event(j, "Warning", "Unschedulable", a.reason);
        }
        break;
      default:
        break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++stats_.cycles;
  stats_.cycle_seconds_sum += seconds;
  for (size_t b = 0; b < std::size(OperatorStats::kCycleBuckets); ++b) {
    if (seconds <= OperatorStats::kCycleBuckets[b]) ++stats_.cycle_bucket[b];
  }
  if (options_.on_plan) options_.on_plan(Now(), plan);
  last_cycle_ = std::chrono::steady_clock::now();
}

void Operator::Step(double max_wait_seconds) {
  // An informer's thread that failed (out of memory) fails the operator
  // here, on its main thread.
  for (const Informer* inf :
       {nodes_.get(), pods_.get(), jobs_.get(), queue_objects_.get(), cohort_objects_.get()}) {
    if (inf != nullptr) inf->RethrowFailure();
  }
  using Clock = WorkQueue::Clock;
  const Clock::time_point now = Clock::now();
  Clock::time_point deadline = now + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(max_wait_seconds));
  auto at = [&](core::Time t) {
    return now + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(std::max(0.0, t - Now())));
  };
  if (dirty_) {
    // Due now, unless it waits for releasing pods: then wake on news.
    deadline = releasing_.empty() ? now : std::min(deadline, now + std::chrono::milliseconds(20));
  }
  if (!timers_.empty()) deadline = std::min(deadline, at(timers_.top().at));
  if (!job_timers_.empty()) deadline = std::min(deadline, at(job_timers_.top().at));
  if (scheduler_.Due(Now())) {
    deadline = now;
  } else if (const core::Time wake = scheduler_.NextWakeup(Now()); wake != core::kNever) {
    deadline = std::min(deadline, at(wake));
  }
  if (auto key = queue_.Get(deadline)) {
    SyncKey(*key);
    queue_.Done(*key);
    while (auto more = queue_.Get(Clock::now())) {
      SyncKey(*more);
      queue_.Done(*more);
    }
  }
  if (queue_news_) {
    queue_news_ = false;
    ReadQueueObjects();
  }
  while (!timers_.empty() && timers_.top().at <= Now()) {
    const Timer t = timers_.top();
    timers_.pop();
    scheduler_.OnTimer(t.kind, t.job, t.epoch);
    dirty_ = true;
  }
  FireJobTimers();
  std::erase_if(retry_, [](const std::function<bool()>& again) { return again(); });
  // Releasing pods the cache never saw go: ask the server.
  for (auto it = releasing_.begin(); it != releasing_.end();) {
    const std::string key = it->first;
    ++it;
    if (pods_->Get(key)) continue;
    const std::string ns = key.substr(0, key.find('/'));
    auto r = Call("GET", PodsPath(ns) + "/" + key.substr(key.find('/') + 1));
    if (r && r->status == 404) Gone(key);
  }
  const auto resync = std::chrono::duration<double>(options_.resync_seconds);
  if (Clock::now() - last_resync_ > resync) {
    // Level-triggered: every job is reconciled at every resync, whatever
    // its phase (client-go's informer resync delivers every object again).
    last_resync_ = Clock::now();
    for (const json& tj : jobs_->List()) queue_.Add("tj/" + ObjectKey(tj));
  }
  // A cycle while any job waits for room: Waiting, Starving, or Standby
  // (stopped, or put back after a failed bind).
  const bool waiting = !state_.JobsInPhase(JobPhase::kWaiting).empty() ||
                       !state_.JobsInPhase(JobPhase::kStarving).empty() ||
                       !state_.JobsInPhase(JobPhase::kStandby).empty();
  if (waiting && Clock::now() - last_cycle_ > resync) dirty_ = true;
  ApplyRejects();
  FinishSuspensions();
  if (scheduler_.Due(Now())) dirty_ = true;
  bool wait_for_releases = false;
  if (dirty_ && !releasing_.empty()) {
    // Give the pods being deleted a moment to go, so what they free is
    // placed as free (kube-scheduler would place around them).
    const auto now_wall = Clock::now();
    if (!release_wait_since_) release_wait_since_ = now_wall;
    wait_for_releases = now_wall - *release_wait_since_ <
                        std::chrono::duration<double>(options_.release_wait_seconds);
  }
  if (dirty_ && !wait_for_releases) {
    release_wait_since_.reset();
    Cycle();
  }
  FlushStatus();
  WriteQueueStatus();
  stats_.jobs_by_phase.clear();
  for (int p = 0; p < core::kNumJobPhases; ++p) {
    const auto phase = static_cast<JobPhase>(p);
    stats_.jobs_by_phase[std::string(core::PhaseName(phase))] =
        static_cast<int64_t>(state_.JobsInPhase(phase).size());
  }
  stats_.synced = true;
  std::lock_guard lock(snapshot_mu_);
  snapshot_ = stats_;
}

core::Time Operator::NextWakeup() const {
  core::Time next = timers_.empty() ? core::kNever : timers_.top().at;
  if (!job_timers_.empty()) next = std::min(next, job_timers_.top().at);
  return std::min(next, scheduler_.NextWakeup(Now()));
}

void Operator::Run(const std::atomic<bool>& stop) {
  while (!stop && !queue_.ShuttingDown()) Step(0.5);
}

OperatorStats Operator::Stats() const {
  std::lock_guard lock(snapshot_mu_);
  return snapshot_;
}

}  // namespace dlsched::k8s
