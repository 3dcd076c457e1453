#include "dlsched/k8s/operator.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/objects.h"

namespace dlsched::k8s {

using core::JobPhase;
using engine::JobIndex;
using engine::NodeIndex;
using engine::TaskRef;
using nlohmann::json;

namespace {

std::string Meta(const json& object, const char* key) {
  const json meta = object.value("metadata", json::object());
  return meta.is_object() ? meta.value(key, std::string()) : std::string();
}

std::string PodPhase(const json& pod) {
  const json status = pod.value("status", json::object());
  return status.is_object() ? status.value("phase", std::string()) : std::string();
}

bool Terminated(const json& pod) {
  const std::string phase = PodPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

std::string NodeNameOf(const json& pod) {
  const json spec = pod.value("spec", json::object());
  return spec.is_object() ? spec.value("nodeName", std::string()) : std::string();
}

bool Terminating(const json& pod) {
  const json meta = pod.value("metadata", json::object());
  return meta.is_object() && meta.contains("deletionTimestamp") &&
         !meta["deletionTimestamp"].is_null();
}

// The uid of the pod's controller owner, if any.
std::string ControllerUid(const json& pod) {
  const json meta = pod.value("metadata", json::object());
  if (!meta.is_object() || !meta.contains("ownerReferences") ||
      !meta["ownerReferences"].is_array()) {
    return "";
  }
  for (const json& ref : meta["ownerReferences"]) {
    if (ref.is_object() && ref.value("controller", false)) return ref.value("uid", "");
  }
  return "";
}

}  // namespace

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
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
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

std::string Operator::PodKey(TaskRef t) const {
  const TrainingJob& tj = tjs_[t.job];
  return tj.namespace_name + "/" + PodName(tj.name, t.role, t.index);
}

core::Result<Response> Operator::Call(std::string_view method, const std::string& path,
                                      const json& body, std::string_view content_type) {
  if (options_.crash_after_calls > 0 && stats_.api_calls >= options_.crash_after_calls) {
    return core::Errorf("{} {}: the operator is down (test hook)", method, path);
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
  for (Informer* inf : {nodes_.get(), pods_.get(), jobs_.get()}) {
    const bool synced = inf->WaitForSync(sync_seconds);
    inf->RethrowFailure();
    if (!synced) {
      return core::Errorf("{}: could not list nodes, pods and trainingjobs within {} s",
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
  for (auto* inf : {nodes_.get(), pods_.get(), jobs_.get()}) {
    if (inf != nullptr) inf->Stop();
  }
}

// What exists when the operator starts (or restarts): nodes, then jobs in
// creation order, then every pod. A job whose whole gang is bound runs on
// with those pods; a job with part of a gang bound gets those pods deleted
// (they count on their nodes until gone) and waits again.
void Operator::Adopt() {
  // Keys queued by the informers so far are covered here.
  while (auto key = queue_.Get(WorkQueue::Clock::now())) queue_.Done(*key);
  for (const json& node : nodes_->List()) SyncNode(ObjectKey(node));
  std::vector<json> jobs = jobs_->List();
  std::stable_sort(jobs.begin(), jobs.end(), [](const json& a, const json& b) {
    return Meta(a, "creationTimestamp") < Meta(b, "creationTimestamp");
  });
  for (const json& tj : jobs) NewJob(tj, /*adopting=*/true);
  for (const json& pod : pods_->List()) SyncPod(ObjectKey(pod));
  dirty_ = true;
}

void Operator::SyncKey(const std::string& key) {
  if (key.starts_with("node/")) {
    SyncNode(key.substr(5));
  } else if (key.starts_with("pod/")) {
    SyncPod(key.substr(4));
  } else if (key.starts_with("tj/")) {
    SyncJob(key.substr(3));
  }
}

void Operator::SyncNode(const std::string& name) {
  const NodeIndex known = state_.FindNode(name);
  auto object = nodes_->Get(name);
  dirty_ = true;
  if (!object) {
    if (known != engine::kNoNode) {
      node_limits_.RemoveNode(name);
      scheduler_.RemoveNode(known, "removed");
      Log("info", "node removed", {{"node", name}});
    }
    return;
  }
  auto spec = DecodeNode(*object);
  if (!spec) {
    Log("error", "node ignored", {{"node", name}, {"error", spec.error().message}});
    return;
  }
  // Within the limits of a node and of the cluster (more than 1,024 GPUs
  // would break the free-GPU index, a total past 2^62 the engine's sums):
  // else the Node is left out, or keeps what it had.
  const core::LimitCheck broken = known == engine::kNoNode
                                      ? node_limits_.AddNode(*spec)
                                      : node_limits_.UpdateNode(name, spec->allocatable);
  if (broken) {
    std::string field = broken->field;
    if (field.starts_with("resources.")) field = "status.allocatable" + field.substr(9);
    Log("error", "node ignored",
        {{"node", name},
         {"error", fmt::format("Node {}: {}{}{}", core::EscapeText(name, 80), field,
                               field.empty() ? "" : ": ", broken->what)}});
    return;
  }
  if (known == engine::kNoNode) {
    scheduler_.AddNode(*spec);
    // Pods already bound there (foreign ones) count now.
    for (const json& pod : pods_->List()) {
      if (NodeNameOf(pod) == name) SyncPod(ObjectKey(pod));
    }
  } else {
    scheduler_.UpdateNode(known, *spec);
  }
}

void Operator::Gone(const std::string& key) {
  auto it = releasing_.find(key);
  if (it == releasing_.end()) return;
  scheduler_.PodGone(it->second.first);
  releasing_.erase(it);
  dirty_ = true;
}

void Operator::SyncPod(const std::string& key) {
  auto pod = pods_->Get(key);
  // A pod we deleted: gone once absent, replaced (another uid) or terminated.
  // (Without a uid, deleted before the cache saw it: any pod of the name.)
  if (auto it = releasing_.find(key); it != releasing_.end()) {
    const std::string& uid = it->second.second;
    if (!pod || (!uid.empty() && Meta(*pod, "uid") != uid) || Terminated(*pod)) Gone(key);
  }
  // A pod of a placed task. Until the cache has shown the pod we bound (its
  // uid), an absent pod or another one of that name (the one it replaced,
  // still terminating) is not news.
  if (auto it = owned_.find(key); it != owned_.end()) {
    Owned& owned = it->second;
    if (pod && !owned.uid.empty() && Meta(*pod, "uid") == owned.uid) owned.seen = true;
    const bool ours = pod && Meta(*pod, "uid") == owned.uid;
    const TaskRef t = owned.task;
    const JobIndex j = t.job;
    if (!owned.seen) {
      // Not seen yet: wait for the informer.
    } else if (!ours || Terminating(*pod) || PodPhase(*pod) == "Failed") {
      std::string why =
          !ours ? "pod deleted"
          : Terminating(*pod)
              ? "pod being deleted"
              : fmt::format("pod failed: {}",
                            pod->value("status", json::object()).value("reason", "Error"));
      if (ours && PodPhase(*pod) == "Failed" && !Terminating(*pod)) {
        // The training itself failed: the job fails (no restart loop).
        scheduler_.Fail(j, fmt::format("{} {}", PodName(tjs_[j].name, t.role, t.index), why));
      } else if (!state_.IsAssumed(t)) {
        scheduler_.TasksLost(std::span<const TaskRef>(&t, 1),
                             fmt::format("{} {}", PodName(tjs_[j].name, t.role, t.index), why));
      }
      dirty_ = true;
    } else if (PodPhase(*pod) == "Succeeded") {
      CheckCompletion(j);
    }
  }
  // Everything else bound and alive holds its node's resources as a
  // foreign task: other owners' pods, and ours the engine no longer holds.
  const bool hold = pod && !Terminated(*pod) && !NodeNameOf(*pod).empty() &&
                    !owned_.contains(key) && !releasing_.contains(key);
  const NodeIndex n = hold ? state_.FindNode(NodeNameOf(*pod)) : engine::kNoNode;
  if (n != engine::kNoNode) {
    auto it = foreign_.find(key);
    if (it == foreign_.end() || it->second != NodeNameOf(*pod)) {
      auto request = DecodePodRequest(*pod);
      if (!request) {
        Log("error", "pod ignored", {{"pod", key}, {"error", request.error().message}});
        return;
      }
      scheduler_.ForeignPodBound(key, n, request->request, request->scoring);
      foreign_[key] = NodeNameOf(*pod);
      dirty_ = true;
    }
  } else if (foreign_.erase(key) > 0) {
    scheduler_.ForeignPodGone(key);
    dirty_ = true;
  }
}

void Operator::SyncJob(const std::string& key) {
  auto object = jobs_->Get(key);
  auto it = by_key_.find(key);
  if (it != by_key_.end() && (!object || Meta(*object, "uid") != tjs_[it->second].uid)) {
    // Deleted (its pods go with it: ownerReferences): the job ends.
    const JobIndex j = it->second;
    by_key_.erase(it);
    scheduler_.RemoveJob(j, "TrainingJob deleted");
    dirty_ = true;
    Log("info", "job deleted", {{"job", key}});
  }
  if (object && !by_key_.contains(key) && !invalid_.contains(Meta(*object, "uid"))) {
    NewJob(*object, /*adopting=*/false);
  }
}

void Operator::NewJob(const json& object, bool adopting) {
  const std::string uid = Meta(object, "uid");
  auto decoded = DecodeTrainingJob(object);
  if (!decoded) {
    invalid_.insert(uid);
    const std::string ns = Meta(object, "namespace");
    const std::string name = Meta(object, "name");
    Log("error", "invalid TrainingJob",
        {{"job", ns + "/" + name}, {"error", decoded.error().message}});
    json status = object.value("status", json::object());
    if (status.is_object() && status.value("phase", "") == "Invalid") return;  // reported
    json updated = object;
    updated["status"] = {{"phase", "Invalid"},
                         {"reason", decoded.error().message},
                         {"conditions", json::array({{{"type", "Invalid"},
                                                      {"status", "True"},
                                                      {"reason", "InvalidSpec"},
                                                      {"message", decoded.error().message},
                                                      {"lastTransitionTime", NowRfc3339()}}})}};
    Call("PUT",
         fmt::format("/apis/{}/{}/namespaces/{}/{}/{}/status", kGroup, kVersion, ns, kPlural, name),
         updated);
    Call("POST", fmt::format("/api/v1/namespaces/{}/events", ns),
         MakeEvent(ns, name, uid, "Warning", "InvalidSpec", decoded.error().message, NowRfc3339()));
    return;
  }
  TrainingJob& tj = tjs_.emplace_back(std::move(*decoded));
  tj.job.submit_time = Now();
  const JobIndex j = scheduler_.AddJob(&tj.job, Now());
  last_status_.emplace_back();
  by_key_[tj.namespace_name + "/" + tj.name] = j;
  const json status = object.value("status", json::object());
  const std::string phase = status.is_object() ? status.value("phase", "") : "";
  const int64_t seq = status.is_object() ? status.value("admissionOrder", int64_t{-1}) : -1;
  // Progress and service as last written (the operator before the
  // restart estimated them), for a running job and a preempted one alike.
  if (adopting && status.is_object()) RestoreService(j, status.value("progress", json::object()));
  if (adopting && (phase == "Completed" || phase == "Failed")) {
    scheduler_.Adopt(j, phase == "Completed" ? JobPhase::kCompleted : JobPhase::kFailed, seq);
    last_status_[j] = status;
    return;
  }
  if (adopting) {
    // Its bound, live pods: a whole gang runs on; anything less is deleted.
    std::vector<std::pair<TaskRef, NodeIndex>> bound;
    std::map<std::string, std::string> uids;
    std::set<int> succeeded_workers;
    bool chief_succeeded = false;
    for (const json& pod : pods_->List()) {
      auto task = PodTaskOf(pod);
      if (!task || task->job != tj.name || Meta(pod, "namespace") != tj.namespace_name ||
          ControllerUid(pod) != tj.uid) {
        continue;
      }
      if (PodPhase(pod) == "Succeeded") {
        if (task->role == core::Role::kWorker) succeeded_workers.insert(task->index);
        if (task->role == core::Role::kChief) chief_succeeded = true;
      }
      if (Terminated(pod) || Terminating(pod) || NodeNameOf(pod).empty()) continue;
      const NodeIndex n = state_.FindNode(NodeNameOf(pod));
      if (n == engine::kNoNode) continue;
      bound.push_back({TaskRef{j, task->role, task->index}, n});
      uids[PodName(tj.name, task->role, task->index)] = Meta(pod, "uid");
    }
    const core::RoleSpec& w = tj.job.role(core::Role::kWorker);
    // Finished while no operator watched (or before it wrote so): the chief,
    // or without one k >= minReplicas workers (any indices: a scale-in keeps
    // those on the nodes it spares) with none still live, succeeded. What is still live (parameter
    // servers) is deleted.
    const bool live_workers = std::any_of(bound.begin(), bound.end(), [](const auto& b) {
      return b.first.role == core::Role::kWorker;
    });
    const int k = static_cast<int>(succeeded_workers.size());
    const bool finished = tj.job.role(core::Role::kChief).replicas > 0
                              ? chief_succeeded
                              : !live_workers && k >= w.min_replicas && k > 0;
    if (finished) {
      for (const auto& [t, n] : bound) {
        Call("DELETE", PodsPath(tj.namespace_name) + "/" + PodName(tj.name, t.role, t.index),
             json{{"apiVersion", "v1"},
                  {"kind", "DeleteOptions"},
                  {"propagationPolicy", "Background"}});
      }
      scheduler_.Adopt(j, JobPhase::kCompleted, seq);
      status_dirty_.push_back(j);
      Log("info", "adopted finished job", {{"job", tj.namespace_name + "/" + tj.name}});
      return;
    }
    int workers = 0, fixed = 0;
    bool valid = true;
    for (const auto& [t, n] : bound) {
      const int replicas =
          t.role == core::Role::kWorker ? w.max_replicas : tj.job.role(t.role).replicas;
      if (t.index >= replicas) valid = false;
      (t.role == core::Role::kWorker ? workers : fixed) += 1;
    }
    valid =
        valid && !bound.empty() && workers >= w.min_replicas && workers <= w.max_replicas &&
        fixed == tj.job.role(core::Role::kPS).replicas + tj.job.role(core::Role::kChief).replicas;
    if (valid) {
      scheduler_.JobsAdded();
      for (const auto& [t, n] : bound) {
        scheduler_.Place(t, n);
        owned_[PodKey(t)] = Owned{t, uids[PodName(tj.name, t.role, t.index)], true};
      }
      // Progress as restored above; from here at the placement's rate.
      scheduler_.Adopt(j, JobPhase::kRunning, seq);
      last_status_[j] = status;
      status_dirty_.push_back(j);
      Log("info", "adopted running job",
          {{"job", tj.namespace_name + "/" + tj.name}, {"workers", workers}});
      return;
    }
    for (const auto& [t, n] : bound) {
      Log("info", "deleting pod of an incomplete gang", {{"pod", PodKey(t)}});
      Call("DELETE", PodsPath(tj.namespace_name) + "/" + PodName(tj.name, t.role, t.index),
           json{{"apiVersion", "v1"},
                {"kind", "DeleteOptions"},
                {"propagationPolicy", "Background"}});
    }
  }
  scheduler_.JobsAdded();
  const JobIndex arrived[] = {j};
  scheduler_.Arrive(arrived);
  dirty_ = true;
}

void Operator::CheckCompletion(JobIndex j) {
  const engine::JobState& js = state_.Job(j);
  if (!core::IsRunning(js.phase)) return;
  int done = 0;
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] == engine::kNoNode) continue;
    const TaskRef t = js.TaskAt(j, s);
    if (t.role == core::Role::kPS) continue;  // parameter servers never finish
    auto pod = pods_->Get(PodKey(t));
    if (!pod || PodPhase(*pod) != "Succeeded") return;
    ++done;
  }
  if (done > 0) {
    scheduler_.Complete(j);
    dirty_ = true;
  }
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
  if (auto v = number("levelBaseGpuSeconds")) js.level_base = std::clamp(*v, 0.0, js.attained);
  if (auto v = number("launchGpuSeconds"))
    js.launch_attained = std::clamp(*v, 0.0, core::kMaxAttained);
  if (auto v = number("ranSince")) js.ran_since = std::clamp(*v, 0.0, core::kMaxTime);
}

void Operator::OnProgressChange(JobIndex j) {
  scheduler_.Reprice(j, Now());
  status_dirty_.push_back(j);
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
    job.level_base = std::min(js.level_base, job.attained);
    job.level = js.level;
    if (js.level_since != tj.job.submit_time) job.level_since = js.level_since;
    if (js.ran_since != core::kNever) job.ran_since = js.ran_since;
    if (js.level_place != engine::kNoPlace) job.level_place = js.level_place;
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
      for (int i = 0; i < core::kMaxResources; ++i) {
        const auto id = static_cast<core::ResourceId>(i);
        r[id] = std::min(it->second[id], left[id]);
      }
      if (r.IsZero()) snap.cluster.reserved.erase(spec.name);
    }
    snap.cluster.nodes.push_back(spec);
  }
  return snap;
}

void Operator::SetTimer(core::Time at, engine::TimerKind kind, JobIndex j, uint64_t epoch) {
  timers_.push(Timer{at, kind, j, epoch});
}

void Operator::Bind(TaskRef t, NodeIndex n) {
  owned_[PodKey(t)] = Owned{t, "", false};
  pending_binds_.push_back({t, n});
}

void Operator::CreateTask(TaskRef t) { pending_creates_.push_back(t); }

void Operator::DeleteTask(TaskRef t) {
  std::erase(pending_creates_, t);
  const TrainingJob& tj = tjs_[t.job];
  const std::string path = PodsPath(tj.namespace_name) + "/" + PodName(tj.name, t.role, t.index);
  auto remove = [this, path] {
    auto r = Call("DELETE", path);
    return r && (r->status < 300 || r->status == 404);
  };
  if (!remove()) retry_.push_back(remove);
  ++stats_.pods_deleted;
}

void Operator::Unbind(TaskRef t, NodeIndex) {
  const std::string key = PodKey(t);
  owned_.erase(key);
  std::erase_if(pending_binds_, [&](const auto& b) { return b.first == t; });
  auto pod = pods_->Get(key);
  if (pod && Terminated(*pod)) {
    // A finished pod holds nothing; it stays for its logs.
    scheduler_.TaskGone(t);
    return;
  }
  const TrainingJob& tj = tjs_[t.job];
  const std::string path = PodsPath(tj.namespace_name) + "/" + PodName(tj.name, t.role, t.index);
  const json options = {
      {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
  auto r = Call("DELETE", path, options);
  ++stats_.pods_deleted;
  if (r && r->status == 404) {
    scheduler_.TaskGone(t);
    return;
  }
  std::string uid = pod ? Meta(*pod, "uid") : "";
  if (r && r->status < 300) {
    json body = json::parse(r->body, nullptr, false);
    if (body.is_object() && body.value("kind", "") == "Pod") uid = Meta(body, "uid");
  } else {
    // Not deleted (an error or a timeout): again at every step until it is.
    retry_.push_back([this, path, options] {
      auto again = Call("DELETE", path, options);
      return again && (again->status < 300 || again->status == 404);
    });
  }
  releasing_[key] = {t, uid};
}

void Operator::FlushBinds() {
  auto creates = std::move(pending_creates_);
  pending_creates_.clear();
  for (const TaskRef& t : creates) CreateOne(t);
  auto binds = std::move(pending_binds_);
  pending_binds_.clear();
  for (const auto& [t, n] : binds) BindOne(t, n);
  if (failed_binds_.empty()) return;
  auto failed = std::move(failed_binds_);
  failed_binds_.clear();
  for (const auto& [t, why] : failed) {
    owned_.erase(PodKey(t));
    scheduler_.BindFailed(t, why);
  }
  dirty_ = true;
}

void Operator::CreateOne(TaskRef t) {
  const TrainingJob& tj = tjs_[t.job];
  if (pods_->Get(PodKey(t))) return;
  const json pod =
      MakePod(tj, t.role, t.index, state_.Job(t.job).target_workers, options_.scheduler_name, "");
  auto r = Call("POST", PodsPath(tj.namespace_name), pod);
  if (r && r->status == 201) ++stats_.pods_created;
}

void Operator::BindOne(TaskRef t, NodeIndex n) {
  const TrainingJob& tj = tjs_[t.job];
  const std::string name = PodName(tj.name, t.role, t.index);
  const std::string node = state_.NodeName(n);
  auto fail = [&](std::string why) { failed_binds_.push_back({t, std::move(why)}); };
  // The pod as it is: from the cache, created now, or read after a 409.
  std::optional<json> pod = pods_->Get(PodKey(t));
  if (pod && Terminating(*pod)) return fail(fmt::format("pod {} is still terminating", name));
  if (!pod) {
    const json body = MakePod(tj, t.role, t.index, state_.Job(t.job).target_workers,
                              options_.scheduler_name, options_.bind_with_node_name ? node : "");
    auto r = Call("POST", PodsPath(tj.namespace_name), body);
    if (!r) return fail(r.error().message);
    if (r->status == 201) {
      ++stats_.pods_created;
      pod = json::parse(r->body, nullptr, false);
    } else if (r->status == 409) {
      // Created before (by us, before a restart): adopt it.
      auto g = Call("GET", PodsPath(tj.namespace_name) + "/" + name);
      if (!g || g->status != 200)
        return fail(fmt::format("pod {} exists but cannot be read", name));
      pod = json::parse(g->body, nullptr, false);
    } else {
      return fail(fmt::format("creating pod {}: HTTP {}", name, r->status));
    }
  }
  if (!pod || !pod->is_object()) return fail(fmt::format("pod {}: unreadable answer", name));
  if (ControllerUid(*pod) != tj.uid)
    return fail(fmt::format("pod {} belongs to another owner", name));
  if (Terminating(*pod)) return fail(fmt::format("pod {} is still terminating", name));
  if (Terminated(*pod)) {
    // A finished pod of an earlier run of the task: it goes, and the next
    // cycle creates the task's pod anew.
    Call("DELETE", PodsPath(tj.namespace_name) + "/" + name);
    return fail(fmt::format("pod {} of an earlier run is being replaced", name));
  }
  const std::string bound_to = NodeNameOf(*pod);
  if (bound_to.empty()) {
    const json binding = {{"apiVersion", "v1"},
                          {"kind", "Binding"},
                          {"metadata", {{"name", name}, {"namespace", tj.namespace_name}}},
                          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
    auto r = Call("POST", PodsPath(tj.namespace_name) + "/" + name + "/binding", binding);
    if (!r) return fail(r.error().message);
    if (r->status == 409) {
      auto g = Call("GET", PodsPath(tj.namespace_name) + "/" + name);
      if (!g || g->status != 200) return fail(fmt::format("binding {}: conflict", name));
      const json now_pod = json::parse(g->body, nullptr, false);
      if (!now_pod.is_object() || NodeNameOf(now_pod) != node) {
        return fail(fmt::format("pod {} was bound elsewhere", name));
      }
    } else if (r->status >= 300) {
      return fail(fmt::format("binding {} to {}: HTTP {}", name, node, r->status));
    }
  } else if (bound_to != node) {
    return fail(fmt::format("pod {} is bound to {}", name, bound_to));
  }
  scheduler_.BindDone(t);
  if (auto it = owned_.find(PodKey(t)); it != owned_.end()) it->second.uid = Meta(*pod, "uid");
  ++stats_.binds;
}

void Operator::OnPhase(JobIndex j, JobPhase from) {
  const JobPhase to = state_.Job(j).phase;
  status_dirty_.push_back(j);
  ++stats_.jobs_by_phase[std::string(core::PhaseName(to))];
  if (to == JobPhase::kLaunching) EnsureService(j);
  if (to == JobPhase::kCompleted) Event(j, "Normal", "Completed", "all workers succeeded");
  if (to == JobPhase::kFailed) Event(j, "Warning", "Failed", scheduler_.History(j).reason);
  if (core::IsRunning(to) && !core::IsRunning(from)) CheckCompletion(j);
}

void Operator::EnsureService(JobIndex j) {
  const TrainingJob& tj = tjs_[j];
  const std::string path = fmt::format("/api/v1/namespaces/{}/services", tj.namespace_name);
  const json service = MakeService(tj);
  auto create = [this, path, service] {
    auto r = Call("POST", path, service);
    return r && (r->status == 201 || r->status == 409);  // 409: it exists already
  };
  if (!create()) retry_.push_back(create);
}

void Operator::Event(JobIndex j, std::string_view type, std::string_view reason,
                     std::string_view message) {
  const TrainingJob& tj = tjs_[j];
  Call("POST", fmt::format("/api/v1/namespaces/{}/events", tj.namespace_name),
       MakeEvent(tj.namespace_name, tj.name, tj.uid, type, reason, message, NowRfc3339()));
  Log("info", "event",
      {{"job", tj.namespace_name + "/" + tj.name}, {"reason", reason}, {"message", message}});
}

bool Operator::WriteStatus(JobIndex j) {
  const TrainingJob& tj = tjs_[j];
  const engine::JobState& js = state_.Job(j);
  if (js.removed) return true;
  const engine::JobHistory& h = scheduler_.History(j);
  json placement = json::object();
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] == engine::kNoNode) continue;
    const TaskRef t = js.TaskAt(j, s);
    placement[PodName(tj.name, t.role, t.index)] = state_.NodeName(js.task_node[s]);
  }
  const std::string phase(core::PhaseName(js.phase));
  json status = {{"phase", phase},
                 {"workers", js.placed_workers},
                 {"reason", h.reason},
                 {"placement", placement}};
  if (h.admission_seq >= 0) status["admissionOrder"] = h.admission_seq;
  // Estimated as the simulator does; exact at `progressTime` (the
  // operator's clock), growing at `stepsPerSecond` while it runs.
  Advance(j);
  status["progress"] = {{"steps", js.steps_done},
                        {"totalSteps", js.spec->total_steps},
                        {"stepsPerSecond", scheduler_.Rate(j)},
                        {"attainedGpuSeconds", js.attained}};
  // What a levelled order (las with starvation) needs after a restart.
  if (js.level_base != 0) status["progress"]["levelBaseGpuSeconds"] = js.level_base;
  // ... and a Las order with countLaunching (pollux-tiresias).
  if (js.launch_attained != 0) status["progress"]["launchGpuSeconds"] = js.launch_attained;
  if (js.ran_since != core::kNever) status["progress"]["ranSince"] = js.ran_since;
  if (status == last_status_[j]) return true;
  json condition = {{"type", phase},
                    {"status", "True"},
                    {"reason", phase},
                    {"message", h.reason},
                    {"lastTransitionTime", NowRfc3339()}};
  json full = status;
  full["conditions"] = json::array({condition});
  const std::string key = tj.namespace_name + "/" + tj.name;
  std::optional<json> object = jobs_->Get(key);
  // A write carries the resourceVersion it read; on 409 Conflict, read
  // afresh and try again (client-go's RetryOnConflict: 5 tries).
  for (int attempt = 0; attempt < 5 && object; ++attempt) {
    if (Meta(*object, "uid") != tj.uid) return true;  // deleted and made anew
    json updated = *object;
    updated["status"] = full;
    auto r = Call("PUT", JobPath(tj) + "/status", updated);
    if (!r) return false;
    if (r->status < 300) {
      last_status_[j] = status;
      return true;
    }
    if (r->status == 404) return true;  // deleted
    if (r->status != 409) return false;
    ++stats_.conflicts_retried;
    auto g = Call("GET", JobPath(tj));
    if (!g || g->status != 200) return g && g->status == 404;
    object = json::parse(g->body, nullptr, false);
    if (!object->is_object()) return false;
  }
  return !object.has_value();
}

void Operator::FlushStatus() {
  auto dirty = std::move(status_dirty_);
  status_dirty_.clear();
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  // What could not be written (errors, timeouts) is written at a later step.
  for (JobIndex j : dirty) {
    if (!WriteStatus(j)) status_dirty_.push_back(j);
  }
}

void Operator::Cycle() {
  const auto t0 = std::chrono::steady_clock::now();
  engine::CycleOptions options;
  options.cycle = cycle_seq_++;
  const engine::Plan plan = scheduler_.Cycle(Now(), options);
  FlushBinds();
  dirty_ = false;
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
              fmt::format("started with {} workers on {}", a.workers, nodes));
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
  for (const Informer* inf : {nodes_.get(), pods_.get(), jobs_.get()}) {
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
  while (!timers_.empty() && timers_.top().at <= Now()) {
    const Timer t = timers_.top();
    timers_.pop();
    scheduler_.OnTimer(t.kind, t.job, t.epoch);
    dirty_ = true;
  }
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
  const bool waiting = !state_.JobsInPhase(JobPhase::kWaiting).empty() ||
                       !state_.JobsInPhase(JobPhase::kStarving).empty();
  if (waiting &&
      Clock::now() - last_cycle_ > std::chrono::duration<double>(options_.resync_seconds)) {
    dirty_ = true;
  }
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
  const core::Time next = timers_.empty() ? core::kNever : timers_.top().at;
  return std::min(next, scheduler_.NextWakeup(Now()));
}

void Operator::Run(const std::atomic<bool>& stop) {
  while (!stop && !queue_.ShuttingDown()) Step(0.5);
}

OperatorStats Operator::Stats() const {
  std::lock_guard lock(snapshot_mu_);
  return snapshot_;
}

std::string PrometheusText(const OperatorStats& s, bool leader) {
  std::string out;
  auto metric = [&](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  metric("dlsched_jobs", "gauge", "TrainingJobs known to the operator, by phase.");
  for (const auto& [phase, n] : s.jobs_by_phase) {
    out += fmt::format("dlsched_jobs{{phase=\"{}\"}} {}\n", phase, n);
  }
  metric("dlsched_cycle_duration_seconds", "histogram", "Latency of a scheduling cycle.");
  for (size_t b = 0; b < std::size(OperatorStats::kCycleBuckets); ++b) {
    out += fmt::format("dlsched_cycle_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                       OperatorStats::kCycleBuckets[b], s.cycle_bucket[b]);
  }
  out += fmt::format("dlsched_cycle_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", s.cycles);
  out += fmt::format("dlsched_cycle_duration_seconds_sum {}\n", s.cycle_seconds_sum);
  out += fmt::format("dlsched_cycle_duration_seconds_count {}\n", s.cycles);
  const std::pair<const char*, int64_t> counters[] = {
      {"dlsched_preemptions_total", s.preemptions},
      {"dlsched_scale_events_total", s.scale_events},
      {"dlsched_binds_total", s.binds},
      {"dlsched_pods_created_total", s.pods_created},
      {"dlsched_pods_deleted_total", s.pods_deleted},
      {"dlsched_conflicts_retried_total", s.conflicts_retried}};
  const char* help[] = {"Jobs preempted or shrunk for another job.",
                        "Resizes of running jobs.",
                        "Pods bound to nodes.",
                        "Pods created.",
                        "Pods deleted.",
                        "Writes retried after 409 Conflict."};
  for (size_t i = 0; i < std::size(counters); ++i) {
    metric(counters[i].first, "counter", help[i]);
    out += fmt::format("{} {}\n", counters[i].first, counters[i].second);
  }
  metric("dlsched_api_errors_total", "counter",
         "Failed API requests by HTTP status (0: transport error).");
  for (const auto& [code, n] : s.api_errors) {
    out += fmt::format("dlsched_api_errors_total{{code=\"{}\"}} {}\n", code, n);
  }
  metric("dlsched_leader", "gauge", "1 while this replica holds the lease.");
  out += fmt::format("dlsched_leader {}\n", leader ? 1 : 0);
  return out;
}

}  // namespace dlsched::k8s
