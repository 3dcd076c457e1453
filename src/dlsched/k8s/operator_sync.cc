// The operator's news: the objects its informers queued (Nodes, Pods,
// TrainingJobs), told to the scheduler loop.

#include <algorithm>
#include <map>
#include <set>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

void Operator::SyncKey(const std::string& key) {
  if (key.starts_with("node/")) {
    SyncNode(key.substr(5));
  } else if (key.starts_with("pod/")) {
    SyncPod(key.substr(4));
  } else if (key.starts_with("tj/")) {
    SyncJob(key.substr(3));
  } else if (key.starts_with("queue/") || key.starts_with("cohort/")) {
    queue_news_ = true;
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
    // Pods already bound there (foreign ones) count now; at a start, once
    // their jobs are adopted (Adopt).
    if (!adopting_) {
      for (const json& pod : pods_->List()) {
        if (NodeNameOf(pod) == name) SyncPod(ObjectKey(pod));
      }
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
      const std::string pod_name = PodNameOf(t);
      if (ours && PodPhase(*pod) == "Failed" && !Terminating(*pod)) {
        // By the role's restartPolicy and the job's backoffLimit: the job
        // restarts from its checkpoint, or fails.
        scheduler_.TaskFailed(t, PodFailure(*pod),
                              fmt::format("pod {} {}", pod_name, PodFailureText(*pod)));
      } else if (!state_.IsAssumed(t)) {
        const std::string why = !ours ? "pod deleted" : "pod being deleted";
        scheduler_.TasksLost(std::span<const TaskRef>(&t, 1), fmt::format("{} {}", pod_name, why));
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
      scheduler_.ForeignPodBound(key, n, request->request, request->scoring, GpuDeviceOf(*pod));
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
    if (!state_.Job(j).removed) scheduler_.RemoveJob(j, "TrainingJob deleted");
    dirty_ = true;
    Log("info", "job deleted", {{"job", key}});
  }
  if (!object) return;
  const int64_t generation = object->value("metadata", json::object()).value("generation", 0);
  if (auto known = by_key_.find(key); known != by_key_.end()) {
    ReconcileJob(known->second, *object);
    return;
  }
  // An invalid job is decoded again only when its spec changed.
  auto invalid = invalid_.find(Meta(*object, "uid"));
  if (invalid == invalid_.end() || invalid->second != generation) {
    NewJob(*object, /*adopting=*/false);
  }
}

void Operator::ReconcileJob(JobIndex j, const json& object) {
  const int64_t generation = object.value("metadata", json::object()).value("generation", 0);
  if (rejected_.contains(j)) {
    // Refused by the API server: tried again, as a new job, only when its
    // spec changed.
    if (generation == tjs_[j].generation) return;
    const TrainingJob& tj = tjs_[j];
    by_key_.erase(tj.namespace_name + "/" + tj.name);
    scheduler_.RemoveJob(j, "TrainingJob changed");
    NewJob(object, /*adopting=*/false);
    if (auto now = by_key_.find(tj.namespace_name + "/" + tj.name); now != by_key_.end()) {
      // Tried again: no longer failed.
      SetCondition(kept_[now->second].conditions, "Failed", false, "SpecChanged",
                   "the spec changed: tried again");
    }
    dirty_ = true;
    return;
  }
  if (!ReconcileSpec(j, object)) return;
  const engine::JobState& js = state_.Job(j);
  if (!core::IsFinal(js.phase) && js.placed_tasks > 0) {
    EnsureService(j);
    EnsureEvaluators(j);
  }
  if (core::IsFinal(js.phase) && Live(j)) CleanPods(j);
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

}  // namespace dlsched::k8s
