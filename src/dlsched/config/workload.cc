#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "dlsched/config/constraints.h"
#include "dlsched/config/job_checks.h"
#include "dlsched/config/job_decoder.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/spec_limits.h"

namespace dlsched::config {
namespace {

using internal::Given;
using internal::Index;
using internal::Key;
using internal::NumberRange;
using internal::Reader;

constexpr std::string_view kResourcesExpected = "a map of resource name to quantity";

// A workload file's words for the fields every format of a job shares.
constexpr JobWording kWorkloadWording{
    .min_above_max_only_when_both_given = true,
    .replicas_above_max_on_max = false,
    .priority_expected = "one of high, normal, low",
    .priority_key = "priority",
    .queue_expected = "a name",
    .default_replicas = std::nullopt,
    .bad_table_key =
        [](std::string_view got) {
          return fmt::format("expected a worker count (an integer between 1 and {}) as key, got {}",
                             core::kMaxTasksPerJob, got);
        },
    .bad_table_rate =
        [](std::string_view got) {
          return fmt::format("expected 0 or a rate of at least {:g} steps/s, got {}",
                             core::kMinRate, got);
        },
    .duplicate_worker_counts_refused = true};

// The one decoder of a job's fields, over this file's YAML.
JobDecoder<internal::YamlFields> Decoder(const Reader& r) { return {r, kWorkloadWording}; }

// A role's containers, as in a pod spec: [{name, resources}], the role's
// request being their sum. Which of cpu and memory each container sets is
// kept: scoring counts a default for a key a container leaves out, but not
// for an explicit 0.
// Init containers run one at a time before the others: the replica asks,
// per resource, for the larger of the containers' sum and each of them
// (kube-scheduler's PodRequests).
core::Status ParseContainers(const Reader& r, const YAML::Node& list, const std::string& path,
                             bool init, core::RoleSpec& out) {
  constexpr std::string_view kExpected = "a non-empty list of containers ({name, resources})";
  if (!list.IsSequence() || list.size() == 0) return r.Expected(path, kExpected, list);
  std::map<std::string, std::string> owner;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = Index(path, i);
    const YAML::Node& c = list[i];
    if (auto st = r.CheckMap(c, item_path, "a map with name and resources", {"name", "resources"});
        !st) {
      return st;
    }
    core::ContainerSpec container;
    if (!Given(c["name"])) return r.Missing(Key(item_path, "name"), "a container name");
    DLSCHED_TRY_LET(name, r.Name(c["name"], Key(item_path, "name")));
    if (auto [it, fresh] = owner.emplace(*name, item_path); !fresh) {
      return r.Fail(Key(item_path, "name"),
                    fmt::format("container name '{}' is already used by {}", *name, it->second));
    }
    container.name = *name;
    const std::string res_path = Key(item_path, "resources");
    if (Given(c["resources"])) {
      DLSCHED_TRY_LET(res, r.Resources(c["resources"], res_path));
      container.requests = *res;
      container.sets_cpu = c["resources"]["cpu"].IsDefined();
      container.sets_memory = c["resources"]["memory"].IsDefined();
    }
    if (init) {
      out.resources = Max(out.resources, container.requests);
      out.init_containers.push_back(std::move(container));
      continue;
    }
    // Each term is at most kMaxAmount, so the sum cannot overflow first.
    out.resources += container.requests;
    if (const int over = core::FirstId(
            container.requests,
            [&](core::ResourceId id) { return out.resources[id] > core::kMaxAmount; });
        over >= 0) {
      const auto id = static_cast<core::ResourceId>(over);
      return r.Fail(res_path, fmt::format("the containers' total {} is more than the limit of {}",
                                          core::ResourceName(id),
                                          core::FormatResourceAmount(id, core::kMaxAmount)));
    }
    out.containers.push_back(std::move(container));
  }
  return {};
}

// A role's nodeSelector, affinity and tolerations, as in a pod spec.
core::Status ParseConstraints(const Reader& r, const YAML::Node& n, const std::string& path,
                              core::NodeConstraints& out) {
  if (Given(n["nodeSelector"])) {
    if (auto st = internal::ParseNodeSelector(r, n["nodeSelector"], Key(path, "nodeSelector"),
                                              out.node_selector);
        !st) {
      return st;
    }
  }
  if (Given(n["affinity"])) {
    if (auto st =
            internal::ParseAffinity(r, n["affinity"], Key(path, "affinity"), out.required_terms);
        !st) {
      return st;
    }
  }
  if (Given(n["tolerations"])) {
    if (auto st = internal::ParseTolerations(r, n["tolerations"], Key(path, "tolerations"),
                                             out.tolerations);
        !st) {
      return st;
    }
  }
  return {};
}

// Parses ps, chief or worker (chief has 0 or 1 replica).
core::Status ParseRole(const Reader& r, const YAML::Node& n, const std::string& path,
                       core::Role role, core::RoleSpec& out) {
  const bool worker = role == core::Role::kWorker;
  core::Status st = worker
                        ? r.CheckMap(n, path, "a map",
                                     {"replicas", "minReplicas", "maxReplicas", "resources",
                                      "containers", "initContainers", "nodeSelector", "affinity",
                                      "tolerations", "restartPolicy"})
                        : r.CheckMap(n, path, "a map",
                                     {"replicas", "resources", "containers", "initContainers",
                                      "nodeSelector", "affinity", "tolerations", "restartPolicy"});
  if (!st) return st;
  if (auto cs = ParseConstraints(r, n, path, out.constraints); !cs) return cs;

  DLSCHED_TRY(Decoder(r).Replicas(n, path, role, out));
  DLSCHED_TRY(Decoder(r).RestartPolicy(n, path, out));

  // A role with no replicas needs no resources.
  std::string res_path = Key(path, "resources");
  if (Given(n["resources"]) && Given(n["containers"])) {
    return r.Fail(path, "give either 'resources' or 'containers', not both");
  }
  if (Given(n["initContainers"]) && !Given(n["containers"])) {
    return r.Fail(Key(path, "initContainers"), "only allowed with 'containers'");
  }
  if (Given(n["containers"])) {
    if (auto st = ParseContainers(r, n["containers"], Key(path, "containers"), false, out); !st) {
      return st;
    }
    if (Given(n["initContainers"])) {
      DLSCHED_TRY(ParseContainers(r, n["initContainers"], Key(path, "initContainers"), true, out));
    }
    res_path = Key(path, "containers");
  } else if (Given(n["resources"])) {
    DLSCHED_TRY_LET(res, r.Resources(n["resources"], res_path));
    out.resources = *res;
  } else if (out.replicas > 0) {
    return r.Missing(res_path, kResourcesExpected);
  }
  if (std::string why = core::GpuShareProblem(out.resources); !why.empty()) {
    return r.Fail(res_path, why);
  }
  return {};
}

// `placements: {4+2: 43.5, 2+2+2: 41.8}`: steps/s at a placement, keyed by
// the workers on each node joined by '+' (any order; kept most first).
core::Status ParsePlacementRates(const Reader& r, const YAML::Node& n, const std::string& path,
                                 core::ThroughputProfile& out) {
  if (!Given(n)) return {};
  constexpr std::string_view kExpected =
      "a map of placement (workers per node, e.g. 4+2) to steps/s";
  if (auto st = r.CheckAnyMap(n, path, kExpected); !st) return st;
  for (const auto& kv : n) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    const std::string entry_path = Key(path, key);
    std::vector<int> shape;
    int64_t total = 0;
    bool ok = !key.empty();
    for (size_t begin = 0; ok && begin <= key.size();) {
      const size_t end = std::min(key.find('+', begin), key.size());
      int v = 0;
      const auto [ptr, ec] = std::from_chars(key.data() + begin, key.data() + end, v);
      ok = ec == std::errc() && ptr == key.data() + end && v >= 1;
      total += v;
      ok = ok && total <= core::kMaxTasksPerJob;
      shape.push_back(v);
      begin = end + 1;
    }
    if (!ok) {
      return r.Expected(entry_path,
                        fmt::format("a placement as key: workers per node (integers >= 1, {} in "
                                    "all at most) joined by '+', e.g. 4+2",
                                    core::kMaxTasksPerJob),
                        kv.first);
    }
    DLSCHED_TRY_LET(
        rate, r.Number(kv.second, entry_path, NumberRange{core::kMinRate, false, core::kMaxRate}));
    std::sort(shape.begin(), shape.end(), std::greater<>());
    if (!out.placements.emplace(std::move(shape), *rate).second) {
      return r.Fail(entry_path, "the same placement as another key");
    }
  }
  return {};
}

// `throughput.gpuTypes`: a rate table per GPU type (a node's
// nvidia.com/gpu.product label), each shaped as `table`.
core::Status ParseGpuTypeRates(const Reader& r, const YAML::Node& n, const std::string& path,
                               core::ThroughputProfile& out) {
  if (!Given(n)) return {};
  constexpr std::string_view kExpected = "a map of GPU type to a table of worker count to steps/s";
  if (auto st = r.CheckAnyMap(n, path, kExpected); !st) return st;
  if (n.size() == 0) return r.Expected(path, kExpected, n);
  core::GpuTypeRates rates;
  for (const auto& kv : n) {
    const std::string type = kv.first.Scalar();
    const std::string type_path = Key(path, type);
    if (auto problem = core::NameProblem(type)) return r.Fail(type_path, *problem);
    constexpr std::string_view kTableExpected = "a non-empty map of worker count to steps/s";
    if (auto st = r.CheckAnyMap(kv.second, type_path, kTableExpected); !st) return st;
    if (kv.second.size() == 0) return r.Expected(type_path, kTableExpected, kv.second);
    core::ThroughputProfile one;
    DLSCHED_TRY(Decoder(r).RateTable(kv.second, type_path, one));
    if (!rates.emplace(type, std::move(one.steps_per_s)).second) {
      return r.Fail(type_path, "the same GPU type as another key");
    }
  }
  out.SetGpuTypes(std::move(rates));
  return {};
}

core::Status ParseThroughput(const Reader& r, const YAML::Node& n, const std::string& path,
                             core::ThroughputProfile& out) {
  if (auto st = r.CheckMap(
          n, path, "a map",
          {"model", "table", "localitySensitivity", "switchSensitivity", "placements", "gpuTypes"});
      !st) {
    return st;
  }
  DLSCHED_TRY(Decoder(r).SwitchSensitivity(n, path, out));
  const bool has_model = Given(n["model"]);
  const bool has_table = Given(n["table"]);
  if (has_model == has_table) {
    return r.Fail(path, has_model ? "give either 'model' or 'table', not both"
                                  : "expected 'model' (a model-zoo name) or 'table'");
  }
  if (has_model) {
    // The model zoo (sim/) brings the table and the locality sensitivity;
    // overriding one but not the other would be ambiguous.
    for (const char* key : {"localitySensitivity", "placements", "gpuTypes"}) {
      if (Given(n[key])) {
        return r.Fail(Key(path, key), "only allowed with 'table' (a model brings its own)");
      }
    }
    DLSCHED_TRY_LET(model, r.String(n["model"], Key(path, "model")));
    out.model = *model;
    return {};
  }

  std::string table_path = Key(path, "table");
  const YAML::Node& table = n["table"];
  constexpr std::string_view kTableExpected = "a non-empty map of worker count to steps/s";
  if (auto st = r.CheckAnyMap(table, table_path, kTableExpected); !st) return st;
  if (table.size() == 0) return r.Expected(table_path, kTableExpected, table);
  // "1" and "01" are different YAML keys but the same worker count: refused.
  DLSCHED_TRY(Decoder(r).RateTable(table, table_path, out));
  if (std::none_of(out.steps_per_s.begin(), out.steps_per_s.end(),
                   [](const auto& entry) { return entry.second > 0; })) {
    return r.Fail(table_path, "expected at least one rate > 0");
  }
  if (auto st = ParsePlacementRates(r, n["placements"], Key(path, "placements"), out); !st) {
    return st;
  }
  DLSCHED_TRY(ParseGpuTypeRates(r, n["gpuTypes"], Key(path, "gpuTypes"), out));
  return Decoder(r).Locality(n, path, out);
}

// `running.phase`: the phase the job is in when the run begins.
core::Status ParseInitialPhase(const Reader& r, const YAML::Node& p, const std::string& path,
                               core::JobPhase& out) {
  const std::string s = p.IsScalar() ? p.Scalar() : "";
  if (s == "Running") {
    out = core::JobPhase::kRunning;
  } else if (s == "RunningProtected") {
    out = core::JobPhase::kRunningProtected;
  } else if (s == "Launching") {
    out = core::JobPhase::kLaunching;
  } else if (s == "Checkpointing") {
    out = core::JobPhase::kCheckpointing;
  } else if (s == "Waiting") {
    out = core::JobPhase::kWaiting;
  } else {
    return r.Expected(path, "one of Running, RunningProtected, Launching, Checkpointing, Waiting",
                      p);
  }
  return {};
}

// A task's name in a job, ps-<i>, chief-0 or worker-<i>, at `path`: its
// role and index, within the job's replicas (a worker's maxReplicas).
core::Result<std::pair<core::Role, int>> ParseTaskName(const Reader& r, const std::string& task,
                                                       const std::string& path,
                                                       const core::JobSpec& job) {
  const size_t dash = task.rfind('-');
  const std::string role_key = dash == std::string::npos ? "" : task.substr(0, dash);
  const core::Role role = role_key == "ps"      ? core::Role::kPS
                          : role_key == "chief" ? core::Role::kChief
                                                : core::Role::kWorker;
  const core::RoleSpec& spec = job.role(role);
  const int limit = role == core::Role::kWorker ? spec.max_replicas : spec.replicas;
  int index = -1;
  const std::string digits = dash == std::string::npos ? "" : task.substr(dash + 1);
  if (!digits.empty() && digits.size() <= 6 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    index = std::stoi(digits);
  }
  if ((role_key != "ps" && role_key != "chief" && role_key != "worker") || index < 0 ||
      (digits.size() > 1 && digits[0] == '0')) {
    return r.Fail(path, "expected a task named ps-<i>, chief-0 or worker-<i>");
  }
  if (index >= limit) {
    return r.Fail(path,
                  role == core::Role::kWorker
                      ? fmt::format("the job has at most {} worker tasks (maxReplicas)", limit)
                      : fmt::format("the job has {} {} tasks", limit, role_key));
  }
  return std::pair{role, index};
}

// `running.nodes`: each task (ps-<i>, chief-0, worker-<i>) on its node;
// the indices given of each role into `given`.
core::Status ParseInitialNodes(const Reader& r, const YAML::Node& nodes,
                               const std::string& nodes_path, const core::JobSpec& job,
                               core::InitialState& in, std::vector<int> (&given)[core::kNumRoles]) {
  for (const auto& kv : nodes) {
    const std::string task = kv.first.Scalar();
    const std::string task_path = Key(nodes_path, task);
    DLSCHED_TRY_LET(named, ParseTaskName(r, task, task_path, job));
    const auto [role, index] = *named;
    DLSCHED_TRY_LET(node, r.Name(kv.second, task_path));
    given[static_cast<int>(role)].push_back(index);
    in.tasks.push_back({role, index, *node});
  }
  if (in.tasks.empty()) return r.Fail(nodes_path, "expected at least one task");
  return {};
}

// `running.held`: workers a Checkpointing job gave up that keep their
// nodes' room until its checkpoint is done (an F-scheduling hand-over);
// `workers` are the worker indices of running.nodes.
core::Status ParseInitialHeld(const Reader& r, const YAML::Node& held, const std::string& held_path,
                              const core::JobSpec& job, const std::vector<int>& workers,
                              core::InitialState& in) {
  constexpr std::string_view kHeldExpected = "a map of worker task (worker-<i>) to node name";
  if (in.phase != core::JobPhase::kCheckpointing) {
    return r.Fail(held_path, "only a Checkpointing job holds tasks it gave up");
  }
  if (auto st = r.CheckAnyMap(held, held_path, kHeldExpected); !st) return st;
  const int limit = job.role(core::Role::kWorker).max_replicas;
  for (const auto& kv : held) {
    const std::string task = kv.first.Scalar();
    const std::string task_path = Key(held_path, task);
    const std::string digits = task.starts_with("worker-") ? task.substr(7) : "";
    int index = -1;
    if (!digits.empty() && digits.size() <= 6 && (digits.size() == 1 || digits[0] != '0') &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      index = std::stoi(digits);
    }
    if (index < 0 || index >= limit) {
      return r.Fail(
          task_path,
          fmt::format("expected a worker task worker-<i> with i below maxReplicas {}", limit));
    }
    if (std::find(workers.begin(), workers.end(), index) != workers.end() ||
        std::any_of(in.held.begin(), in.held.end(),
                    [&](const core::InitialState::Placed& h) { return h.index == index; })) {
      return r.Fail(task_path, "the task is in running.nodes already");
    }
    DLSCHED_TRY_LET(node, r.Name(kv.second, task_path));
    in.held.push_back({core::Role::kWorker, index, *node});
  }
  return {};
}

// A started job holds its whole gang: every PS and chief, workers 0..k-1.
core::Status CheckWholeGang(const Reader& r, const std::string& nodes_path,
                            const core::JobSpec& job, const core::InitialState& in,
                            std::vector<int> (&given)[core::kNumRoles]) {
  for (int ri = 0; ri < core::kNumRoles; ++ri) {
    const auto role = static_cast<core::Role>(ri);
    std::vector<int>& idx = given[ri];
    std::sort(idx.begin(), idx.end());
    const int k = static_cast<int>(idx.size());
    const core::RoleSpec& spec = job.role(role);
    // Workers may be any indices below maxReplicas (a scale-in keeps
    // those on the nodes it spares).
    const bool whole = role == core::Role::kWorker ? k >= spec.min_replicas : k == spec.replicas;
    if (!whole) {
      return r.Fail(
          nodes_path,
          role == core::Role::kWorker
              ? fmt::format("a {} job needs at least minReplicas {} workers; got {}",
                            core::PhaseName(in.phase), spec.min_replicas, k)
              : fmt::format("a {} job needs all {} of its {} tasks; got {}",
                            core::PhaseName(in.phase), spec.replicas, core::RoleName(role), k));
    }
  }
  return {};
}

// `running`: where the job is when the run begins (times are checked
// against the workload's `start` once it is read).
core::Status ParseInitial(const Reader& r, const YAML::Node& n, const std::string& path,
                          core::JobSpec& job) {
  if (auto st = r.CheckMap(
          n, path, "a map",
          {"phase", "since", "firstStart", "lastLaunch", "admissionOrder", "nodes", "held"});
      !st) {
    return st;
  }
  core::InitialState& in = job.initial.emplace();
  if (Given(n["phase"]))
    DLSCHED_TRY(ParseInitialPhase(r, n["phase"], Key(path, "phase"), in.phase));
  // Absent times are filled in once `start` is known (since: start,
  // firstStart: since).
  in.since = in.first_start = -1;
  for (auto [key, field] : {std::pair{"since", &in.since},
                            {"firstStart", &in.first_start},
                            {"lastLaunch", &in.last_launch}}) {
    if (auto st = OptionalNumber(r, n, key, path, internal::kTime, *field); !st) return st;
  }
  if (Given(n["admissionOrder"])) {
    DLSCHED_TRY_LET(
        v, r.Int(n["admissionOrder"], Key(path, "admissionOrder"), 0, core::kMaxWorkloadTasks));
    in.admission_seq = *v;
  }
  const std::string nodes_path = Key(path, "nodes");
  constexpr std::string_view kNodesExpected =
      "a map of task (ps-0, chief-0, worker-0, ...) to node name";
  if (!Given(n["nodes"])) return r.Missing(nodes_path, kNodesExpected);
  if (auto st = r.CheckAnyMap(n["nodes"], nodes_path, kNodesExpected); !st) return st;
  std::vector<int> given[core::kNumRoles];
  DLSCHED_TRY(ParseInitialNodes(r, n["nodes"], nodes_path, job, in, given));
  if (Given(n["held"])) {
    DLSCHED_TRY(ParseInitialHeld(r, n["held"], Key(path, "held"), job,
                                 given[static_cast<int>(core::Role::kWorker)], in));
  }
  if (in.phase == core::JobPhase::kWaiting) return {};
  return CheckWholeGang(r, nodes_path, job, in, given);
}

// The job's work: `totalSteps` and a `throughput` model, or its `duration`
// in seconds at its size with an optional `scaling` curve for other sizes.
core::Status ParseWork(const Reader& r, const YAML::Node& n, const std::string& path,
                       core::JobSpec& job) {
  if (Given(n["duration"])) {
    for (const char* other : {"totalSteps", "throughput"}) {
      if (Given(n[other])) {
        return r.Fail(Key(path, other),
                      "give either duration (seconds at the job's size) or totalSteps and "
                      "throughput, not both");
      }
    }
    DLSCHED_TRY_LET(d, r.Number(n["duration"], Key(path, "duration"), internal::kPositiveTime));
    const core::RoleSpec& w = job.role(core::Role::kWorker);
    if (w.replicas < 1) {
      return r.Fail(Key(path, "duration"),
                    "needs at least 1 worker replica (the size the duration is measured at)");
    }
    core::ScalingCurve curve;
    if (Given(n["scaling"])) {
      const std::string where = Key(path, "scaling");
      if (!n["scaling"].IsScalar()) return r.Expected(where, "a scaling curve", n["scaling"]);
      auto c = core::ScalingCurve::Parse(n["scaling"].Scalar());
      if (!c) return r.Fail(where, c.error().message);
      curve = *c;
    }
    job.SetDuration(*d, curve);
    return {};
  }
  if (Given(n["scaling"])) {
    return r.Fail(Key(path, "scaling"), "applies only to a job given by its duration");
  }
  if (!Given(n["totalSteps"])) {
    return r.Missing(Key(path, "totalSteps"),
                     kTotalStepsRange.Describe() + " (or give the job's duration in seconds)");
  }
  DLSCHED_TRY(Decoder(r).TotalSteps(n, path, job));
  if (!Given(n["throughput"])) {
    return r.Missing(Key(path, "throughput"), "{model: <name>} or {table: {<workers>: <steps/s>}}");
  }
  return ParseThroughput(r, n["throughput"], Key(path, "throughput"), job.throughput);
}

// A job's name and how it is scheduled: name, namespace, arrival,
// priority, maxWaitMinutes, queue.
core::Status ParseJobScheduling(const Reader& r, const YAML::Node& n, const std::string& path,
                                core::JobSpec& job) {
  if (!Given(n["name"])) return r.Missing(Key(path, "name"), "a non-empty string");
  DLSCHED_TRY_LET(name, r.Name(n["name"], Key(path, "name")));
  job.name = *name;

  if (Given(n["namespace"])) {
    DLSCHED_TRY_LET(ns, r.Name(n["namespace"], Key(path, "namespace")));
    job.namespace_name = *ns;
  }

  if (!Given(n["arrival"])) return r.Missing(Key(path, "arrival"), internal::kTime.Describe());
  if (auto st = OptionalNumber(r, n, "arrival", path, internal::kTime, job.submit_time); !st) {
    return st;
  }

  return Decoder(r).Scheduling(n, path, job);
}

// A job's roles: ps, worker and chief.
core::Status ParseJobRoles(const Reader& r, const YAML::Node& n, const std::string& path,
                           core::JobSpec& job) {
  if (Given(n["ps"])) {
    if (auto st =
            ParseRole(r, n["ps"], Key(path, "ps"), core::Role::kPS, job.role(core::Role::kPS));
        !st) {
      return st;
    }
  }
  if (!Given(n["worker"])) {
    return r.Missing(Key(path, "worker"), "a map with replicas and resources");
  }
  if (auto st = ParseRole(r, n["worker"], Key(path, "worker"), core::Role::kWorker,
                          job.role(core::Role::kWorker));
      !st) {
    return st;
  }
  if (Given(n["chief"])) {
    if (auto st = ParseRole(r, n["chief"], Key(path, "chief"), core::Role::kChief,
                            job.role(core::Role::kChief));
        !st) {
      return st;
    }
  }
  return {};
}

// A field of the job's policy state (core::kStateFields), when given.
core::Status ParseStateField(const Reader& r, const YAML::Node& n, const core::StateField& f,
                             const std::string& path, core::JobSpec& job) {
  const YAML::Node& v = n[std::string(f.name)];
  if (!Given(v)) return {};
  std::optional<double> value;
  switch (f.kind) {
    case core::StateKind::kLevel: {
      DLSCHED_TRY_LET(level, r.Int(v, Key(path, f.name), 0, core::kMaxLevel));
      value = static_cast<double>(*level);
      break;
    }
    case core::StateKind::kTime:
      DLSCHED_TRY(OptionalNumber(r, n, f.name, path, internal::kTime, value));
      break;
    case core::StateKind::kGpuSeconds:
      DLSCHED_TRY(OptionalNumber(r, n, f.name, path, NumberRange{0, false, job.attained}, value));
      break;
    case core::StateKind::kPlace:
      DLSCHED_TRY(OptionalNumber(r, n, f.name, path,
                                 NumberRange{-core::kMaxLevelPlace, false, core::kMaxLevelPlace},
                                 value));
      break;
  }
  job.policy_state[std::string(f.name)] = *value;
  return {};
}

// Where a job stands: its progress, its attained service and what its
// policy keeps about it, its delays and deadline.
core::Status ParseJobProgress(const Reader& r, const YAML::Node& n, const std::string& path,
                              core::JobSpec& job) {
  if (auto st = OptionalNumber(r, n, "attainedGpuSeconds", path,
                               NumberRange{0, false, core::kMaxAttained}, job.attained);
      !st) {
    return st;
  }
  if (auto st = OptionalNumber(r, n, "launchGpuSeconds", path,
                               NumberRange{0, false, core::kMaxAttained}, job.launch_attained);
      !st) {
    return st;
  }
  for (const core::StateField& f : core::kStateFields) {
    if (auto st = ParseStateField(r, n, f, path, job); !st) return st;
  }
  if (auto st = OptionalNumber(r, n, "stepsDone", path, NumberRange{0, false, job.total_steps},
                               job.steps_done);
      !st) {
    return st;
  }
  DLSCHED_TRY(Decoder(r).Delays(n, path, job));
  if (auto st = OptionalNumber(r, n, "deadline", path, internal::kPositiveTime, job.deadline); !st)
    return st;
  return {};
}

// `failures`: the task failures to simulate, each
// {after, task, exitCode | evicted}.
core::Status ParseFailures(const Reader& r, const YAML::Node& n, const std::string& path,
                           core::JobSpec& job) {
  constexpr std::string_view kExpected =
      "a list of failures {after: seconds after arrival, task: worker-<i>, exitCode: N or "
      "evicted: true}";
  if (!n.IsSequence()) return r.Expected(path, kExpected, n);
  if (n.size() > static_cast<size_t>(core::kMaxFailures)) {
    return r.Fail(path, fmt::format("at most {} failures per job", core::kMaxFailures));
  }
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node& f = n[i];
    const std::string fp = Index(path, i);
    DLSCHED_TRY(r.CheckMap(f, fp, "a map", {"after", "task", "exitCode", "evicted"}));
    core::ScheduledFailure failure;
    if (!Given(f["after"])) return r.Missing(Key(fp, "after"), "seconds after the job's arrival");
    DLSCHED_TRY(OptionalNumber(r, f, "after", fp, internal::kTime, failure.after));
    if (!Given(f["task"])) return r.Missing(Key(fp, "task"), "a task: ps-<i>, chief-0, worker-<i>");
    DLSCHED_TRY_LET(task, r.Name(f["task"], Key(fp, "task")));
    DLSCHED_TRY_LET(named, ParseTaskName(r, *task, Key(fp, "task"), job));
    std::tie(failure.role, failure.index) = *named;
    if (Given(f["evicted"])) {
      DLSCHED_TRY_LET(evicted, r.Bool(f["evicted"], Key(fp, "evicted")));
      failure.failure.disruption = *evicted;
    }
    if (Given(f["exitCode"])) {
      if (failure.failure.disruption) {
        return r.Fail(fp, "give exitCode or evicted: true, not both");
      }
      DLSCHED_TRY_LET(code, r.Int(f["exitCode"], Key(fp, "exitCode"), 1, 255));
      failure.failure.exit_code = static_cast<int>(*code);
    }
    job.failures.push_back(failure);
  }
  return {};
}

core::Status ParseJob(const Reader& r, const YAML::Node& n, const std::string& path,
                      core::JobSpec& job) {
  if (auto st = r.CheckMap(n, path, "a map",
                           {"name",
                            "namespace",
                            "arrival",
                            "priority",
                            "maxWaitMinutes",
                            "queue",
                            "ps",
                            "worker",
                            "chief",
                            "totalSteps",
                            "stepsDone",
                            "attainedGpuSeconds",
                            "level",
                            "levelSince",
                            "levelPlace",
                            "levelBaseGpuSeconds",
                            "ranSince",
                            "gavelWindow",
                            "gavelCounted",
                            "gavelSeconds0",
                            "gavelSeconds1",
                            "gavelSeconds2",
                            "gavelSeconds3",
                            "gavelSeconds4",
                            "gavelSeconds5",
                            "gavelSeconds6",
                            "gavelSeconds7",
                            "throughput",
                            "duration",
                            "scaling",
                            "launchDelay",
                            "checkpointDelay",
                            "deadline",
                            "running",
                            "launchGpuSeconds",
                            "backoffLimit",
                            "failures"});
      !st) {
    return st;
  }

  DLSCHED_TRY(ParseJobScheduling(r, n, path, job));
  DLSCHED_TRY(ParseJobRoles(r, n, path, job));
  if (auto st = ParseWork(r, n, path, job); !st) return st;
  DLSCHED_TRY(ParseJobProgress(r, n, path, job));
  DLSCHED_TRY(Decoder(r).BackoffLimit(n, path, job));
  if (Given(n["failures"])) {
    DLSCHED_TRY(ParseFailures(r, n["failures"], Key(path, "failures"), job));
  }
  if (Given(n["running"])) return ParseInitial(r, n["running"], Key(path, "running"), job);
  return {};
}

core::Result<WorkloadSpec> ParseWorkloadNode(const Reader& r, const YAML::Node& root) {
  DLSCHED_TRY(r.CheckMap(root, "", "a map with 'jobs'", {"jobs", "start"}));
  const YAML::Node& jobs = root["jobs"];
  if (!Given(jobs)) return r.Missing("jobs", "a non-empty list of jobs");
  if (!jobs.IsSequence() || jobs.size() == 0) {
    return r.Expected("jobs", "a non-empty list of jobs", jobs);
  }
  WorkloadSpec w;
  w.source = r.source();
  DLSCHED_TRY(OptionalNumber(r, root, "start", "", internal::kTime, w.start));
  std::map<std::string, std::string> owner;
  int64_t tasks = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string path = Index("jobs", i);
    core::JobSpec job;
    DLSCHED_TRY(ParseJob(r, jobs[i], path, job));
    tasks += job.NumTasks(job.role(core::Role::kWorker).max_replicas);
    if (tasks > core::kMaxWorkloadTasks) {
      return r.Fail(path, fmt::format("the workload has more than {} tasks (PS, Chief and "
                                      "maxReplicas workers over all jobs), the limit",
                                      core::kMaxWorkloadTasks));
    }
    if (job.initial) {
      core::InitialState& in = *job.initial;
      if (in.since < 0) in.since = w.start;
      if (in.first_start < 0) in.first_start = in.since;
      const std::string rp = Key(path, "running");
      if (!Given(root["start"])) {
        return r.Fail(rp, "needs the workload's 'start' (the time the run begins)");
      }
      if (job.submit_time > w.start) {
        return r.Fail(rp, fmt::format("arrival {} is after the workload's start {}",
                                      job.submit_time, w.start));
      }
      if (in.phase != core::JobPhase::kWaiting &&
          !(job.submit_time <= in.first_start && in.first_start <= in.since &&
            in.since <= w.start)) {
        return r.Fail(rp, fmt::format("expected arrival <= firstStart <= since <= start, got {} "
                                      "{} {} {}",
                                      job.submit_time, in.first_start, in.since, w.start));
      }
    }
    // The job's limits as a whole (core/spec_limits.h): its tasks, its
    // total request at maxReplicas, and again every field read above.
    if (auto p = core::CheckJobLimits(job)) {
      return r.Fail(core::JoinField(path, p->field), p->what);
    }
    auto [it, inserted] = owner.emplace(job.name, path);
    if (!inserted) {
      return r.Fail(Key(path, "name"),
                    fmt::format("job name '{}' is already used by {}", job.name, it->second));
    }
    w.jobs.push_back(std::move(job));
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const auto& a, const auto& b) { return a.submit_time < b.submit_time; });
  // As every workload, whatever read it (nothing here should be new).
  if (auto p = core::CheckJobsLimits(w.jobs, w.start)) return r.Fail(p->field, p->what);
  return w;
}

}  // namespace

core::Result<WorkloadSpec> ParseWorkload(const std::string& text, const std::string& source) {
  return internal::ParseText(text, source, ParseWorkloadNode);
}

core::Result<WorkloadSpec> LoadWorkload(const std::string& path) {
  return internal::LoadFile(path, ParseWorkload);
}

}  // namespace dlsched::config

namespace dlsched::config {

core::Status ParsePodConstraints(const YAML::Node& pod_spec, const std::string& source,
                                 const std::string& path, core::NodeConstraints& out) {
  const internal::Reader r(source);
  try {
    return ParseConstraints(r, pod_spec, path, out);
  } catch (const std::exception& e) {
    return std::unexpected(internal::FromException(source, e));
  }
}

core::Result<core::Resources> ParseResourceList(const YAML::Node& list, const std::string& source,
                                                const std::string& path) {
  const internal::Reader r(source);
  try {
    return r.Resources(list, path);
  } catch (const std::exception& e) {
    return std::unexpected(internal::FromException(source, e));
  }
}

}  // namespace dlsched::config
