#include "dlsched/k8s/objects.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <random>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "dlsched/config/specs.h"
#include "dlsched/core/text.h"

namespace dlsched::k8s {

using nlohmann::json;

std::string PodName(std::string_view job, core::Role role, int index) {
  return fmt::format("{}-{}-{}", job, core::RoleKey(role), index);
}

std::string EvaluatorPodName(std::string_view job, int index) {
  return fmt::format("{}-{}-{}", job, kEvaluatorKey, index);
}

namespace {

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [first]([-a-z0-9]*[a-z0-9])? where `first` is [a-z0-9], or [a-z] when
// `alpha_first`.
bool LabelShape(std::string_view s, bool alpha_first) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  if (alpha_first && !(s.front() >= 'a' && s.front() <= 'z')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return LowerAlnum(c) || c == '-'; });
}

std::string Quoted(std::string_view name) {
  return fmt::format("Invalid value: \"{}\"", core::EscapeText(name, 300));
}

}  // namespace

std::optional<std::string> Dns1123LabelProblem(std::string_view name) {
  if (name.size() <= 63 && LabelShape(name, false)) return std::nullopt;
  return Quoted(name) +
         ": not a DNS-1123 label (at most 63 lower case letters, digits and '-', starting and "
         "ending with a letter or digit: [a-z0-9]([-a-z0-9]*[a-z0-9])?)";
}

std::optional<std::string> Dns1035LabelProblem(std::string_view name) {
  if (name.size() <= 63 && LabelShape(name, true)) return std::nullopt;
  return Quoted(name) +
         ": not a DNS-1035 label (at most 63 lower case letters, digits and '-', starting with a "
         "letter and ending with a letter or digit: [a-z]([-a-z0-9]*[a-z0-9])?)";
}

std::optional<std::string> Dns1123SubdomainProblem(std::string_view name) {
  bool ok = name.size() <= 253;
  for (size_t at = 0; ok;) {
    const size_t dot = name.find('.', at);
    ok = LabelShape(name.substr(at, dot == std::string_view::npos ? dot : dot - at), false);
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  if (ok) return std::nullopt;
  return Quoted(name) +
         ": not a DNS-1123 subdomain (at most 253 characters: DNS-1123 labels joined by '.')";
}

namespace {

// The node resource dlsched does not schedule: the pod count (a task asks
// for none of it, so it would never constrain a placement).
bool Scheduled(std::string_view name) { return name != "pods"; }

core::Result<core::TaintEffect> EffectOf(std::string_view s) {
  if (s == "NoSchedule") return core::TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return core::TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return core::TaintEffect::kNoExecute;
  return core::Errorf("expected NoSchedule, PreferNoSchedule or NoExecute, got '{}'",
                      core::EscapeText(s, 40));
}

}  // namespace

core::Result<core::NodeSpec> DecodeNode(const json& node) {
  core::NodeSpec out;
  const json meta = node.value("metadata", json::object());
  out.name = meta.value("name", "");
  const std::string source = fmt::format("Node {}", core::EscapeText(out.name, 80));
  if (out.name.empty()) return core::Errorf("Node: metadata.name: missing");
  if (meta.contains("labels") && meta["labels"].is_object()) {
    for (const auto& [k, v] : meta["labels"].items()) {
      if (v.is_string()) out.labels[k] = v.get<std::string>();
    }
  }
  const json status = node.value("status", json::object());
  const json alloc = status.value("allocatable", status.value("capacity", json::object()));
  YAML::Node list(YAML::NodeType::Map);
  if (alloc.is_object()) {
    for (const auto& [k, v] : alloc.items()) {
      if (!Scheduled(k)) continue;
      // Every name is interned (a job may ask for any of them); one that
      // could not be (see core::InternResource) no job can ask for either.
      if (!core::InternResource(k)) continue;
      list[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  DLSCHED_TRY_LET(parsed, config::ParseResourceList(list, source, "status.allocatable"));
  out.allocatable = *parsed;
  const json spec = node.value("spec", json::object());
  out.schedulable = !spec.value("unschedulable", false);
  if (spec.contains("taints") && spec["taints"].is_array()) {
    for (size_t i = 0; i < spec["taints"].size(); ++i) {
      const json& t = spec["taints"][i];
      if (!t.is_object()) continue;
      core::Taint taint;
      taint.key = t.value("key", "");
      taint.value = t.value("value", "");
      auto effect = EffectOf(t.value("effect", ""));
      if (!effect) {
        return core::Errorf("{}: spec.taints[{}].effect: {}", source, i, effect.error().message);
      }
      taint.effect = *effect;
      out.taints.push_back(std::move(taint));
    }
  }
  return out;
}

core::Result<PodRequest> DecodePodRequest(const json& pod) {
  const json meta = pod.value("metadata", json::object());
  const std::string source =
      fmt::format("Pod {}/{}", core::EscapeText(meta.value("namespace", ""), 80),
                  core::EscapeText(meta.value("name", ""), 80));
  json spec = pod.value("spec", json::object());
  // Only what it requests matters here: where it may run is decided.
  if (spec.is_object()) {
    for (const char* k : {"affinity", "nodeSelector", "tolerations"}) spec.erase(k);
  }
  core::RoleSpec role;
  DLSCHED_TRY(DecodePodTemplate(json{{"spec", spec}}, source, "", role));
  return PodRequest{role.resources, role.ScoringRequest()};
}

std::optional<PodTask> PodTaskOf(const json& pod) {
  const json meta = pod.value("metadata", json::object());
  const json labels = meta.value("labels", json::object());
  if (!labels.is_object()) return std::nullopt;
  const std::string job = labels.value(std::string(kJobLabel), "");
  const std::string role = labels.value(std::string(kRoleLabel), "");
  const std::string index = labels.value(std::string(kIndexLabel), "");
  if (job.empty()) return std::nullopt;
  PodTask t;
  t.job = job;
  if (role == "ps") {
    t.role = core::Role::kPS;
  } else if (role == "chief") {
    t.role = core::Role::kChief;
  } else if (role == "worker") {
    t.role = core::Role::kWorker;
  } else {
    return std::nullopt;
  }
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), t.index);
  if (ec != std::errc() || end != index.data() + index.size() || t.index < 0) return std::nullopt;
  return t;
}

int GpuDeviceOf(const json& pod) {
  const auto* meta = pod.is_object() && pod.contains("metadata") ? &pod["metadata"] : nullptr;
  if (meta == nullptr || !meta->is_object() || !meta->contains("annotations")) return -1;
  const json& ann = (*meta)["annotations"];
  if (!ann.is_object() || !ann.contains(kGpuDeviceAnnotation)) return -1;
  const json& v = ann[std::string(kGpuDeviceAnnotation)];
  if (!v.is_string()) return -1;
  const std::string& text = v.get_ref<const std::string&>();
  int d = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || end != text.data() + text.size() || d < 0 || d > 4095) return -1;
  return d;
}

namespace {

// TF_CONFIG of task (`type`, `index`): the cluster is the gang's (an
// evaluator is not in it, as Kubeflow's TFJob has it).
std::string TfConfigOf(const TrainingJob& tj, int workers, std::string_view type, int index) {
  json cluster = json::object();
  auto add = [&](core::Role r, int n) {
    if (n <= 0) return;
    json list = json::array();
    for (int i = 0; i < n; ++i) {
      list.push_back(fmt::format("{}.{}.{}.svc:{}", PodName(tj.name, r, i), tj.name,
                                 tj.namespace_name, kTfPort));
    }
    cluster[std::string(core::RoleKey(r))] = std::move(list);
  };
  add(core::Role::kChief, tj.job.role(core::Role::kChief).replicas);
  add(core::Role::kPS, tj.job.role(core::Role::kPS).replicas);
  add(core::Role::kWorker, workers);
  json config = {{"cluster", cluster},
                 {"task", {{"type", std::string(type)}, {"index", index}}},
                 {"environment", "cloud"}};
  return config.dump();
}

}  // namespace

std::string TfConfig(const TrainingJob& tj, int workers, core::Role role, int index) {
  return TfConfigOf(tj, workers, core::RoleKey(role), index);
}

namespace {

// The DNS name of task (role, index)'s pod: its hostname under the job's
// headless Service.
std::string PodHost(const TrainingJob& tj, core::Role role, int index) {
  return fmt::format("{}.{}.{}.svc", PodName(tj.name, role, index), tj.name, tj.namespace_name);
}

// The port a role's containers name pytorchjob-port, else PyTorchJob's
// default.
int PyTorchPort(const TrainingJob& tj, core::Role role) {
  const json& tmpl = tj.templates[static_cast<int>(role)];
  const json spec = tmpl.is_object() ? tmpl.value("spec", json::object()) : json::object();
  if (!spec.is_object() || !spec.contains("containers") || !spec["containers"].is_array()) {
    return kPyTorchPort;
  }
  for (const json& c : spec["containers"]) {
    if (!c.is_object() || !c.contains("ports") || !c["ports"].is_array()) continue;
    for (const json& port : c["ports"]) {
      if (port.is_object() && port.value("name", "") == "pytorchjob-port" &&
          port.contains("containerPort") && port["containerPort"].is_number_integer()) {
        return port["containerPort"].get<int>();
      }
    }
  }
  return kPyTorchPort;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PodEnv(const TrainingJob& tj, int workers,
                                                        core::Role role, int index) {
  if (tj.framework == Framework::kTensorFlow) {
    return {{"TF_CONFIG", TfConfig(tj, workers, role, index)}};
  }
  // As Kubeflow's PyTorchJob controller sets them (torch.distributed's
  // env:// and torchrun's PET_* arguments).
  std::vector<std::pair<std::string, std::string>> env = {{"PYTHONUNBUFFERED", "0"}};
  const int masters = tj.job.role(core::Role::kChief).replicas;
  if (masters > 0) {
    env.emplace_back("MASTER_ADDR", PodHost(tj, core::Role::kChief, 0));
    env.emplace_back("MASTER_PORT", std::to_string(PyTorchPort(tj, core::Role::kChief)));
    env.emplace_back("WORLD_SIZE", std::to_string(masters + workers));
    env.emplace_back("RANK", std::to_string(role == core::Role::kWorker ? index + 1 : 0));
  }
  if (tj.elastic) {
    const ElasticPolicy& p = *tj.elastic;
    const std::string host =
        p.rdzv_host.empty() ? PodHost(tj, core::Role::kWorker, 0) : p.rdzv_host;
    const int port = p.rdzv_port > 0 ? p.rdzv_port : PyTorchPort(tj, core::Role::kWorker);
    const core::RoleSpec& w = tj.job.role(core::Role::kWorker);
    env.emplace_back("PET_RDZV_ENDPOINT", fmt::format("{}:{}", host, port));
    env.emplace_back("PET_RDZV_BACKEND", p.rdzv_backend);
    env.emplace_back("PET_NNODES", fmt::format("{}:{}", w.min_replicas, w.max_replicas));
    if (p.max_restarts >= 0) env.emplace_back("PET_MAX_RESTARTS", std::to_string(p.max_restarts));
    if (p.n_proc_per_node > 0) {
      env.emplace_back("PET_NPROC_PER_NODE", std::to_string(p.n_proc_per_node));
    }
    if (!p.rdzv_id.empty()) env.emplace_back("PET_RDZV_ID", p.rdzv_id);
  }
  return env;
}

namespace {

// A pod `name` (hostname `hostname`) of role `key` from `tmpl`, with
// `ours` in its environment.
json PodFrom(const TrainingJob& tj, const json& tmpl, const std::string& name,
             const std::string& hostname, std::string_view key, int index,
             std::string_view scheduler_name, std::string_view node,
             const std::vector<std::pair<std::string, std::string>>& ours) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  json meta = tmpl.is_object() ? tmpl.value("metadata", json::object()) : json::object();
  if (!meta.is_object()) meta = json::object();
  meta["name"] = name;
  meta["namespace"] = tj.namespace_name;
  meta.erase("generateName");
  if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
  meta["labels"][std::string(kJobLabel)] = tj.name;
  meta["labels"][std::string(kRoleLabel)] = std::string(key);
  meta["labels"][std::string(kIndexLabel)] = std::to_string(index);
  meta["ownerReferences"] = json::array({{{"apiVersion", std::string(kApiVersion)},
                                          {"kind", std::string(kKind)},
                                          {"name", tj.name},
                                          {"uid", tj.uid},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  pod["metadata"] = std::move(meta);
  json spec = tmpl.is_object() ? tmpl.value("spec", json::object()) : json::object();
  spec["schedulerName"] = std::string(scheduler_name);
  spec["hostname"] = hostname;
  spec["subdomain"] = tj.name;
  if (!node.empty()) spec["nodeName"] = std::string(node);
  // A task restarts through dlsched, its whole job from its checkpoint by
  // the replica's restartPolicy, never in place: the pod's own is Never
  // whatever the template says (as Kubeflow sets it from the replica's).
  spec["restartPolicy"] = "Never";
  if (spec.contains("containers") && spec["containers"].is_array()) {
    for (json& c : spec["containers"]) {
      if (!c.is_object()) continue;
      // The template's own variables, but for those set here.
      json env = json::array();
      if (c.contains("env") && c["env"].is_array()) {
        for (const json& e : c["env"]) {
          const std::string name = e.is_object() ? e.value("name", "") : "";
          const bool set_here = std::any_of(ours.begin(), ours.end(),
                                            [&](const auto& kv) { return kv.first == name; });
          if (!set_here) env.push_back(e);
        }
      }
      for (const auto& [name, value] : ours) env.push_back({{"name", name}, {"value", value}});
      c["env"] = std::move(env);
    }
  }
  pod["spec"] = std::move(spec);
  return pod;
}

}  // namespace

json MakePod(const TrainingJob& tj, core::Role role, int index, int workers,
             std::string_view scheduler_name, std::string_view node, std::string_view name) {
  const std::string hostname = PodName(tj.name, role, index);
  return PodFrom(tj, tj.templates[static_cast<int>(role)],
                 name.empty() ? hostname : std::string(name), hostname, core::RoleKey(role), index,
                 scheduler_name, node, PodEnv(tj, workers, role, index));
}

json MakeEvaluatorPod(const TrainingJob& tj, int index, int workers,
                      std::string_view scheduler_name) {
  const std::string name = EvaluatorPodName(tj.name, index);
  return PodFrom(tj, tj.evaluator_template, name, name, kEvaluatorKey, index, scheduler_name, "",
                 {{"TF_CONFIG", TfConfigOf(tj, workers, kEvaluatorKey, index)}});
}

json MakeService(const TrainingJob& tj) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", tj.name},
            {"namespace", tj.namespace_name},
            {"labels", {{std::string(kJobLabel), tj.name}}},
            {"ownerReferences", json::array({{{"apiVersion", std::string(kApiVersion)},
                                              {"kind", std::string(kKind)},
                                              {"name", tj.name},
                                              {"uid", tj.uid},
                                              {"controller", true},
                                              {"blockOwnerDeletion", true}}})}}},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},
            {"selector", {{std::string(kJobLabel), tj.name}}},
            {"ports", json::array({{{"name", "tf"}, {"port", kTfPort}}})}}}};
}

json MakeEvent(std::string_view namespace_name, std::string_view name, std::string_view uid,
               std::string_view type, std::string_view reason, std::string_view message,
               std::string_view now_rfc3339) {
  // Unique names as client-go's recorder makes them: object name + a
  // random hexadecimal suffix.
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", fmt::format("{}.{:016x}", name, rng())},
            {"namespace", std::string(namespace_name)}}},
          {"involvedObject",
           {{"apiVersion", std::string(kApiVersion)},
            {"kind", std::string(kKind)},
            {"name", std::string(name)},
            {"namespace", std::string(namespace_name)},
            {"uid", std::string(uid)}}},
          {"type", std::string(type)},
          {"reason", std::string(reason)},
          {"message", std::string(message)},
          {"source", {{"component", "dlsched"}}},
          {"reportingComponent", "dlsched"},
          {"firstTimestamp", std::string(now_rfc3339)},
          {"lastTimestamp", std::string(now_rfc3339)},
          {"count", 1}};
}

const json* FindCondition(const json& conditions, std::string_view type) {
  for (const json& c : conditions) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

bool ConditionTrue(const json& conditions, std::string_view type) {
  const json* c = FindCondition(conditions, type);
  return c != nullptr && c->value("status", "") == "True";
}

void SetCondition(json& conditions, std::string_view type, bool status, std::string_view reason,
                  std::string_view message) {
  const std::string value = status ? "True" : "False";
  for (json& c : conditions) {
    if (!c.is_object() || c.value("type", "") != type) continue;
    if (c.value("status", "") == value && c.value("reason", "") == reason &&
        c.value("message", "") == message) {
      return;
    }
    const std::string now = NowRfc3339();
    if (c.value("status", "") != value || !c.contains("lastTransitionTime")) {
      c["lastTransitionTime"] = now;
    }
    c["status"] = value;
    c["reason"] = reason;
    c["message"] = message;
    c["lastUpdateTime"] = now;
    return;
  }
  const std::string now = NowRfc3339();
  conditions.push_back({{"type", type},
                        {"status", value},
                        {"reason", reason},
                        {"message", message},
                        {"lastUpdateTime", now},
                        {"lastTransitionTime", now}});
}

std::string NowRfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string MicroTime(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  const auto micros =
      static_cast<int>(std::llround((unix_seconds - static_cast<double>(whole)) * 1e6));
  std::time_t t = whole + micros / 1'000'000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06d}Z", buf, micros % 1'000'000);
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

namespace {

// status.reason of a pod its node put out, not its training.
bool DisruptionReason(std::string_view reason) {
  return reason == "Evicted" || reason == "Preempting" || reason == "Terminated" ||
         reason == "NodeShutdown" || reason == "UnexpectedAdmissionError" ||
         reason == "NodeAffinity" || reason.starts_with("OutOf");
}

// The first container that ended non-zero: its state.terminated.
json FailedContainer(const json& status) {
  const json statuses = status.value("containerStatuses", json::array());
  if (!statuses.is_array()) return nullptr;
  for (const json& c : statuses) {
    if (!c.is_object()) continue;
    const json state = c.value("state", json::object());
    const json done = state.is_object() ? state.value("terminated", json::object()) : json();
    if (done.is_object() && done.value("exitCode", 0) != 0) return done;
  }
  return nullptr;
}

}  // namespace

core::TaskFailure PodFailure(const json& pod) {
  core::TaskFailure out;
  const json status = pod.value("status", json::object());
  if (!status.is_object()) return out;
  out.disruption = DisruptionReason(status.value("reason", ""));
  const json conditions = status.value("conditions", json::array());
  for (const json& c : conditions.is_array() ? conditions : json::array()) {
    if (c.is_object() && c.value("type", "") == "DisruptionTarget" &&
        c.value("status", "") == "True") {
      out.disruption = true;
    }
  }
  if (const json done = FailedContainer(status); done.is_object()) {
    const json code = done["exitCode"];
    if (code.is_number_integer()) out.exit_code = code.get<int>();
  }
  return out;
}

std::string PodFailureText(const json& pod) {
  const core::TaskFailure f = PodFailure(pod);
  const json status = pod.value("status", json::object());
  const std::string reason = status.is_object() ? status.value("reason", "") : "";
  const std::string message = status.is_object() ? status.value("message", "") : "";
  const std::string why = core::EscapeText(message.empty() ? reason : message, 200);
  if (f.disruption) return why.empty() ? "evicted" : fmt::format("evicted ({})", why);
  if (f.exit_code) {
    const json done = FailedContainer(status);
    const std::string r = core::EscapeText(done.value("reason", ""), 100);
    return r.empty() ? fmt::format("failed with exit code {}", *f.exit_code)
                     : fmt::format("failed with exit code {} ({})", *f.exit_code, r);
  }
  return fmt::format("failed ({})", why.empty() ? "Error" : why);
}

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

}  // namespace dlsched::k8s
