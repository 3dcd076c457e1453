// The operator as the life cycle's Backend: what a plan asks for, acted
// out on the API server (pods created, bound, deleted; a Service per job).

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

bool Permanent(long status, bool create) {
  return status == 400 || status == 403 || status == 422 || (create && status == 404);
}

std::string Refusal(const Response& r) {
  const json body = json::parse(r.body, nullptr, false);
  if (!body.is_object()) return fmt::format("HTTP {}", r.status);
  std::string out;
  const json details = body.value("details", json::object());
  const json causes = details.is_object() ? details.value("causes", json::array()) : json::array();
  for (const json& c : causes) {
    if (!c.is_object()) continue;
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", c.value("field", ""),
                       c.value("message", ""));
  }
  if (out.empty()) out = body.value("message", "");
  return core::EscapeText(out.empty() ? fmt::format("HTTP {}", r.status) : out, 1000);
}

WorkQueue::Clock::duration RetryAfter(const core::Result<Response>& r) {
  if (!r) return WorkQueue::Clock::duration::zero();
  return std::chrono::duration_cast<WorkQueue::Clock::duration>(
      std::chrono::duration<double>(std::min(r->retry_after_seconds, 3600.0)));
}

void Operator::SetTimer(core::Time at, engine::TimerKind kind, JobIndex j, uint64_t epoch) {
  timers_.push(Timer{at, kind, j, epoch});
}

void Operator::Bind(TaskRef t, NodeIndex n) {
  NameNewPod(t);
  owned_[PodKey(t)] = Owned{t, "", false};
  pending_binds_.push_back({t, n});
}

void Operator::CreateTask(TaskRef t) {
  NameNewPod(t);
  pending_creates_.push_back(t);
}

void Operator::DeleteTask(TaskRef t) {
  std::erase(pending_creates_, t);
  const TrainingJob& tj = tjs_[t.job];
  const std::string path = PodsPath(tj.namespace_name) + "/" + PodNameOf(t);
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
  if (KeepsLivePods(t.job)) {
    // cleanPodPolicy None: a finished job's pods stay; what they hold
    // counts as other owners' pods do.
    scheduler_.TaskGone(t);
    SyncPod(key);
    return;
  }
  const TrainingJob& tj = tjs_[t.job];
  const std::string path = PodsPath(tj.namespace_name) + "/" + PodNameOf(t);
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
  auto failed = std::move(failed_binds_);
  failed_binds_.clear();
  for (const auto& [t, why] : failed) {
    owned_.erase(PodKey(t));
    scheduler_.BindFailed(t, why);
  }
  if (!failed.empty()) dirty_ = true;
  ApplyRejects();
}

void Operator::ApplyRejects() {
  for (const auto& [j, why] : std::exchange(rejects_, {})) Reject(j, why);
}

void Operator::CreateOne(TaskRef t) {
  const TrainingJob& tj = tjs_[t.job];
  if (pods_->Get(PodKey(t))) return;
  const json pod = MakePod(tj, t.role, t.index, state_.Job(t.job).target_workers,
                           options_.scheduler_name, "", PodNameOf(t));
  auto r = Call("POST", PodsPath(tj.namespace_name), pod);
  if (r && r->status == 201) ++stats_.pods_created;
}

void Operator::BindOne(TaskRef t, NodeIndex n) {
  const TrainingJob& tj = tjs_[t.job];
  const std::string name = PodNameOf(t);
  const std::string node = state_.NodeName(n);
  auto fail = [&](std::string why) { failed_binds_.push_back({t, std::move(why)}); };
  // The pod as it is: from the cache, created now, or read after a 409.
  std::optional<json> pod = pods_->Get(PodKey(t));
  if (pod && Terminating(*pod)) return fail(fmt::format("pod {} is still terminating", name));
  const int device = state_.DeviceOf(t);
  if (!pod) {
    json body = MakePod(tj, t.role, t.index, state_.Job(t.job).target_workers,
                        options_.scheduler_name, options_.bind_with_node_name ? node : "", name);
    if (device >= 0 && options_.bind_with_node_name) {
      body["metadata"]["annotations"][std::string(kGpuDeviceAnnotation)] = std::to_string(device);
    }
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
    } else if (Permanent(r->status, /*create=*/true)) {
      // Refused as it is (a name or a template the server rejects): the
      // job fails with the field, and is not placed again as it is.
      const std::string why = fmt::format("creating pod {}: {}", name, Refusal(*r));
      fail(why);
      rejects_.push_back({t.job, why});
      return;
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
    json binding = {{"apiVersion", "v1"},
                    {"kind", "Binding"},
                    {"metadata", {{"name", name}, {"namespace", tj.namespace_name}}},
                    {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
    if (device >= 0) {
      binding["metadata"]["annotations"][std::string(kGpuDeviceAnnotation)] =
          std::to_string(device);
    }
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

void Operator::OnProgressChange(JobIndex j) {
  scheduler_.Reprice(j, Now());
  status_dirty_.push_back(j);
}

void Operator::OnPhase(JobIndex j, JobPhase from) {
  const JobPhase to = state_.Job(j).phase;
  status_dirty_.push_back(j);
  ++stats_.jobs_by_phase[std::string(core::PhaseName(to))];
  if (to == JobPhase::kLaunching) {
    EnsureService(j);
    EnsureEvaluators(j);
  }
  // Conditions follow every phase (a restart that relaunches at once
  // still shows in Restarting's history), except for a job on its way to
  // suspension: a job whose spec asks for it enters the engine (Waiting)
  // before it is suspended, and a restarted operator must not mark a
  // suspended job resumed and then suspended again meanwhile.
  const int losses = Live(j) ? kept_[j].task_losses : 0;
  if (Live(j) && !kept_[j].suspending && !tjs_[j].run_policy.suspend) UpdateConditions(j);
  // Lost pods (a failure, an eviction, a node gone), just seen by the
  // conditions: back to its checkpoint, said once with what was lost.
  if (Live(j) && kept_[j].task_losses > losses) {
    Event(j, "Warning", "Restarting", scheduler_.History(j).reason);
  }
  if (to == JobPhase::kStandby && kept_[j].suspending) suspend_done_.push_back(j);
  if (core::IsFinal(to) && Live(j) && !kept_[j].suspending) CleanPods(j);
  if (to == JobPhase::kCompleted) Event(j, "Normal", "Completed", "all workers succeeded");
  if (to == JobPhase::kFailed && !kept_[j].suspending) {
    Event(j, "Warning", rejected_.contains(j) ? "SpecRejected" : "Failed",
          scheduler_.History(j).reason);
  }
  if (core::IsRunning(to) && !core::IsRunning(from)) CheckCompletion(j);
}

void Operator::EnsureService(JobIndex j) {
  if (service_ok_.contains(j) || rejected_.contains(j)) return;
  const TrainingJob& tj = tjs_[j];
  const std::string key = "tj/" + tj.namespace_name + "/" + tj.name;
  auto r = Call("POST", fmt::format("/api/v1/namespaces/{}/services", tj.namespace_name),
                MakeService(tj));
  if (r && (r->status == 201 || r->status == 409)) {  // 409: it exists already
    service_ok_.insert(j);
    queue_.Forget(key);
  } else if (r && Permanent(r->status, /*create=*/true)) {
    // Acted on after the life cycle returns (this runs inside it).
    rejects_.push_back({j, fmt::format("creating Service {}: {}", tj.name, Refusal(*r))});
    dirty_ = true;
  } else {
    // Transient: the job's key again, after its backoff (or Retry-After).
    queue_.AddRateLimited(key, RetryAfter(r));
  }
}

void Operator::Reject(JobIndex j, const std::string& why) {
  if (!rejected_.insert(j).second || core::IsFinal(state_.Job(j).phase)) return;
  const TrainingJob& tj = tjs_[j];
  Log("error", "refused by the API server",
      {{"job", tj.namespace_name + "/" + tj.name}, {"error", why}});
  scheduler_.Fail(j, why);
  dirty_ = true;
}

}  // namespace dlsched::k8s
