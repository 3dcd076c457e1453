// Teams' queues on a cluster: the cluster-scoped Queue and Cohort objects
// (dlsched.io/v1alpha1) read into the engine's queues and cohorts
// (ClusterState::SetQueues), the namespaces' default queues, queues that
// jobs name but no object declares, and each Queue's status.

#include <algorithm>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "dlsched/config/specs.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/operator_impl.h"

namespace dlsched::k8s {

namespace {

constexpr std::string_view kQueuePlural = "queues";
constexpr std::string_view kCohortPlural = "cohorts";

std::string KindPath(std::string_view plural) {
  return fmt::format("/apis/{}/{}/{}", kGroup, kVersion, plural);
}

// spec.namespaces of a Queue: the namespaces whose jobs that name no queue
// go to it.
core::Result<std::vector<std::string>> ReadNamespaces(const json& spec, const std::string& name) {
  std::vector<std::string> out;
  if (!spec.is_object() || !spec.contains("namespaces")) return out;
  const json& list = spec["namespaces"];
  const std::string field = fmt::format("Queue {}: spec.namespaces", name);
  if (!list.is_array()) return core::Errorf("{}: expected a list of namespace names", field);
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return core::Errorf("{}[{}]: expected a namespace name, got {}", field, i,
                          core::EscapeText(list[i].dump(), 80));
    }
    const std::string ns = list[i].get<std::string>();
    if (auto problem = core::NameProblem(ns)) return core::Errorf("{}[{}]: {}", field, i, *problem);
    out.push_back(ns);
  }
  return out;
}

// A queue that jobs name and no Queue declares: a quota of nothing on
// every named resource and no cohort, so its jobs wait.
core::QueueSpec Placeholder(const std::string& name) {
  core::QueueSpec q;
  q.name = name;
  for (int id = 0; id < core::NumResources(); ++id) {
    const auto rid = static_cast<core::ResourceId>(id);
    if (!core::ResourceName(rid).empty()) q.quota.push_back({rid, 0, std::nullopt, std::nullopt});
  }
  return q;
}

// The informer's objects in name order (objects have no other).
std::vector<json> ByName(const Informer& informer) {
  std::vector<json> objects = informer.List();
  std::sort(objects.begin(), objects.end(),
            [](const json& a, const json& b) { return Meta(a, "name") < Meta(b, "name"); });
  return objects;
}

json Quantities(const core::Resources& r) {
  json out = json::object();
  for (int id = 0; id < core::NumResources(); ++id) {
    const auto rid = static_cast<core::ResourceId>(id);
    if (r[rid] == 0 || core::ResourceName(rid).empty()) continue;
    out[std::string(core::ResourceName(rid))] = core::FormatResourceAmount(rid, r[rid]);
  }
  return out;
}

}  // namespace

void Operator::StartQueueInformers(const std::function<InformerHandlers(std::string)>& enqueue) {
  // Served only where deploy/crd.yaml's Queue and Cohort kinds are
  // installed: without them the operator runs without quotas.
  auto r = Call("GET", fmt::format("/apis/{}/{}", kGroup, kVersion));
  if (!r || r->status != 200) return;
  const json list = json::parse(r->body, nullptr, false);
  std::set<std::string> served;
  if (list.is_object() && list.contains("resources") && list["resources"].is_array()) {
    for (const json& res : list["resources"]) {
      if (res.is_object()) served.insert(res.value("name", ""));
    }
  }
  if (!served.contains(std::string(kQueuePlural))) {
    Log("info", "the Queue kind is not served: jobs run without queues",
        {{"group", fmt::format("{}/{}", kGroup, kVersion)}});
    return;
  }
  InformerOptions o = options_.informer;
  o.selector.clear();
  // Only a spec changes what is in effect: the status patches the
  // operator writes itself (and any label or annotation) are no news.
  auto on_spec = [&](std::string prefix) {
    InformerHandlers h = enqueue(std::move(prefix));
    h.on_update = [next = std::move(h.on_update)](const json& old, const json& now) {
      if (old.value("spec", json()) != now.value("spec", json())) next(old, now);
    };
    return h;
  };
  queue_objects_ =
      std::make_unique<Informer>(config_, KindPath(kQueuePlural), on_spec("queue/"), o);
  queue_objects_->Start();
  if (served.contains(std::string(kCohortPlural))) {
    cohort_objects_ =
        std::make_unique<Informer>(config_, KindPath(kCohortPlural), on_spec("cohort/"), o);
    cohort_objects_->Start();
  }
}

void Operator::ReadQueueObjects() {
  if (!queue_objects_) return;
  std::map<std::string, std::string> problems;
  std::vector<core::QueueSpec> queues;
  std::map<std::string, std::vector<std::string>> namespaces;
  std::map<std::string, const core::QueueSpec*> had_queue;
  for (const core::QueueSpec& q : accepted_.queues) had_queue[q.name] = &q;
  for (const json& object : ByName(*queue_objects_)) {
    const std::string name = Meta(object, "name");
    const json spec = object.value("spec", json::object());
    auto ns = ReadNamespaces(spec, name);
    json rest = spec.is_object() ? spec : json::object();
    rest.erase("namespaces");
    auto q = ns ? config::ParseQueueObject(YAML::Load(rest.dump()), name, "Queue " + name, "spec")
                : core::Result<core::QueueSpec>(std::unexpected(ns.error()));
    if (!q) {
      problems["Queue " + name] = q.error().message;
      // An edit refused: the spec accepted before stays in effect.
      if (auto it = had_queue.find(name); it != had_queue.end()) {
        queues.push_back(*it->second);
        namespaces[name] = accepted_.namespaces[name];
      }
      continue;
    }
    queues.push_back(std::move(*q));
    namespaces[name] = std::move(*ns);
  }
  std::vector<core::CohortSpec> cohorts;
  if (cohort_objects_) {
    std::map<std::string, const core::CohortSpec*> had_cohort;
    for (const core::CohortSpec& c : accepted_.cohorts) had_cohort[c.name] = &c;
    for (const json& object : ByName(*cohort_objects_)) {
      const std::string name = Meta(object, "name");
      const json spec = object.value("spec", json::object());
      auto c = config::ParseCohortObject(YAML::Load(spec.is_object() ? spec.dump() : "{}"), name,
                                         "Cohort " + name, "spec");
      if (!c) {
        problems["Cohort " + name] = c.error().message;
        if (auto it = had_cohort.find(name); it != had_cohort.end()) {
          cohorts.push_back(*it->second);
        }
        continue;
      }
      cohorts.push_back(std::move(*c));
    }
  }
  if (auto st = config::CheckQueueObjects(queues, cohorts); !st) {
    // The set as a whole is refused (a cycle of parents, quotas past the
    // limits): what was in effect stays, the objects say why.
    const std::string& m = st.error().message;
    std::string who;
    for (const core::QueueSpec& q : queues) {
      if (m.starts_with("Queue " + q.name + ".") && q.name.size() + 6 > who.size()) {
        who = "Queue " + q.name;
      }
    }
    for (const core::CohortSpec& c : cohorts) {
      if (m.starts_with("Cohort " + c.name + ".") && c.name.size() + 7 > who.size()) {
        who = "Cohort " + c.name;
      }
    }
    problems[who] = m;
    Log("error", "queues refused: the ones before stay in effect", {{"error", m}});
  } else {
    accepted_.queues = std::move(queues);
    accepted_.cohorts = std::move(cohorts);
    accepted_.namespaces = std::move(namespaces);
  }
  // Each namespace defaults to at most one queue: the first by name.
  accepted_.namespace_default.clear();
  for (const core::QueueSpec& q : accepted_.queues) {
    for (const std::string& ns : accepted_.namespaces[q.name]) {
      auto [it, inserted] = accepted_.namespace_default.emplace(ns, q.name);
      if (!inserted && !problems.contains("Queue " + q.name)) {
        problems["Queue " + q.name] =
            fmt::format("Queue {}: spec.namespaces: namespace {} already defaults to queue {}",
                        q.name, ns, it->second);
      }
    }
  }
  for (const auto& [who, why] : problems) {
    if (queue_problems_[who] != why) Log("error", "queue object refused", {{"error", why}});
  }
  queue_problems_ = std::move(problems);
  ApplyQueues();
  queues_changed_ = true;  // their status, written if it differs
}

void Operator::ApplyQueues() {
  if (!queue_objects_) return;
  bool remapped = false;
  std::set<std::string> named;
  for (const auto& [key, j] : by_key_) {
    TrainingJob& tj = tjs_[j];
    if (!tj.queue_given) {
      const std::string& q = DefaultQueue(tj.namespace_name);
      if (tj.job.queue != q) {
        tj.job.queue = q;
        remapped = true;
        status_dirty_.push_back(j);
      }
    }
    named.insert(tj.job.queue);
  }
  std::set<std::string> declared;
  for (const core::QueueSpec& q : accepted_.queues) declared.insert(q.name);
  std::vector<core::QueueSpec> queues = accepted_.queues;
  std::set<std::string> missing;
  for (const std::string& name : named) {
    if (name == "default" || declared.contains(name)) continue;
    missing.insert(name);
    queues.push_back(Placeholder(name));
  }
  if (!remapped && queues == engine_queues_ && accepted_.cohorts == engine_cohorts_) return;
  // Jobs whose queue came or went: told anew.
  for (const auto& [key, j] : by_key_) {
    if (missing.contains(tjs_[j].job.queue) != missing_queues_.contains(tjs_[j].job.queue)) {
      never_fits_.erase(j);
      queue_told_.erase(j);
      status_dirty_.push_back(j);
    }
  }
  missing_queues_ = std::move(missing);
  engine_queues_ = std::move(queues);
  engine_cohorts_ = accepted_.cohorts;
  scheduler_.MutableState().SetQueues(engine_queues_, engine_cohorts_);
  queues_changed_ = true;
  dirty_ = true;
  Log("info", "queues",
      {{"queues", accepted_.queues.size()},
       {"cohorts", accepted_.cohorts.size()},
       {"missing", json(missing_queues_)}});
}

const std::string& Operator::DefaultQueue(const std::string& namespace_name) const {
  static const std::string kDefault = "default";
  auto it = accepted_.namespace_default.find(namespace_name);
  return it == accepted_.namespace_default.end() ? kDefault : it->second;
}

void Operator::PlaceInQueue(TrainingJob& tj) {
  if (!queue_objects_) return;
  if (!tj.queue_given) tj.job.queue = DefaultQueue(tj.namespace_name);
  if (tj.job.queue == "default") return;
  for (const core::QueueSpec& q : engine_queues_) {
    if (q.name == tj.job.queue) return;
  }
  // A queue no Queue declares: it waits in one of nothing.
  missing_queues_.insert(tj.job.queue);
  engine_queues_.push_back(Placeholder(tj.job.queue));
  scheduler_.MutableState().SetQueues(engine_queues_, engine_cohorts_);
  queues_changed_ = true;
}

bool Operator::QueueMissing(JobIndex j) const {
  return queue_objects_ && missing_queues_.contains(tjs_[j].job.queue);
}

void Operator::WriteQueueStatus() {
  if (!queue_objects_ || !queues_changed_) return;
  queues_changed_ = false;
  const engine::QuotaBook& book = state_.Quotas();
  // queue -> (pending, admitted), from the jobs in the engine's phases.
  std::map<std::string, std::pair<int64_t, int64_t>> jobs;
  for (int p = 0; p < core::kNumJobPhases; ++p) {
    const auto phase = static_cast<JobPhase>(p);
    if (core::IsFinal(phase) || phase == JobPhase::kSubmitted) continue;
    for (const JobIndex j : state_.JobsInPhase(phase)) {
      const engine::JobState& js = state_.Job(j);
      auto& [pending, admitted] = jobs[tjs_[j].job.queue];
      if (js.placed_tasks > 0) {
        ++admitted;
      } else if (js.IsPending()) {
        ++pending;
      }
    }
  }
  const std::string now = NowRfc3339();
  const std::vector<std::string> keys = queue_objects_->Keys();
  for (const std::string& name : keys) {
    const int q = book.Find(name);
    const bool in_effect = q >= 0 && !missing_queues_.contains(name);
    const auto problem = queue_problems_.find("Queue " + name);
    json status = json::object();
    const auto [pending, admitted] = jobs[name];
    status["pendingJobs"] = pending;
    status["admittedJobs"] = admitted;
    core::Resources usage, borrowed;
    if (in_effect) {
      usage = book.Usage(q);
      for (const core::QuotaLine& l : book.Spec(q).quota) {
        borrowed[l.id] = std::max<int64_t>(0, usage[l.id] - l.nominal);
      }
      const core::QuotaLine* gpu = book.Spec(q).Line(core::kGpu);
      status["nominalGPUs"] = gpu != nullptr ? gpu->nominal : 0;
    }
    status["usage"] = Quantities(usage);
    status["borrowed"] = Quantities(borrowed);
    status["usedGPUs"] = usage[core::kGpu];
    status["borrowedGPUs"] = borrowed[core::kGpu];
    const bool active = in_effect;
    const std::string reason =
        problem != queue_problems_.end() ? (active ? "SpecRefused" : "InvalidSpec") : "Ready";
    const std::string message =
        problem == queue_problems_.end()
            ? "the queue admits jobs within its quota"
            : (active ? "the spec accepted before stays in effect: " : "") + problem->second;
    status["conditions"] = json::array({{{"type", "Active"},
                                         {"status", active ? "True" : "False"},
                                         {"reason", reason},
                                         {"message", message}}});
    // What was last written (or found written), without the time of the
    // condition: when it is what the queue says now, nothing is read.
    json& written = queue_status_[name];
    if (written == status) continue;
    const auto object = queue_objects_->Get(name);
    if (!object) continue;  // deleted meanwhile
    const json old = object->value("status", json::object());
    std::string since = now;
    if (old.is_object() && old.contains("conditions") && old["conditions"].is_array()) {
      for (const json& c : old["conditions"]) {
        if (c.is_object() && c.value("type", "") == "Active" &&
            c.value("status", "") == (active ? "True" : "False")) {
          since = c.value("lastTransitionTime", now);
        }
      }
    }
    json full = status;
    full["conditions"][0]["lastTransitionTime"] = since;
    if (old == full) {
      written = std::move(status);
      continue;
    }
    auto r = Call("PATCH", KindPath(kQueuePlural) + "/" + name + "/status",
                  json::array({{{"op", "add"}, {"path", "/status"}, {"value", full}}}),
                  "application/json-patch+json");
    if (r && (r->status < 300 || r->status == 404)) {
      written = std::move(status);
    } else {
      queues_changed_ = true;  // again at the next step
    }
  }
  // Queues deleted: nothing more to remember.
  std::erase_if(queue_status_, [&](const auto& entry) {
    return !std::binary_search(keys.begin(), keys.end(), entry.first);
  });
}

}  // namespace dlsched::k8s
