// What the operator writes back: TrainingJob status, Events, and the
// /metrics text.

#include <algorithm>
#include <map>
#include <set>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

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
    placement[PodNameOf(t)] = state_.NodeName(js.task_node[s]);
  }
  const std::string phase(core::PhaseName(js.phase));
  json status = {{"phase", phase},
                 {"workers", js.placed_workers},
                 {"reason", h.reason},
                 {"placement", placement}};
  if (h.admission_seq >= 0) status["admissionOrder"] = h.admission_seq;
  status["submitTime"] = submitted_[j];
  // Pod failures counted against runPolicy.backoffLimit.
  if (h.failures > 0) status["failures"] = h.failures;
  // Estimated as the simulator does; exact at `progressTime` (the
  // operator's clock), growing at `stepsPerSecond` while it runs.
  Advance(j);
  status["progress"] = {{"steps", js.steps_done},
                        {"totalSteps", js.spec->total_steps},
                        {"stepsPerSecond", scheduler_.Rate(j)},
                        {"attainedGpuSeconds", js.attained}};
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
  // A job the API server refused fails with reason SpecRejected.
  json condition = {{"type", phase},
                    {"status", "True"},
                    {"reason", rejected_.contains(j) ? std::string("SpecRejected") : phase},
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
