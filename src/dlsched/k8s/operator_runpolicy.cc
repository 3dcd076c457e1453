// Kubeflow's runPolicy acted out: activeDeadlineSeconds and
// ttlSecondsAfterFinished (the operator's own timers), cleanPodPolicy,
// suspend, and schedulingPolicy.priorityClass read from the cluster.

#include <algorithm>
#include <set>

#include "dlsched/core/text.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

namespace {

// Erases `key` of the map at `where` in `obj`, and the map once empty.
void EraseKey(json& obj, const char* where, const char* key) {
  auto it = obj.find(where);
  if (it == obj.end() || !it->is_object()) return;
  it->erase(key);
  if (it->empty()) obj.erase(it);
}

// A spec without what a running job may change: runPolicy.suspend and,
// with `bounds`, the Worker role's elastic range (minReplicas and
// maxReplicas, on the Worker or in elasticPolicy).
json Fixed(json spec, bool bounds) {
  if (!spec.is_object()) return spec;
  EraseKey(spec, "runPolicy", "suspend");
  if (!bounds) return spec;
  for (const char* rs : {"replicaSpecs", "tfReplicaSpecs", "pytorchReplicaSpecs"}) {
    auto it = spec.find(rs);
    if (it == spec.end() || !it->is_object()) continue;
    auto w = it->find("Worker");
    if (w == it->end() || !w->is_object()) continue;
    w->erase("minReplicas");
    w->erase("maxReplicas");
  }
  EraseKey(spec, "elasticPolicy", "minReplicas");
  EraseKey(spec, "elasticPolicy", "maxReplicas");
  return spec;
}

// The fields that differ between two specs: "spec.replicaSpecs, ...".
std::string ChangedFields(const json& was, const json& now, const std::string& path) {
  std::set<std::string> keys;
  for (const json* s : {&was, &now}) {
    if (s->is_object()) {
      for (const auto& [key, _] : s->items()) keys.insert(key);
    }
  }
  std::string out;
  for (const std::string& key : keys) {
    const json a = was.is_object() ? was.value(key, json()) : json();
    const json b = now.is_object() ? now.value(key, json()) : json();
    if (a == b) continue;
    const std::string field = path + "." + core::EscapeText(key, 60);
    // runPolicy by its fields (absent: none of them).
    const bool by_field =
        key == "runPolicy" && (a.is_object() || a.is_null()) && (b.is_object() || b.is_null());
    const std::string more = by_field ? ChangedFields(a, b, field) : field;
    out += (out.empty() ? "" : ", ") + more;
  }
  return out;
}

bool SuspendOf(const json& object) {
  const json spec = object.value("spec", json::object());
  if (!spec.is_object()) return false;
  const json rp = spec.value("runPolicy", json::object());
  if (!rp.is_object()) return false;
  const auto it = rp.find("suspend");
  return it != rp.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

bool Operator::ReconcileSpec(JobIndex j, const json& object) {
  Kept& k = kept_[j];
  const TrainingJob& tj = tjs_[j];
  const int64_t generation = object.value("metadata", json::object()).value("generation", 0);
  if (generation != k.observed_generation) {
    k.observed_generation = generation;
    const json spec = object.value("spec", json::object());
    const std::string changed = ChangedFields(Fixed(k.spec, true), Fixed(spec, true), "spec");
    std::string refused;
    if (!changed.empty()) {
      refused = fmt::format(
          "TrainingJob {}/{}: {}: changed after the job was accepted; dlsched applies only "
          "spec.runPolicy.suspend and the Worker role's minReplicas and maxReplicas to a known "
          "job (delete and create it to change the rest)",
          tj.namespace_name, tj.name, changed);
    } else if (Fixed(k.spec, false) != Fixed(spec, false)) {
      // Only the elastic range: applied if it can be, else refused.
      refused = ApplyBounds(j, object);
    }
    if (!refused.empty()) {
      Log("error", "spec change refused",
          {{"job", tj.namespace_name + "/" + tj.name}, {"error", refused}});
      SetCondition(k.conditions, "SpecChangeRefused", true, "SpecChangeRefused", refused);
      Event(j, "Warning", "SpecChangeRefused", refused);
    } else if (ConditionTrue(k.conditions, "SpecChangeRefused")) {
      SetCondition(k.conditions, "SpecChangeRefused", false, "SpecRestored",
                   "the spec is the accepted one again");
    }
    status_dirty_.push_back(j);
  }
  if (SuspendOf(object)) {
    Suspend(j);
  } else if (k.suspended) {
    // Back in the queue with the spec it was accepted with.
    json accepted = object;
    accepted["spec"] = k.spec;
    if (accepted["spec"].contains("runPolicy")) accepted["spec"]["runPolicy"]["suspend"] = false;
    Resume(j, accepted);
    return false;
  }
  return true;
}

void Operator::StartClock(JobIndex j) {
  Kept& k = kept_[j];
  if (k.start_time.empty()) {
    k.start_time = NowRfc3339();
    k.start_clock = Now();
  } else {
    k.start_clock = ClockAt(k.start_time);
  }
  const auto& deadline = tjs_[j].run_policy.active_deadline_seconds;
  if (!deadline) return;
  k.deadline_at = k.start_clock + static_cast<double>(*deadline);
  job_timers_.push({k.deadline_at, JobTimerKind::kDeadline, j});
}

void Operator::ScheduleTtl(JobIndex j) {
  Kept& k = kept_[j];
  const auto& ttl = tjs_[j].run_policy.ttl_seconds_after_finished;
  if (!ttl || k.completion_time.empty()) return;
  if (k.completion_clock == 0) k.completion_clock = ClockAt(k.completion_time);
  job_timers_.push({k.completion_clock + static_cast<double>(*ttl), JobTimerKind::kTtl, j});
}

void Operator::FireJobTimers() {
  while (!job_timers_.empty() && job_timers_.top().at <= Now()) {
    const JobTimer t = job_timers_.top();
    job_timers_.pop();
    const JobIndex j = t.job;
    const TrainingJob& tj = tjs_[j];
    Kept& k = kept_[j];
    const engine::JobState& js = state_.Job(j);
    if (t.kind == JobTimerKind::kDeadline) {
      // Stale: the job was resumed since (a new start time) or is over.
      if (t.at != k.deadline_at || js.removed || core::IsFinal(js.phase)) continue;
      k.fail_reason = "DeadlineExceeded";
      scheduler_.Fail(j, fmt::format("active longer than spec.runPolicy.activeDeadlineSeconds "
                                     "({} s) since its start time {}",
                                     *tj.run_policy.active_deadline_seconds, k.start_time));
      dirty_ = true;
      continue;
    }
    // TTL after finished: the TrainingJob goes (its pods with it).
    if (!Live(j)) continue;
    Log("info", "deleting finished job (ttlSecondsAfterFinished)",
        {{"job", tj.namespace_name + "/" + tj.name}});
    const std::string path = JobPath(tj);
    const std::string uid = tj.uid;
    auto remove = [this, path, uid] {
      const json options = {{"apiVersion", "v1"},
                            {"kind", "DeleteOptions"},
                            {"propagationPolicy", "Background"},
                            {"preconditions", {{"uid", uid}}}};
      auto r = Call("DELETE", path, options);
      return r && (r->status < 300 || r->status == 404 || r->status == 409);
    };
    if (!remove()) retry_.push_back(remove);
  }
}

bool Operator::KeepsLivePods(JobIndex j) const {
  const TrainingJob& tj = tjs_[j];
  if (tj.run_policy.clean_pod_policy != CleanPodPolicy::kNone) return false;
  if (!core::IsFinal(state_.Job(j).phase) || kept_[j].suspending) return false;
  // Not when the job leaves (deleted, changed, suspended): only a finish.
  return Live(j) && !kept_[j].suspended;
}

bool Operator::Live(JobIndex j) const {
  const TrainingJob& tj = tjs_[j];
  const auto it = by_key_.find(tj.namespace_name + "/" + tj.name);
  return it != by_key_.end() && it->second == j && !state_.Job(j).removed;
}

void Operator::CleanPods(JobIndex j) {
  const CleanPodPolicy policy = tjs_[j].run_policy.clean_pod_policy;
  if (policy != CleanPodPolicy::kNone) DeleteOtherPods(j, policy == CleanPodPolicy::kAll);
}

void Operator::DeleteOtherPods(JobIndex j, bool finished_too) {
  const TrainingJob& tj = tjs_[j];
  for (const json& pod : pods_->List()) {
    if (Meta(pod, "namespace") != tj.namespace_name || ControllerUid(pod) != tj.uid ||
        Terminating(pod) || (Terminated(pod) && !finished_too)) {
      continue;
    }
    const std::string key = ObjectKey(pod);
    if (owned_.contains(key) || releasing_.contains(key)) continue;  // the life cycle's
    Call("DELETE", PodsPath(tj.namespace_name) + "/" + Meta(pod, "name"));
    ++stats_.pods_deleted;
  }
}

void Operator::EnsureEvaluators(JobIndex j) {
  const TrainingJob& tj = tjs_[j];
  for (int i = 0; i < tj.evaluators; ++i) {
    if (pods_->Get(tj.namespace_name + "/" + EvaluatorPodName(tj.name, i))) continue;
    auto r = Call(
        "POST", PodsPath(tj.namespace_name),
        MakeEvaluatorPod(tj, i, state_.Job(j).target_workers, options_.evaluator_scheduler_name));
    if (r && r->status == 201) ++stats_.pods_created;
  }
}

void Operator::Suspend(JobIndex j) {
  Kept& k = kept_[j];
  const engine::JobState& js = state_.Job(j);
  if (k.suspended || k.suspending || js.removed || core::IsFinal(js.phase)) return;
  if (core::IsRunning(js.phase)) {
    // Checkpoints, its pods running until it is done, then Standby.
    k.suspending = true;
    scheduler_.Suspend(j, "suspending (spec.runPolicy.suspend): checkpointing");
    Event(j, "Normal", "Suspending", "checkpointing before its pods are deleted");
    dirty_ = true;
    return;
  }
  if (js.phase == JobPhase::kCheckpointing || js.phase == JobPhase::kStopping) {
    k.suspending = true;  // on its way to Standby
    return;
  }
  // Waiting, Starving, Standby, Launching: nothing trained since its last
  // checkpoint (or its start) is lost.
  suspend_done_.push_back(j);
  k.suspending = true;
}

void Operator::FinishSuspensions() {
  for (const JobIndex j : std::exchange(suspend_done_, {})) {
    Kept& k = kept_[j];
    if (k.suspended || state_.Job(j).removed) continue;
    Advance(j);
    // Its progress (steps at its last checkpoint) stays in the JobState
    // and status; its pods go (the life cycle's release).
    scheduler_.RemoveJob(j, "suspended (spec.runPolicy.suspend)");
    DeleteOtherPods(j, /*finished_too=*/false);
    k.suspended = true;
    k.suspending = false;
    k.start_time.clear();  // as Kubeflow's: a resumed job starts anew
    k.deadline_at = core::kNever;
    status_dirty_.push_back(j);
    Event(j, "Normal", "Suspended", "spec.runPolicy.suspend is true: its pods are deleted");
    dirty_ = true;
  }
}

void Operator::Resume(JobIndex j, const json& object) {
  const TrainingJob& tj = tjs_[j];
  const std::string key = tj.namespace_name + "/" + tj.name;
  const json progress = last_status_[j].value("progress", json::object());
  Kept kept = kept_[j];
  by_key_.erase(key);
  NewJob(object, /*adopting=*/false);
  const auto it = by_key_.find(key);
  if (it == by_key_.end() || it->second == j) return;  // invalid now, or suspended again
  const JobIndex now = it->second;
  // Its conditions go on; a new start time (Kubeflow's, and batch/v1 Job's).
  kept_[now].conditions = kept.conditions;
  RestoreService(now, progress);
  // Its progress is its last checkpoint's (it checkpointed to suspend), and
  // the failures counted against its backoffLimit stay counted.
  scheduler_.Restore(now, scheduler_.History(j).failures, scheduler_.History(now).reason,
                     state_.Job(now).steps_done);
  scheduler_.Reprice(now, Now());
  Event(now, "Normal", "Resumed", "spec.runPolicy.suspend is false: back in the queue");
  status_dirty_.push_back(now);
}

std::string Operator::ApplyBounds(JobIndex j, const json& object) {
  TrainingJob& tj = tjs_[j];
  auto decoded = DecodeTrainingJob(object);
  if (!decoded) return decoded.error().message + " (the change is not applied)";
  const core::RoleSpec& now = decoded->job.role(core::Role::kWorker);
  core::RoleSpec& w = tj.job.role(core::Role::kWorker);
  const engine::JobState& js = state_.Job(j);
  // The job's worker slots were laid out at its first maxReplicas.
  const int slots = static_cast<int>(js.task_node.size()) - js.NumPs() - js.NumChief();
  std::string path = "spec.elasticPolicy.maxReplicas";
  for (const char* rs : {"replicaSpecs", "tfReplicaSpecs", "pytorchReplicaSpecs"}) {
    if (object["spec"].contains(rs) && !(tj.elastic && object["spec"].contains("elasticPolicy"))) {
      path = fmt::format("spec.{}.Worker.maxReplicas", rs);
    }
  }
  if (now.max_replicas > slots) {
    return fmt::format(
        "TrainingJob {}/{}: {}: {} is above {}, the maxReplicas the job was "
        "accepted with: a running job's range can narrow or move within it (the "
        "change is not applied)",
        tj.namespace_name, tj.name, path, now.max_replicas, slots);
  }
  if (now.max_replicas < js.placed_workers) {
    return fmt::format(
        "TrainingJob {}/{}: {}: {} is below the {} workers it runs with (the "
        "change is not applied; the profile's sizer shrinks within the range)",
        tj.namespace_name, tj.name, path, now.max_replicas, js.placed_workers);
  }
  w.min_replicas = now.min_replicas;
  w.max_replicas = now.max_replicas;
  if (tj.elastic) tj.elastic = decoded->elastic;
  kept_[j].spec = object.value("spec", json::object());
  scheduler_.MutableState().RangeChanged(j);
  scheduler_.MutableState().BumpReason(j);
  Event(j, "Normal", "RangeChanged",
        fmt::format("workers {}..{} from now on", w.min_replicas, w.max_replicas));
  dirty_ = true;
  return "";
}

bool Operator::ResolvePriority(TrainingJob& tj, const json& object) {
  const std::string& name = tj.run_policy.priority_class;
  if (name.empty()) return true;
  const std::string key = "tj/" + tj.namespace_name + "/" + tj.name;
  auto r = Call("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/" + name);
  if (r && r->status == 404) {
    const std::string error = fmt::format(
        "TrainingJob {}/{}: spec.runPolicy.schedulingPolicy.priorityClass: PriorityClass '{}' not "
        "found",
        tj.namespace_name, tj.name, core::EscapeText(name, 253));
    if (ReportInvalid(object, error)) {
      queue_.Forget(key);
    } else {
      queue_.AddRateLimited(key);
    }
    return false;
  }
  const json pc = r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  if (!pc.is_object() || !pc.value("value", json()).is_number_integer()) {
    queue_.AddRateLimited(key, RetryAfter(r));  // transient: read again after its backoff
    return false;
  }
  // Above the default pod priority (0) is high, below it low.
  const int64_t value = pc["value"].get<int64_t>();
  tj.job.priority = value > 0   ? core::PriorityClass::kHigh
                    : value < 0 ? core::PriorityClass::kLow
                                : core::PriorityClass::kNormal;
  return true;
}

}  // namespace dlsched::k8s
