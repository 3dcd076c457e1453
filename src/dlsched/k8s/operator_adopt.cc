// What exists when the operator starts: nodes, jobs and pods adopted; a
// new TrainingJob decoded; the live queue as simulation inputs (Snapshot).

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/credentials.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

// What exists when the operator starts (or restarts): nodes, then jobs in
// creation order, then every pod. A job whose whole gang is bound runs on
// with those pods; a job with part of a gang bound gets those pods deleted
// (they count on their nodes until gone) and waits again.
namespace {

// When a job an operator has seen (it has a status phase) was submitted,
// wall clock: its status.submitTime as that operator wrote it, else its
// creationTimestamp; none for a job no operator has seen yet.
std::optional<double> SubmittedWall(const json& object) {
  const json status = object.value("status", json::object());
  if (!status.is_object() || status.value("phase", "").empty()) return std::nullopt;
  for (const std::string& text :
       {status.value("submitTime", std::string()), Meta(object, "creationTimestamp")}) {
    if (auto t = ParseRfc3339(text)) {
      return std::chrono::duration<double>(t->time_since_epoch()).count();
    }
  }
  return std::nullopt;
}

}  // namespace

void Operator::Adopt() {
  // Keys queued by the informers so far are covered here.
  while (auto key = queue_.Get(WorkQueue::Clock::now())) queue_.Done(*key);
  adopting_ = true;
  for (const json& node : nodes_->List()) SyncNode(ObjectKey(node));
  ReadQueueObjects();
  // In the order they were submitted (ties by uid), as the operator that
  // saw them arrive ordered them; jobs no operator has seen after those.
  struct Found {
    json object;
    std::optional<double> submitted;  // wall clock; none: not seen yet
  };
  std::vector<Found> jobs;
  const double wall = WallSeconds();
  double oldest = wall;
  for (json& object : jobs_->List()) {
    const std::optional<double> at = SubmittedWall(object);
    if (at) oldest = std::min(oldest, *at);
    jobs.push_back({std::move(object), at});
  }
  std::sort(jobs.begin(), jobs.end(), [](const Found& a, const Found& b) {
    const std::string ua = Meta(a.object, "uid"), ub = Meta(b.object, "uid");
    const double sa = a.submitted.value_or(std::numeric_limits<double>::infinity());
    const double sb = b.submitted.value_or(std::numeric_limits<double>::infinity());
    return std::tie(sa, ua) < std::tie(sb, ub);
  });
  // Waiting ages go on from there: the clock starts late enough that the
  // oldest submission is at time >= 0 on it.
  clock_offset_ = std::max(0.0, (wall - oldest) - Now());
  for (const Found& found : jobs) NewJob(found.object, /*adopting=*/true, found.submitted);
  adopting_ = false;
  for (const json& pod : pods_->List()) SyncPod(ObjectKey(pod));
  dirty_ = true;
}

void Operator::NewJob(const json& object, bool adopting, std::optional<double> submitted) {
  auto decoded = DecodeTrainingJob(object);
  if (!decoded) {
    const std::string key = "tj/" + Meta(object, "namespace") + "/" + Meta(object, "name");
    if (ReportInvalid(object, decoded.error().message)) {
      queue_.Forget(key);
    } else {
      queue_.AddRateLimited(key);  // its status again, after its backoff
    }
    return;
  }
  if (!ResolvePriority(*decoded, object)) return;
  TrainingJob& tj = tjs_.emplace_back(std::move(*decoded));
  PlaceInQueue(tj);
  // A job seen before (a restart, a failover) keeps its submission time.
  const double wall = WallSeconds();
  tj.job.submit_time = submitted ? Now() - std::max(0.0, wall - *submitted) : Now();
  const JobIndex j = scheduler_.AddJob(&tj.job, Now());
  last_status_.emplace_back();
  submitted_.push_back(MicroTime(submitted.value_or(wall)));
  kept_.emplace_back();
  kept_[j].spec = object.value("spec", json::object());
  by_key_[tj.namespace_name + "/" + tj.name] = j;
  ReadBackStatus(j, object);
  if (!tj.run_policy.suspend) StartClock(j);
  if (adopting && AdoptJob(j, object)) {
    if (core::IsFinal(state_.Job(j).phase)) ScheduleTtl(j);
    if (tj.run_policy.suspend) Suspend(j);
    return;
  }
  scheduler_.JobsAdded();
  const JobIndex arrived[] = {j};
  scheduler_.Arrive(arrived);
  if (tj.run_policy.suspend) Suspend(j);
  dirty_ = true;
}

// A TrainingJob that does not decode: its status says why (once per
// generation), with a Warning Event. It is decoded again when its spec
// changes (a new metadata.generation).
bool Operator::ReportInvalid(const json& object, const std::string& error) {
  const std::string uid = Meta(object, "uid");
  const std::string ns = Meta(object, "namespace");
  const std::string name = Meta(object, "name");
  const int64_t generation = object.value("metadata", json::object()).value("generation", 0);
  Log("error", "invalid TrainingJob", {{"job", ns + "/" + name}, {"error", error}});
  json status = object.value("status", json::object());
  if (status.is_object() && status.value("phase", "") == "Invalid" &&
      status.value("reason", "") == error) {
    invalid_[uid] = generation;  // reported
    return true;
  }
  json updated = object;
  updated["status"] = {{"phase", "Invalid"},
                       {"reason", error},
                       {"conditions", json::array({{{"type", "Invalid"},
                                                    {"status", "True"},
                                                    {"reason", "InvalidSpec"},
                                                    {"message", error},
                                                    {"lastTransitionTime", NowRfc3339()}}})}};
  auto r = Call(
      "PUT",
      fmt::format("/apis/{}/{}/namespaces/{}/{}/{}/status", kGroup, kVersion, ns, kPlural, name),
      updated);
  if (!r || (r->status >= 300 && r->status != 404)) return false;  // tried again
  invalid_[uid] = generation;
  Call("POST", fmt::format("/api/v1/namespaces/{}/events", ns),
       MakeEvent(ns, name, uid, "Warning", "InvalidSpec", error, NowRfc3339()));
  return true;
}

// The pods of job `j` found when the operator starts.
struct Operator::FoundPods {
  std::vector<std::pair<TaskRef, NodeIndex>> bound;  // bound and live
  // The GPU device of each bound pod's share (kGpuDeviceAnnotation), -1
  // when it names none.
  std::map<std::pair<int, int>, int> devices;
  // PodName -> the name and uid of the task's pod, of those.
  std::map<std::string, std::pair<std::string, std::string>> pods;
  std::set<int> succeeded_workers;
  bool chief_succeeded = false;
};

Operator::FoundPods Operator::FindPods(JobIndex j) const {
  const TrainingJob& tj = tjs_[j];
  FoundPods found;
  for (const json& pod : pods_->List()) {
    auto task = PodTaskOf(pod);
    if (!task || task->job != tj.name || Meta(pod, "namespace") != tj.namespace_name ||
        ControllerUid(pod) != tj.uid) {
      continue;
    }
    if (PodPhase(pod) == "Succeeded") {
      if (task->role == core::Role::kWorker) found.succeeded_workers.insert(task->index);
      if (task->role == core::Role::kChief) found.chief_succeeded = true;
    }
    if (Terminated(pod) || Terminating(pod) || NodeNameOf(pod).empty()) continue;
    const NodeIndex n = state_.FindNode(NodeNameOf(pod));
    if (n == engine::kNoNode) continue;
    found.bound.push_back({TaskRef{j, task->role, task->index}, n});
    if (const int d = GpuDeviceOf(pod); d >= 0) {
      found.devices[{static_cast<int>(task->role), task->index}] = d;
    }
    found.pods[PodName(tj.name, task->role, task->index)] = {Meta(pod, "name"), Meta(pod, "uid")};
  }
  return found;
}

void Operator::DeletePodOf(TaskRef t) {
  const TrainingJob& tj = tjs_[t.job];
  Call("DELETE", PodsPath(tj.namespace_name) + "/" + PodNameOf(t),
       json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}});
}

// A job found when the operator starts: true when it is adopted as it is
// (finished, or running with its whole gang); false when it waits again
// (what it had bound is deleted).
bool Operator::AdoptJob(JobIndex j, const json& object) {
  const TrainingJob& tj = tjs_[j];
  const json status = object.value("status", json::object());
  const std::string phase = status.is_object() ? status.value("phase", "") : "";
  const int64_t seq = status.is_object() ? status.value("admissionOrder", int64_t{-1}) : -1;
  // Progress and service as last written (the operator before the
  // restart estimated them), for a running job and a preempted one alike.
  // The steps of its last checkpoint, where a loss takes it back to (none
  // known from a status that does not say: 0, as for a new job).
  bool checkpoint_known = false;
  if (status.is_object()) {
    const json progress = status.value("progress", json::object());
    RestoreService(j, progress);
    const json checkpoint =
        progress.is_object() ? progress.value("checkpointSteps", json()) : json();
    checkpoint_known = checkpoint.is_number();
    // What its history said: the failures counted and the last reason.
    const json failures = status.value("failures", json());
    scheduler_.Restore(
        j,
        failures.is_number_integer() ? static_cast<int>(std::clamp<int64_t>(
                                           failures.get<int64_t>(), 0, core::kMaxBackoffLimit))
                                     : 0,
        status.value("reason", std::string()), checkpoint_known ? checkpoint.get<double>() : 0);
  }
  if (phase == "Completed" || phase == "Failed") {
    scheduler_.Adopt(j, phase == "Completed" ? JobPhase::kCompleted : JobPhase::kFailed, seq);
    last_status_[j] = status;
    return true;
  }
  // Its bound, live pods: a whole gang runs on; anything less is deleted.
  const FoundPods found = FindPods(j);
  // Its live pods by the names they have (an earlier run's may keep the
  // base name).
  for (const auto& [base, pod] : found.pods) {
    if (pod.first != base) pod_names_[tj.namespace_name + "/" + base] = pod.first;
  }
  const core::RoleSpec& w = tj.job.role(core::Role::kWorker);
  // Finished while no operator watched (or before it wrote so): the chief,
  // or without one k >= minReplicas workers (any indices: a scale-in keeps
  // those on the nodes it spares) with none still live, succeeded. What is
  // still live (parameter servers) is deleted.
  const bool live_workers = std::any_of(found.bound.begin(), found.bound.end(), [](const auto& b) {
    return b.first.role == core::Role::kWorker;
  });
  const int k = static_cast<int>(found.succeeded_workers.size());
  const bool finished = tj.job.role(core::Role::kChief).replicas > 0
                            ? found.chief_succeeded
                            : !live_workers && k >= w.min_replicas && k > 0;
  if (finished) {
    for (const auto& [t, n] : found.bound) DeletePodOf(t);
    scheduler_.Adopt(j, JobPhase::kCompleted, seq);
    status_dirty_.push_back(j);
    Log("info", "adopted finished job", {{"job", tj.namespace_name + "/" + tj.name}});
    return true;
  }
  int workers = 0, fixed = 0;
  bool valid = true;
  for (const auto& [t, n] : found.bound) {
    const int replicas =
        t.role == core::Role::kWorker ? w.max_replicas : tj.job.role(t.role).replicas;
    if (t.index >= replicas) valid = false;
    (t.role == core::Role::kWorker ? workers : fixed) += 1;
  }
  valid = valid && !found.bound.empty() && workers >= w.min_replicas && workers <= w.max_replicas &&
          fixed == tj.job.role(core::Role::kPS).replicas + tj.job.role(core::Role::kChief).replicas;
  if (!valid) {
    for (const auto& [t, n] : found.bound) {
      Log("info", "deleting pod of an incomplete gang", {{"pod", PodKey(t)}});
      DeletePodOf(t);
    }
    // Whatever ran of it stops: it starts again from its last checkpoint,
    // as after any loss (a job that waited is at its checkpoint already).
    if (checkpoint_known) {
      scheduler_.MutableState().MutableJob(j).steps_done =
          scheduler_.History(j).checkpointed_steps;  // as Restore bounded it
    }
    return false;
  }
  // It trained on while no operator watched: at the rate last written,
  // since the estimate was last written.
  const json progress = status.is_object() ? status.value("progress", json::object()) : json();
  const json rate = progress.is_object() ? progress.value("stepsPerSecond", json()) : json();
  auto as_of = ParseRfc3339(progress.is_object() ? progress.value("asOf", "") : "");
  if (rate.is_number() && rate.get<double>() > 0 && as_of) {
    const double elapsed =
        std::clamp(WallSeconds() - std::chrono::duration<double>(as_of->time_since_epoch()).count(),
                   0.0, core::kMaxTime);
    engine::JobState& js = scheduler_.MutableState().MutableJob(j);
    js.steps_done =
        std::min(js.spec->total_steps,
                 js.steps_done + std::min(rate.get<double>(), core::kMaxRate) * elapsed);
    int64_t gpus = 0;
    for (const auto& [t, n] : found.bound) gpus += tj.job.role(t.role).resources[core::kGpu];
    js.attained = std::min(core::kMaxAttained, js.attained + static_cast<double>(gpus) * elapsed);
  }
  scheduler_.JobsAdded();
  for (const auto& [t, n] : found.bound) {
    const auto d = found.devices.find({static_cast<int>(t.role), t.index});
    scheduler_.Place(t, n, false, d == found.devices.end() ? -1 : d->second);
    owned_[PodKey(t)] = Owned{t, found.pods.at(PodName(tj.name, t.role, t.index)).second, true};
  }
  // Progress as restored above; from here at the placement's rate.
  scheduler_.Adopt(j, JobPhase::kRunning, seq);
  last_status_[j] = status;
  status_dirty_.push_back(j);
  Log("info", "adopted running job",
      {{"job", tj.namespace_name + "/" + tj.name}, {"workers", workers}});
  return true;
}

void Operator::RestoreService(JobIndex j, const json& progress) {
  if (!progress.is_object()) return;
  engine::JobState& js = scheduler_.MutableState().MutableJob(j);
  auto number = [&](const char* key) -> std::optional<double> {
    const json& v = progress.value(key, json());
    if (!v.is_number()) return std::nullopt;
    return v.get<double>();
  };
  if (auto v = number("steps")) js.steps_done = std::clamp(*v, 0.0, js.spec->total_steps);
  if (auto v = number("attainedGpuSeconds")) js.attained = std::clamp(*v, 0.0, core::kMaxAttained);
  if (auto v = number("launchGpuSeconds"))
    js.launch_attained = std::clamp(*v, 0.0, core::kMaxAttained);
  // What the policy keeps in status (RecordField::in_status).
  for (const engine::RecordField* f : state_.RecordFields()) {
    if (!f->in_status) continue;
    if (auto v = number(std::string(f->state.name).c_str())) {
      scheduler_.MutableState().SetRecord(j, *f, core::ClampState(f->state.kind, *v, js.attained));
    }
  }
}

OperatorSnapshot Operator::Snapshot() {
  OperatorSnapshot snap;
  // Pods of other owners, by node: what they request stays in use.
  std::map<std::string, core::Resources> reserved;
  for (const auto& [key, node] : foreign_) {
    auto pod = pods_->Get(key);
    if (!pod) continue;
    if (auto request = DecodePodRequest(*pod)) reserved[node] += request->request;
  }
  const core::Time now = Now();
  // What the workload's placed tasks request on each node.
  std::map<NodeIndex, core::Resources> ours;
  snap.workload.source = "snapshot";
  snap.workload.start = now;
  std::map<std::string, int> uses;  // names are unique per namespace only
  for (const TrainingJob& tj : tjs_) ++uses[tj.name];
  for (JobIndex j = 0; j < state_.NumJobs(); ++j) {
    const engine::JobState& js = state_.Job(j);
    if (js.removed || core::IsFinal(js.phase) || js.phase == JobPhase::kSubmitted) continue;
    Advance(j);
    const TrainingJob& tj = tjs_[j];
    core::JobSpec job = tj.job;
    if (uses[tj.name] > 1) job.name = tj.namespace_name + "/" + tj.name;
    if (!job.throughput.HasRates() || job.total_steps <= 0) {
      snap.without_progress.push_back(tj.namespace_name + "/" + tj.name);
      job.throughput.steps_per_s = {{1, 1.0}};
      job.throughput.locality_sensitivity = 0;
      job.total_steps = core::kMaxTime;
    }
    job.steps_done = std::min(js.steps_done, job.total_steps);
    job.attained = std::min(js.attained, core::kMaxAttained);
    job.launch_attained = std::min(js.launch_attained, core::kMaxAttained);
    for (const engine::RecordField* f : state_.RecordFields()) {
      const double v = state_.Record(j, *f);
      if (v == f->InitialFor(tj.job.submit_time)) continue;
      job.policy_state[std::string(f->state.name)] =
          core::ClampState(f->state.kind, v, job.attained);
    }
    if (js.placed_tasks > 0) {
      const engine::JobHistory& h = scheduler_.History(j);
      core::InitialState& in = job.initial.emplace();
      in.phase = js.phase;
      in.since = js.phase_since;
      in.first_start = h.clock.FirstEntered(JobPhase::kLaunching);
      if (in.first_start == core::kNever || in.first_start > in.since) in.first_start = in.since;
      in.last_launch = js.last_launch;
      in.admission_seq = h.admission_seq;
      if (js.phase == JobPhase::kStarving) in.phase = JobPhase::kWaiting;
      // Stopping or in Standby with tasks (an instant of a relaunch):
      // written as a launch of its placement beginning now.
      if (js.phase == JobPhase::kStopping || js.phase == JobPhase::kStandby) {
        in.phase = JobPhase::kLaunching;
        in.since = now;
      }
      for (int slot = 0; slot < static_cast<int>(js.task_node.size()); ++slot) {
        if (js.task_node[slot] == engine::kNoNode) continue;
        const TaskRef t = js.TaskAt(j, slot);
        in.tasks.push_back({t.role, t.index, state_.NodeName(js.task_node[slot])});
        ours[js.task_node[slot]] += job.role(t.role).resources;
      }
      if (js.phase == JobPhase::kCheckpointing) {
        for (const auto& [t, n] : h.held) {
          in.held.push_back({t.role, t.index, state_.NodeName(n)});
          ours[n] += job.role(t.role).resources;
        }
      }
    }
    snap.workload.jobs.push_back(std::move(job));
  }
  // Other owners' pods hold at most what is left of the node beside ours:
  // pods that ask for more than a node has (static pods, allocatable
  // lowered under running pods) leave it no room, and so does the replay,
  // which could not start from a node whose `reserved` is over its size.
  for (NodeIndex n = 0; n < state_.NumNodes(); ++n) {
    if (!state_.Present(n)) continue;
    const core::NodeSpec& spec = state_.NodeSpecOf(n);
    if (auto it = reserved.find(spec.name); it != reserved.end()) {
      const core::Resources left = Max(spec.allocatable - ours[n], core::Resources());
      core::Resources& r = snap.cluster.reserved[spec.name];
      core::FirstId(it->second, left, [&](core::ResourceId id) {
        if (const int64_t held = std::min(it->second[id], left[id]); held != 0) r[id] = held;
        return false;
      });
      if (r.IsZero()) snap.cluster.reserved.erase(spec.name);
    }
    snap.cluster.nodes.push_back(spec);
  }
  snap.cluster.queues = engine_queues_;
  snap.cluster.cohorts = engine_cohorts_;
  return snap;
}

}  // namespace dlsched::k8s
