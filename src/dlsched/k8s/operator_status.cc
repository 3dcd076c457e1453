// What the operator writes back: TrainingJob status, Events, and the
// /metrics text.

#include <algorithm>
#include <map>
#include <set>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/credentials.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

core::Time Operator::ClockAt(const std::string& rfc3339) const {
  auto t = ParseRfc3339(rfc3339);
  if (!t) return Now();
  return Now() - std::chrono::duration<double>(std::chrono::system_clock::now() - *t).count();
}

void Operator::ReadBackStatus(JobIndex j, const json& object) {
  Kept& k = kept_[j];
  k.observed_generation = tjs_[j].generation;
  const json status = object.value("status", json::object());
  if (!status.is_object() || status.value("phase", "") == "Invalid") return;
  const json conditions = status.value("conditions", json::array());
  if (conditions.is_array()) {
    for (const json& c : conditions) {
      // Only this operator's kind of condition (an older operator wrote one
      // whose type was the phase).
      static constexpr std::string_view kTypes[] = {"Created",          "Running",   "Restarting",
                                                    "Suspended",        "Succeeded", "Failed",
                                                    "SpecChangeRefused"};
      if (c.is_object() && std::find(std::begin(kTypes), std::end(kTypes), c.value("type", "")) !=
                               std::end(kTypes)) {
        k.conditions.push_back(c);
      }
    }
  }
  k.restarting = ConditionTrue(k.conditions, "Restarting");
  k.start_time = status.value("startTime", "");
  k.completion_time = status.value("completionTime", "");
}

const json& Operator::UpdateConditions(JobIndex j) {
  Kept& k = kept_[j];
  json& c = k.conditions;
  const TrainingJob& tj = tjs_[j];
  const engine::JobState& js = state_.Job(j);
  const engine::JobHistory& h = scheduler_.History(j);
  const std::string name = fmt::format("TrainingJob {}/{}", tj.namespace_name, tj.name);
  SetCondition(c, "Created", true, "Created", name + " is created.");
  // Succeeded and Failed are final (as Kubeflow's setCondition).
  if (ConditionTrue(c, "Succeeded") || ConditionTrue(c, "Failed")) return c;
  if (h.task_losses > k.task_losses) {
    k.task_losses = h.task_losses;
    k.restarting = true;
  }
  auto clear = [&](std::string_view type, std::string_view reason, const std::string& message) {
    if (FindCondition(c, type) != nullptr) SetCondition(c, type, false, reason, message);
  };
  const JobPhase phase = js.phase;
  if (k.suspended) {
    SetCondition(c, "Running", false, "Suspended", name + " is suspended.");
    clear("Restarting", "Suspended", name + " is suspended.");
    SetCondition(c, "Suspended", true, "Suspended", name + " is suspended.");
    return c;
  }
  clear("Suspended", "Resumed", name + " is resumed.");
  if (phase == JobPhase::kCompleted || phase == JobPhase::kFailed) {
    const bool ok = phase == JobPhase::kCompleted;
    const std::string reason = ok                       ? "Succeeded"
                               : rejected_.contains(j)  ? "SpecRejected"
                               : !k.fail_reason.empty() ? k.fail_reason
                                                        : "Failed";
    const std::string message =
        ok ? name + " completed: all workers succeeded." : name + " failed: " + h.reason;
    // Running is False from now on (added so, if it never ran).
    SetCondition(c, "Running", false, reason, message);
    clear("Restarting", reason, message);
    SetCondition(c, ok ? "Succeeded" : "Failed", true, reason, message);
    return c;
  }
  if (core::IsRunning(phase)) k.restarting = false;
  if (k.restarting) {
    // Back to its last checkpoint after losing pods, until it runs again.
    clear("Running", "Restarting", name + " is restarting: " + h.reason);
    SetCondition(c, "Restarting", true, "Restarting", name + " is restarting: " + h.reason);
  } else if (core::IsRunning(phase) || phase == JobPhase::kLaunching ||
             phase == JobPhase::kCheckpointing) {
    SetCondition(c, "Running", true, "Running", name + " is running.");
    clear("Restarting", "Running", name + " is running.");
  } else {
    // Preempted, or resized through a restart: not running for now.
    clear("Running", std::string(core::PhaseName(phase)),
          fmt::format("{} is {}: {}", name, core::PhaseName(phase), h.reason));
  }
  return c;
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
  Kept& k = kept_[j];
  if (js.removed && !k.suspended) return true;
  const engine::JobHistory& h = scheduler_.History(j);
  json placement = json::object();
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] == engine::kNoNode) continue;
    const TaskRef t = js.TaskAt(j, s);
    placement[PodNameOf(t)] = state_.NodeName(js.task_node[s]);
  }
  const std::string phase(k.suspended ? "Suspended" : core::PhaseName(js.phase));
  if (core::IsFinal(js.phase) && k.completion_time.empty() && !k.suspended) {
    k.completion_time = NowRfc3339();
    k.completion_clock = Now();
    ScheduleTtl(j);
  }
  std::string reason = k.suspended ? "suspended (spec.runPolicy.suspend)" : h.reason;
  if (QueueMissing(j) && js.IsPending()) {
    reason = fmt::format("no Queue named {}: the job waits until one is created", tj.job.queue);
  }
  json status = {{"phase", phase},
                 {"workers", js.placed_workers},
                 {"reason", reason},
                 {"placement", placement},
                 {"observedGeneration", k.observed_generation},
                 {"conditions", UpdateConditions(j)}};
  if (!k.start_time.empty() && !k.suspended) status["startTime"] = k.start_time;
  if (!k.completion_time.empty()) status["completionTime"] = k.completion_time;
  if (h.admission_seq >= 0) status["admissionOrder"] = h.admission_seq;
  status["submitTime"] = submitted_[j];
  if (queue_objects_) status["queue"] = tj.job.queue;
  // Pod failures counted against runPolicy.backoffLimit.
  if (h.failures > 0) status["failures"] = h.failures;
  // Estimated as the simulator does; exact at `progressTime` (the
  // operator's clock), growing at `stepsPerSecond` while it runs.
  if (!js.removed) Advance(j);
  status["progress"] = {{"steps", js.steps_done},
                        {"totalSteps", js.spec->total_steps},
                        {"stepsPerSecond", scheduler_.Rate(j)},
                        {"attainedGpuSeconds", js.attained},
                        {"checkpointSteps", std::min(h.checkpointed_steps, js.steps_done)}};
  // While it trains, when the estimate was exact (wall clock): a restarted
  // operator carries it on from there.
  if (scheduler_.Rate(j) > 0) status["progress"]["asOf"] = MicroTime(WallSeconds());
  // What a Las order with countLaunching (pollux-tiresias) needs after a
  // restart, and what the policy keeps in status (las with starvation).
  if (js.launch_attained != 0) status["progress"]["launchGpuSeconds"] = js.launch_attained;
  for (const engine::RecordField* f : state_.RecordFields()) {
    const double v = state_.Record(j, *f);
    if (f->in_status && v != f->InitialFor(js.spec->submit_time)) {
      status["progress"][std::string(f->state.name)] = v;
    }
  }
  if (status == last_status_[j]) return true;
  const json& full = status;
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
