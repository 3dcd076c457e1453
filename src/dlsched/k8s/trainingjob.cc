#include "dlsched/k8s/trainingjob.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "dlsched/config/fields.h"
#include "dlsched/config/job_checks.h"
#include "dlsched/config/job_decoder.h"
#include "dlsched/config/specs.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/objects.h"

namespace dlsched::k8s {
namespace {

using nlohmann::json;

using config::Index;
using config::Key;

// A JSON value in a message: short and escaped.
std::string Describe(const json& v) {
  if (v.is_string()) return "'" + core::EscapeText(v.get<std::string>(), 60) + "'";
  if (v.is_object()) return "a map";
  if (v.is_array()) return "a list";
  if (v.is_null()) return "null";
  return core::EscapeText(v.dump(), 60);
}

// TrainingJob fields as the field reader reads them (config/fields.h): JSON
// numbers, shown as Describe shows them; expectations worded "an integer
// in 1..9", "a number in (0, 1e+07]". As the job decoder
// (config/job_decoder.h) walks them: a field is given when its key is there
// (null too), a string is a JSON string.
struct JsonFields {
  using Value = json;
  static constexpr config::FieldWording kWording{config::IntegerInDots,
                                                 config::NumberIntervalShort};
  static std::string Describe(const json& v) { return k8s::Describe(v); }
  static std::optional<int64_t> ToInt(const json& v) {
    if (!v.is_number_integer()) return std::nullopt;
    return v.get<int64_t>();
  }
  static std::optional<bool> ToBool(const json& v) {
    if (!v.is_boolean()) return std::nullopt;
    return v.get<bool>();
  }
  static std::optional<double> ToNumber(const json& v) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return std::nullopt;
    return v.get<double>();
  }

  using Field = const json*;
  static Field Find(const json& map, std::string_view key) {
    if (!map.is_object()) return nullptr;
    const auto it = map.find(std::string(key));
    return it == map.end() ? nullptr : &*it;
  }
  static std::optional<std::string> Text(const json& v) {
    if (!v.is_string()) return std::nullopt;
    return v.get<std::string>();
  }
  template <typename Fn>
  static core::Status ForEachEntry(const json& map, Fn fn) {
    for (const auto& [k, v] : map.items()) DLSCHED_TRY(fn(json(k), v));
    return {};
  }
};

// Errors of one object: "<source>: <path>: <what>".
class Errors : public config::FieldReader<JsonFields> {
 public:
  explicit Errors(std::string source) : FieldReader(std::move(source)) {}
  // Checks that `v` is an object whose keys are all in `allowed`.
  core::Status Object(const json& v, const std::string& path,
                      std::initializer_list<std::string_view> allowed) const {
    if (!v.is_object()) return Expected(path, "a map", v);
    for (const auto& [k, _] : v.items()) {
      bool ok = false;
      for (auto a : allowed) ok = ok || a == k;
      if (!ok) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return Fail(Key(path, core::EscapeText(k, 60)),
                    fmt::format("unknown key (allowed: {})", list));
      }
    }
    return {};
  }
};

// A TrainingJob's words for the fields every format of a job shares.
constexpr config::JobWording kTrainingJobWording{
    .min_above_max_only_when_both_given = false,
    .replicas_above_max_on_max = true,
    .priority_expected = "high, normal or low",
    .priority_key = "priorityClass",
    .queue_expected = "a queue name",
    .default_replicas = 1,  // as TFJob's
    .bad_table_key =
        [](std::string_view) {
          return fmt::format("the key must be a worker count in 1..{}", core::kMaxTasksPerJob);
        },
    .bad_table_rate =
        [](std::string_view) {
          return fmt::format("a rate must be 0 or at least {:g} steps/s", core::kMinRate);
        },
    .duplicate_worker_counts_refused = false};

// The one decoder of a job's fields, over JSON.
config::JobDecoder<JsonFields> Decoder(const Errors& e) { return {e, kTrainingJobWording}; }

// JSON text is YAML: sub-objects go through the workload's parsers, so a
// pod template means exactly what a workload role does.
YAML::Node ToYaml(const json& v) { return YAML::Load(v.dump()); }

// One container's requests: `requests`, and for a key given only under
// `limits`, the limit (the API server's defaulting of a container).
core::Result<core::ContainerSpec> DecodeContainer(const Errors& e, const json& c,
                                                  const std::string& path) {
  if (!c.is_object()) return e.Expected(path, "a container (a map)", c);
  core::ContainerSpec out;
  if (c.contains("name") && c["name"].is_string()) out.name = c["name"].get<std::string>();
  if (!c.contains("resources")) return out;
  const json& res = c["resources"];
  const std::string res_path = Key(path, "resources");
  if (!res.is_object()) return e.Expected(res_path, "a map with requests and limits", res);
  core::Resources requests, limits;
  std::vector<std::string> request_keys, limit_keys;
  for (const char* which : {"requests", "limits"}) {
    if (!res.contains(which) || res[which].is_null()) continue;
    const json& list = res[which];
    if (!list.is_object()) return e.Expected(Key(res_path, which), "a map of quantities", list);
    json as_strings = json::object();
    for (const auto& [k, v] : list.items()) {
      as_strings[k] = v.is_number() ? json(v.dump()) : v;
      (std::string_view(which) == "requests" ? request_keys : limit_keys).push_back(k);
    }
    DLSCHED_TRY_LET(
        parsed, config::ParseResourceList(ToYaml(as_strings), e.source(), Key(res_path, which)));
    (std::string_view(which) == "requests" ? requests : limits) = *parsed;
  }
  out.requests = requests;
  for (const std::string& k : limit_keys) {
    if (std::find(request_keys.begin(), request_keys.end(), k) != request_keys.end()) continue;
    auto id = core::InternResource(k);
    if (!id) return e.Fail(Key(Key(res_path, "limits"), k), id.error().message);
    out.requests[*id] = limits[*id];
    request_keys.push_back(k);
  }
  for (const std::string& k : request_keys) {
    if (k == "cpu") out.sets_cpu = true;
    if (k == "memory") out.sets_memory = true;
  }
  return out;
}

core::Status DecodeContainers(const Errors& e, const json& spec, const std::string& path,
                              std::string_view key, std::vector<core::ContainerSpec>& out) {
  if (!spec.contains(key) || spec[key].is_null()) return {};
  const json& list = spec[key];
  const std::string list_path = Key(path, key);
  if (!list.is_array()) return e.Expected(list_path, "a list of containers", list);
  for (size_t i = 0; i < list.size(); ++i) {
    DLSCHED_TRY_LET(c, DecodeContainer(e, list[i], Index(list_path, i)));
    out.push_back(std::move(*c));
  }
  return {};
}

}  // namespace

core::Status DecodePodTemplate(const json& tmpl, const std::string& source, const std::string& at,
                               core::RoleSpec& role) {
  const Errors e(source);
  if (!tmpl.is_object()) return e.Expected(at, "a pod template (a map with spec)", tmpl);
  if (!tmpl.contains("spec")) return e.Fail(Key(at, "spec"), "missing, expected a pod spec");
  const json& spec = tmpl["spec"];
  const std::string spec_path = Key(at, "spec");
  if (!spec.is_object()) return e.Expected(spec_path, "a pod spec (a map)", spec);
  if (!spec.contains("containers") || !spec["containers"].is_array() ||
      spec["containers"].empty()) {
    return e.Fail(Key(spec_path, "containers"), "expected a non-empty list of containers");
  }
  role.containers.clear();
  role.init_containers.clear();
  if (auto st = DecodeContainers(e, spec, spec_path, "containers", role.containers); !st) return st;
  if (auto st = DecodeContainers(e, spec, spec_path, "initContainers", role.init_containers); !st) {
    return st;
  }
  core::Resources sum;
  for (const auto& c : role.containers) sum += c.requests;
  for (const auto& c : role.init_containers) sum = Max(sum, c.requests);
  if (spec.contains("overhead") && spec["overhead"].is_object()) {
    // RuntimeClass overhead counts as part of the pod's request.
    auto overhead =
        config::ParseResourceList(ToYaml(spec["overhead"]), e.source(), Key(spec_path, "overhead"));
    DLSCHED_TRY(overhead);
    sum += *overhead;
  }
  if (core::FirstId(sum, [&](core::ResourceId id) { return sum[id] > core::kMaxAmount; }) >= 0) {
    return e.Fail(Key(spec_path, "containers"), "the containers' total request is too large");
  }
  if (std::string why = core::GpuShareProblem(sum); !why.empty()) {
    return e.Fail(Key(spec_path, "containers"), why);
  }
  role.resources = sum;

  // Placement rules. Only what dlsched enforces is passed on: the required
  // node affinity. Preferred affinity is a soft wish kube-scheduler scores
  // and dlsched does not; required pod (anti-)affinity it cannot honour, so
  // a template asking for it is refused rather than silently broken.
  json placement = json::object();
  for (const char* k : {"nodeSelector", "tolerations"}) {
    if (spec.contains(k) && !spec[k].is_null()) placement[k] = spec[k];
  }
  if (spec.contains("affinity") && spec["affinity"].is_object()) {
    const json& aff = spec["affinity"];
    const std::string aff_path = Key(spec_path, "affinity");
    for (const char* pod : {"podAffinity", "podAntiAffinity"}) {
      if (aff.contains(pod) && aff[pod].is_object() &&
          aff[pod].contains("requiredDuringSchedulingIgnoredDuringExecution")) {
        return e.Fail(Key(Key(aff_path, pod), "requiredDuringSchedulingIgnoredDuringExecution"),
                      "required pod (anti-)affinity is not supported by dlsched (use the "
                      "PsWorkerAffinity / PsAntiAffinity scorers)");
      }
    }
    if (aff.contains("nodeAffinity") && aff["nodeAffinity"].is_object() &&
        aff["nodeAffinity"].contains("requiredDuringSchedulingIgnoredDuringExecution")) {
      const json& req = aff["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
      if (req.is_object() && req.contains("nodeSelectorTerms") &&
          req["nodeSelectorTerms"].is_array()) {
        for (size_t i = 0; i < req["nodeSelectorTerms"].size(); ++i) {
          const json& term = req["nodeSelectorTerms"][i];
          if (term.is_object() && term.contains("matchFields")) {
            return e.Fail(
                fmt::format("{}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                            ".nodeSelectorTerms[{}].matchFields",
                            aff_path, i),
                "matchFields is not supported by dlsched (use matchExpressions on "
                "labels)");
          }
        }
      }
      placement["affinity"] = {
          {"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", req}}}};
    }
  }
  role.constraints = {};
  return config::ParsePodConstraints(ToYaml(placement), e.source(), spec_path, role.constraints);
}

namespace {

// One role of the replica specs at `rs_path` (`rs[RoleName(role)]`, when
// given) into `job`, its pod template into `tmpl`; `tasks` counts what it
// adds to the job's limit (a worker role at maxReplicas). Its restartPolicy
// is `restart` unless given.
core::Status DecodeRole(const Errors& e, const json& rs, const std::string& rs_path,
                        core::Role role, std::string_view key, core::RestartPolicy restart,
                        core::JobSpec& job, json& tmpl, int64_t& tasks) {
  const std::string name(key);
  if (!rs.contains(name)) return {};
  const std::string path = Key(rs_path, name);
  const json& r = rs[name];
  const bool worker = role == core::Role::kWorker;
  DLSCHED_TRY(
      worker ? e.Object(r, path,
                        {"replicas", "minReplicas", "maxReplicas", "restartPolicy", "template"})
             : e.Object(r, path, {"replicas", "restartPolicy", "template"}));
  core::RoleSpec& out_role = job.role(role);
  DLSCHED_TRY(Decoder(e).Replicas(r, path, role, out_role));
  out_role.restart_policy = restart;
  DLSCHED_TRY(Decoder(e).RestartPolicy(r, path, out_role));
  tasks += worker ? out_role.max_replicas : out_role.replicas;
  if (out_role.replicas == 0) return {};
  if (!r.contains("template")) return e.Fail(Key(path, "template"), "missing");
  DLSCHED_TRY(DecodePodTemplate(r["template"], e.source(), Key(path, "template"), out_role));
  tmpl = r["template"];
  return {};
}

// TFJob's Evaluator: 0 or 1 replica (Kubeflow's validation), its pod
// template read as any role's (so what dlsched refuses in one is refused
// here too), not part of the job's gang.
core::Status DecodeEvaluator(const Errors& e, const json& rs, const std::string& rs_path,
                             TrainingJob& out) {
  if (!rs.contains("Evaluator")) return {};
  const std::string path = Key(rs_path, "Evaluator");
  const json& r = rs["Evaluator"];
  DLSCHED_TRY(e.Object(r, path, {"replicas", "restartPolicy", "template"}));
  if (r.contains("replicas")) {
    DLSCHED_TRY_LET(n, e.Int(r["replicas"], Key(path, "replicas"), 0, 1));
    out.evaluators = static_cast<int>(*n);
  } else {
    out.evaluators = 1;  // TFJob's default replicas
  }
  if (out.evaluators == 0) return {};
  if (!r.contains("template")) return e.Fail(Key(path, "template"), "missing");
  core::RoleSpec scratch;
  DLSCHED_TRY(DecodePodTemplate(r["template"], e.source(), Key(path, "template"), scratch));
  out.evaluator_template = r["template"];
  return {};
}

// spec.replicaSpecs (or the TFJob name, spec.tfReplicaSpecs, or
// PyTorchJob's spec.pytorchReplicaSpecs) into `out`; `rs_path` is set to
// the one given.
core::Status DecodeReplicaSpecs(const Errors& e, const json& spec, TrainingJob& out,
                                std::string& rs_path) {
  int given = 0;
  const char* section = "replicaSpecs";
  for (const char* key : {"replicaSpecs", "tfReplicaSpecs", "pytorchReplicaSpecs"}) {
    if (spec.contains(key)) {
      ++given;
      section = key;
    }
  }
  if (given != 1) {
    return e.Fail("spec",
                  "give exactly one of replicaSpecs, tfReplicaSpecs (the TFJob name) and "
                  "pytorchReplicaSpecs (PyTorchJob's)");
  }
  out.framework = std::string_view(section) == "pytorchReplicaSpecs" ? Framework::kPyTorch
                                                                     : Framework::kTensorFlow;
  rs_path = Key("spec", section);
  const json& rs = spec[section];
  if (out.framework == Framework::kPyTorch) {
    DLSCHED_TRY(e.Object(rs, rs_path, {"Master", "Worker"}));
  } else {
    DLSCHED_TRY(e.Object(rs, rs_path, {"PS", "Chief", "Worker", "Evaluator"}));
    DLSCHED_TRY(DecodeEvaluator(e, rs, rs_path, out));
  }
  if (!rs.contains("Worker")) return e.Fail(Key(rs_path, "Worker"), "missing");
  int64_t tasks = 0;
  // Kubeflow's defaults: TFJob's replicas Never, PyTorchJob's OnFailure.
  const core::RestartPolicy restart = out.framework == Framework::kPyTorch
                                          ? core::RestartPolicy::kOnFailure
                                          : core::RestartPolicy::kNever;
  for (const core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    DLSCHED_TRY(DecodeRole(e, rs, rs_path, role, out.ReplicaName(role), restart, out.job,
                           out.templates[static_cast<int>(role)], tasks));
  }
  if (out.framework == Framework::kPyTorch && rs.contains("Master") &&
      out.job.role(core::Role::kChief).replicas != 1) {
    return e.Fail(Key(Key(rs_path, "Master"), "replicas"),
                  "a PyTorchJob has exactly 1 Master replica");
  }
  if (tasks > core::kMaxTasksPerJob) {
    return e.Fail(rs_path, fmt::format("{} tasks at maxReplicas; at most {} per job", tasks,
                                       core::kMaxTasksPerJob));
  }
  return {};
}

// A string field of `obj` at `path`, when given, into `out`.
core::Status OptionalText(const Errors& e, const json& obj, const std::string& path,
                          const char* key, std::string& out) {
  if (!obj.contains(key)) return {};
  const json& v = obj[key];
  if (!v.is_string() || v.get<std::string>().empty()) {
    return e.Expected(Key(path, key), "a non-empty string", v);
  }
  out = v.get<std::string>();
  return {};
}

// An integer field of `obj` at `path` within [lo, hi], when given.
core::Status OptionalInt(const Errors& e, const json& obj, const std::string& path, const char* key,
                         int64_t lo, int64_t hi, int& out) {
  if (!obj.contains(key)) return {};
  DLSCHED_TRY_LET(v, e.Int(obj[key], Key(path, key), lo, hi));
  out = static_cast<int>(*v);
  return {};
}

// PyTorchJob's spec.elasticPolicy: the rendezvous, and minReplicas and
// maxReplicas as the Worker role's range (given there or here, not both).
core::Status DecodeElasticPolicy(const Errors& e, const json& p, const std::string& rs_path,
                                 const json& worker, TrainingJob& out) {
  const std::string path = "spec.elasticPolicy";
  DLSCHED_TRY(e.Object(p, path,
                       {"minReplicas", "maxReplicas", "rdzvBackend", "rdzvHost", "rdzvPort",
                        "rdzvId", "nProcPerNode", "maxRestarts"}));
  ElasticPolicy& policy = out.elastic.emplace();
  DLSCHED_TRY(OptionalText(e, p, path, "rdzvBackend", policy.rdzv_backend));
  if (policy.rdzv_backend != "c10d" && policy.rdzv_backend != "etcd" &&
      policy.rdzv_backend != "etcd-v2") {
    return e.Fail(Key(path, "rdzvBackend"), fmt::format("expected c10d, etcd or etcd-v2, got {}",
                                                        core::EscapeText(policy.rdzv_backend, 60)));
  }
  DLSCHED_TRY(OptionalText(e, p, path, "rdzvHost", policy.rdzv_host));
  DLSCHED_TRY(OptionalText(e, p, path, "rdzvId", policy.rdzv_id));
  DLSCHED_TRY(OptionalInt(e, p, path, "rdzvPort", 1, 65535, policy.rdzv_port));
  DLSCHED_TRY(OptionalInt(e, p, path, "nProcPerNode", 1, 1024, policy.n_proc_per_node));
  DLSCHED_TRY(OptionalInt(e, p, path, "maxRestarts", 0, 1000000, policy.max_restarts));
  core::RoleSpec& w = out.job.role(core::Role::kWorker);
  for (const char* key : {"minReplicas", "maxReplicas"}) {
    if (!p.contains(key)) continue;
    if (worker.contains(key)) {
      return e.Fail(Key(path, key), fmt::format("also given as {}: give the range in one place",
                                                Key(Key(rs_path, "Worker"), key)));
    }
    int v = 0;
    DLSCHED_TRY(OptionalInt(e, p, path, key, 1, core::kMaxTasksPerJob, v));
    const bool min = std::string_view(key) == "minReplicas";
    if (min ? v > w.replicas : v < w.replicas) {
      return e.Fail(Key(path, key), fmt::format("{} is {} than the Worker replicas, {}", v,
                                                min ? "greater" : "less", w.replicas));
    }
    (min ? w.min_replicas : w.max_replicas) = v;
  }
  if (w.min_replicas > w.max_replicas) {
    return e.Fail(
        path, fmt::format("minReplicas {} exceeds maxReplicas {}", w.min_replicas, w.max_replicas));
  }
  return {};
}

// spec.scheduling: priorityClass, maxWaitMinutes, queue.
core::Status DecodeScheduling(const Errors& e, const json& s, core::JobSpec& job) {
  DLSCHED_TRY(e.Object(s, "spec.scheduling", {"priorityClass", "maxWaitMinutes", "queue"}));
  return Decoder(e).Scheduling(s, "spec.scheduling", job);
}

// Kubeflow's runPolicy fields dlsched does not honour: refused, naming the
// field, never ignored.
constexpr std::pair<std::string_view, std::string_view> kRefusedRunPolicy[] = {
    {"managedBy", "not supported by dlsched (the dlsched operator manages every TrainingJob)"},
};
constexpr std::pair<std::string_view, std::string_view> kRefusedSchedulingPolicy[] = {
    {"minResources", "not supported by dlsched (the gang's minimum is minAvailable's)"},
    {"scheduleTimeoutSeconds",
     "not supported by dlsched (use spec.scheduling.maxWaitMinutes, the profile's starvation "
     "rule)"},
};

// runPolicy.schedulingPolicy: minAvailable as the gang's minimum (every PS
// and Chief, and minAvailable - those workers), queue as spec.scheduling's,
// priorityClass as a PriorityClass's name (read by the operator).
core::Status DecodeSchedulingPolicy(const Errors& e, const json& p, const json& scheduling,
                                    const std::string& rs_path, bool min_given, TrainingJob& out) {
  const std::string path = "spec.runPolicy.schedulingPolicy";
  for (const auto& [key, why] : kRefusedSchedulingPolicy) {
    if (p.is_object() && p.contains(key)) return e.Fail(Key(path, key), std::string(why));
  }
  DLSCHED_TRY(e.Object(p, path, {"minAvailable", "queue", "priorityClass"}));
  for (const char* key : {"queue", "priorityClass"}) {
    if (p.contains(key) && scheduling.is_object() && scheduling.contains(key)) {
      return e.Fail(Key(path, key), fmt::format("also given as spec.scheduling.{}: give it in "
                                                "one place",
                                                key));
    }
  }
  if (p.contains("queue")) {
    const std::string q = Key(path, "queue");
    if (!p["queue"].is_string()) return e.Expected(q, "a queue name", p["queue"]);
    if (auto problem = core::NameProblem(p["queue"].get<std::string>())) return e.Fail(q, *problem);
    out.job.queue = p["queue"].get<std::string>();
  }
  if (p.contains("priorityClass")) {
    const std::string pc = Key(path, "priorityClass");
    const json& v = p["priorityClass"];
    if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 253) {
      return e.Expected(pc, "the name of a PriorityClass", v);
    }
    out.run_policy.priority_class = v.get<std::string>();
  }
  if (!p.contains("minAvailable")) return {};
  core::JobSpec& job = out.job;
  core::RoleSpec& w = job.role(core::Role::kWorker);
  const int fixed = job.role(core::Role::kPS).replicas + job.role(core::Role::kChief).replicas;
  const std::string ma = Key(path, "minAvailable");
  DLSCHED_TRY_LET(v, e.Int(p["minAvailable"], ma, 1, core::kMaxTasksPerJob));
  if (min_given) {
    return e.Fail(ma,
                  "also given as the Worker's minReplicas: give the gang's minimum in one "
                  "place");
  }
  if (*v <= fixed || *v > fixed + w.replicas) {
    return e.Fail(ma, fmt::format("{} is outside {}..{}: dlsched's gang is every PS and Chief "
                                  "({}) and 1 to replicas ({}) workers of {}",
                                  *v, fixed + 1, fixed + w.replicas, fixed, w.replicas,
                                  Key(rs_path, "Worker")));
  }
  w.min_replicas = static_cast<int>(*v) - fixed;
  return {};
}

// spec.runPolicy: Kubeflow's RunPolicy (cleanPodPolicy,
// ttlSecondsAfterFinished, activeDeadlineSeconds, suspend, backoffLimit,
// schedulingPolicy); the rest refused.
core::Status DecodeRunPolicy(const Errors& e, const json& spec, const std::string& rs_path,
                             TrainingJob& out) {
  RunPolicy& rp = out.run_policy;
  rp.clean_pod_policy =
      out.framework == Framework::kPyTorch ? CleanPodPolicy::kNone : CleanPodPolicy::kRunning;
  if (!spec.contains("runPolicy")) return {};
  const json& p = spec["runPolicy"];
  const std::string path = "spec.runPolicy";
  for (const auto& [key, why] : kRefusedRunPolicy) {
    if (p.is_object() && p.contains(key)) return e.Fail(Key(path, key), std::string(why));
  }
  DLSCHED_TRY(e.Object(p, path,
                       {"cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds",
                        "suspend", "backoffLimit", "schedulingPolicy"}));
  DLSCHED_TRY(Decoder(e).BackoffLimit(p, path, out.job));
  if (p.contains("cleanPodPolicy")) {
    const json& v = p["cleanPodPolicy"];
    const std::string c = v.is_string() ? v.get<std::string>() : "";
    if (c == "All") {
      rp.clean_pod_policy = CleanPodPolicy::kAll;
    } else if (c == "Running") {
      rp.clean_pod_policy = CleanPodPolicy::kRunning;
    } else if (c == "None") {
      rp.clean_pod_policy = CleanPodPolicy::kNone;
    } else {
      return e.Expected(Key(path, "cleanPodPolicy"), "All, Running or None", v);
    }
  }
  // Kubeflow's are int32 (seconds); a deadline is positive.
  constexpr int64_t kMaxSeconds = 2147483647;
  if (p.contains("ttlSecondsAfterFinished")) {
    DLSCHED_TRY_LET(v, e.Int(p["ttlSecondsAfterFinished"], Key(path, "ttlSecondsAfterFinished"), 0,
                             kMaxSeconds));
    rp.ttl_seconds_after_finished = *v;
  }
  if (p.contains("activeDeadlineSeconds")) {
    DLSCHED_TRY_LET(
        v, e.Int(p["activeDeadlineSeconds"], Key(path, "activeDeadlineSeconds"), 1, kMaxSeconds));
    rp.active_deadline_seconds = *v;
  }
  if (p.contains("suspend")) {
    DLSCHED_TRY_LET(v, e.Bool(p["suspend"], Key(path, "suspend")));
    rp.suspend = *v;
  }
  if (p.contains("schedulingPolicy")) {
    const json& worker = spec[rs_path.substr(5)]["Worker"];
    const bool min_given = worker.contains("minReplicas") ||
                           spec.value("elasticPolicy", json::object()).contains("minReplicas");
    DLSCHED_TRY(DecodeSchedulingPolicy(e, p["schedulingPolicy"], spec.value("scheduling", json()),
                                       rs_path, min_given, out));
  }
  return {};
}

// spec.throughput: the steps/s table by workers, a table per GPU type (a
// node's nvidia.com/gpu.product label), the locality sensitivity.
core::Status DecodeThroughput(const Errors& e, const json& t, core::JobSpec& job) {
  DLSCHED_TRY(e.Object(t, "spec.throughput",
                       {"table", "gpuTypes", "localitySensitivity", "switchSensitivity"}));
  if (t.contains("table")) {
    const json& table = t["table"];
    if (!table.is_object() || table.empty()) {
      return e.Expected("spec.throughput.table", "a map of workers to steps/s", table);
    }
    DLSCHED_TRY(Decoder(e).RateTable(table, "spec.throughput.table", job.throughput));
  }
  if (t.contains("gpuTypes")) {
    const json& types = t["gpuTypes"];
    if (!types.is_object() || types.empty()) {
      return e.Expected("spec.throughput.gpuTypes", "a map of GPU type to a table", types);
    }
    core::GpuTypeRates rates;
    for (const auto& [type, table] : types.items()) {
      const std::string path = "spec.throughput.gpuTypes." + type;
      if (!table.is_object() || table.empty()) {
        return e.Expected(path, "a map of workers to steps/s", table);
      }
      core::ThroughputProfile one;
      DLSCHED_TRY(Decoder(e).RateTable(table, path, one));
      rates.emplace(type, std::move(one.steps_per_s));
    }
    job.throughput.SetGpuTypes(std::move(rates));
  }
  DLSCHED_TRY(Decoder(e).SwitchSensitivity(t, "spec.throughput", job.throughput));
  return Decoder(e).Locality(t, "spec.throughput", job.throughput);
}

// The limits every job keeps, as a workload file's job does
// (core/spec_limits.h): what is read above, and the job as a whole (its
// request of each resource at maxReplicas within 2^62). A job without
// totalSteps (no progress model) is checked as one with. A problem is
// named by the TrainingJob's field (roles under `rs_path`).
core::Status CheckLimits(const Errors& e, const TrainingJob& tj, const std::string& rs_path) {
  const core::JobSpec& job = tj.job;
  core::JobSpec whole = job;
  if (whole.total_steps == 0) whole.total_steps = 1;
  if (auto p = core::CheckJobLimits(whole)) {
    std::string field = p->field;
    for (const core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
      const std::string key(core::RoleKey(role));
      if (field == key || field.starts_with(key + ".")) {
        field = Key(rs_path, std::string(tj.ReplicaName(role))) + field.substr(key.size());
      }
    }
    return e.Fail(field.empty()               ? rs_path
                  : field.starts_with("spec") ? field
                                              : Key("spec", field),
                  p->what);
  }
  return {};
}

// The names the operator makes from the job's, checked as the API server
// will check them, so a job it would refuse is refused here once, with the
// field, instead of failing at every try: the headless Service is named
// after the job (a DNS-1035 label), each pod's spec.hostname is its name
// "<job>-<role>-<index>" and its spec.subdomain the job's (DNS-1123
// labels: at most 63 characters, for the highest index of each role).
core::Status CheckGeneratedNames(const Errors& e, const TrainingJob& tj) {
  if (auto p = Dns1035LabelProblem(tj.name)) {
    return e.Fail("metadata.name", *p + ", and the job's Service is named after it");
  }
  for (const core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const int n = tj.job.role(role).max_replicas;
    if (n <= 0) continue;
    const std::string pod = PodName(tj.name, role, n - 1);
    if (auto p = Dns1123LabelProblem(pod)) {
      return e.Fail("metadata.name", fmt::format("{} (the hostname of a pod of the job, made from "
                                                 "its name of {} characters)",
                                                 *p, tj.name.size()));
    }
  }
  if (tj.evaluators > 0) {
    if (auto p = Dns1123LabelProblem(EvaluatorPodName(tj.name, tj.evaluators - 1))) {
      return e.Fail("metadata.name", fmt::format("{} (the hostname of the job's evaluator pod, "
                                                 "made from its name of {} characters)",
                                                 *p, tj.name.size()));
    }
  }
  return {};
}

}  // namespace

std::string_view CleanPodPolicyName(CleanPodPolicy p) {
  switch (p) {
    case CleanPodPolicy::kAll:
      return "All";
    case CleanPodPolicy::kRunning:
      return "Running";
    case CleanPodPolicy::kNone:
      return "None";
  }
  return "?";
}

std::string_view TrainingJob::ReplicaName(core::Role role) const {
  if (framework == Framework::kPyTorch && role == core::Role::kChief) return "Master";
  return core::RoleName(role);
}

core::Result<TrainingJob> DecodeTrainingJob(const json& object) {
  TrainingJob out;
  if (!object.is_object()) return core::Errorf("TrainingJob: expected an object");
  const json meta = object.value("metadata", json::object());
  out.namespace_name = meta.value("namespace", std::string("default"));
  out.name = meta.value("name", std::string());
  out.uid = meta.value("uid", std::string());
  out.resource_version = meta.value("resourceVersion", std::string());
  out.generation = meta.value("generation", int64_t{0});
  const Errors e(fmt::format("TrainingJob {}/{}", core::EscapeText(out.namespace_name, 63),
                             core::EscapeText(out.name, 253)));
  if (auto problem = core::NameProblem(out.name)) return e.Fail("metadata.name", *problem);
  core::JobSpec& job = out.job;
  job.name = out.name;
  job.namespace_name = out.namespace_name;

  if (!object.contains("spec")) return e.Fail("spec", "missing");
  const json& spec = object["spec"];
  DLSCHED_TRY(e.Object(
      spec, "spec",
      {"replicaSpecs", "tfReplicaSpecs", "pytorchReplicaSpecs", "elasticPolicy", "scheduling",
       "totalSteps", "throughput", "launchDelay", "checkpointDelay", "runPolicy"}));
  std::string rs_path;
  DLSCHED_TRY(DecodeReplicaSpecs(e, spec, out, rs_path));
  if (spec.contains("elasticPolicy")) {
    if (out.framework != Framework::kPyTorch) {
      return e.Fail("spec.elasticPolicy", "only with pytorchReplicaSpecs (PyTorchJob's)");
    }
    DLSCHED_TRY(DecodeElasticPolicy(e, spec["elasticPolicy"], rs_path,
                                    spec["pytorchReplicaSpecs"]["Worker"], out));
  }
  DLSCHED_TRY(CheckGeneratedNames(e, out));
  if (spec.contains("scheduling")) {
    DLSCHED_TRY(DecodeScheduling(e, spec["scheduling"], job));
  }
  DLSCHED_TRY(DecodeRunPolicy(e, spec, rs_path, out));
  auto has_queue = [](const json& o) { return o.is_object() && o.contains("queue"); };
  const json run_policy = spec.value("runPolicy", json::object());
  out.queue_given =
      has_queue(spec.value("scheduling", json())) ||
      (run_policy.is_object() && has_queue(run_policy.value("schedulingPolicy", json())));
  DLSCHED_TRY(Decoder(e).TotalSteps(spec, "spec", job));
  DLSCHED_TRY(Decoder(e).Delays(spec, "spec", job));
  if (spec.contains("throughput")) {
    DLSCHED_TRY(DecodeThroughput(e, spec["throughput"], job));
  }
  DLSCHED_TRY(CheckLimits(e, out, rs_path));
  return out;
}

}  // namespace dlsched::k8s
