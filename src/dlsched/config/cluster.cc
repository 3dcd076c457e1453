#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/constraints.h"
#include "dlsched/config/job_checks.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config {
namespace {

using internal::Given;
using internal::Index;
using internal::Key;
using internal::Reader;

// A broken limit of the entry at `path`.
std::unexpected<core::Error> Broken(const Reader& r, const std::string& path,
                                    const core::LimitProblem& p) {
  return r.Fail(core::JoinField(path, p.field), p.what);
}

core::Status ParseLabels(const Reader& r, const YAML::Node& labels, const std::string& labels_path,
                         core::Labels& out) {
  if (auto st = r.CheckAnyMap(labels, labels_path, "a map of label name to value"); !st) {
    return st;
  }
  for (const auto& kv : labels) {
    std::string label_path = Key(labels_path, kv.first.Scalar());
    if (auto problem = core::NameProblem(kv.first.Scalar())) return r.Fail(label_path, *problem);
    if (!kv.second.IsScalar()) return r.Expected(label_path, "a string", kv.second);
    // Kubernetes allows an empty label value.
    const std::string& value = kv.second.Scalar();
    if (auto problem = core::NameProblem(value); problem && !value.empty()) {
      return r.Fail(label_path, *problem);
    }
    out[kv.first.Scalar()] = value;
  }
  return {};
}

// Parses one entry of `nodes` and appends its expansion (count copies) to
// `out`. `owner` remembers which entry produced each name, for the duplicate
// message; `limits` holds the cluster's limits (core/spec_limits.h).
core::Status ParseNodeEntry(const Reader& r, const YAML::Node& n, const std::string& path,
                            std::vector<core::NodeSpec>& out,
                            std::map<std::string, std::string>& owner, core::ClusterLimits& limits,
                            std::map<std::string, core::Resources>* reserved_out = nullptr) {
  if (auto st = r.CheckMap(n, path, "a map",
                           {"name", "count", "resources", "reserved", "labels", "gpuType", "switch",
                            "rack", "taints", "schedulable"});
      !st) {
    return st;
  }
  core::NodeSpec node;

  std::string name_path = Key(path, "name");
  if (!Given(n["name"])) return r.Missing(name_path, "a non-empty string");
  DLSCHED_TRY_LET(name, r.Name(n["name"], name_path));

  int64_t count = 1;
  const std::string count_path = Key(path, "count");
  if (Given(n["count"])) {
    DLSCHED_TRY_LET(c, r.Int(n["count"], count_path, 1, core::kMaxNodes));
    count = *c;
  }
  if (auto problem = core::NodeCountProblem(limits.nodes_ever() + count)) {
    return r.Fail(Given(n["count"]) ? count_path : path, *problem);
  }

  std::string res_path = Key(path, "resources");
  if (!Given(n["resources"])) return r.Missing(res_path, "a map of resource name to quantity");
  DLSCHED_TRY_LET(res, r.Resources(n["resources"], res_path));
  node.allocatable = *res;
  if (std::string why = core::NodeShareProblem(*res); !why.empty()) {
    return r.Fail(Key(res_path, core::ResourceName(core::kGpuMilli)), why);
  }

  core::Resources reserved;
  if (Given(n["reserved"])) {
    if (reserved_out == nullptr) {
      return r.Fail(Key(path, "reserved"), "only allowed for the nodes present at the start");
    }
    DLSCHED_TRY_LET(parsed, r.Resources(n["reserved"], Key(path, "reserved")));
    reserved = *parsed;
  }

  if (Given(n["labels"])) {
    if (auto st = ParseLabels(r, n["labels"], Key(path, "labels"), node.labels); !st) return st;
  }
  // The GPU type (the label a cluster's GPU feature discovery sets), the
  // network switch and the rack: each a label of its own.
  for (const auto& [field, key] :
       {std::pair{"gpuType", core::kGpuTypeLabel}, std::pair{"switch", core::kSwitchLabel},
        std::pair{"rack", core::kRackLabel}}) {
    if (!Given(n[field])) continue;
    const std::string field_path = Key(path, field);
    DLSCHED_TRY_LET(value, r.Name(n[field], field_path));
    const std::string label(key);
    if (auto it = node.labels.find(label); it != node.labels.end() && it->second != *value) {
      return r.Fail(field_path,
                    fmt::format("{} differs from labels.{}: {}", *value, label, it->second));
    }
    node.labels[label] = *value;
  }

  if (Given(n["taints"])) {
    if (auto st = internal::ParseTaints(r, n["taints"], Key(path, "taints"), node.taints); !st) {
      return st;
    }
  }

  if (Given(n["schedulable"])) {
    DLSCHED_TRY_LET(s, r.Bool(n["schedulable"], Key(path, "schedulable")));
    node.schedulable = *s;
  }

  for (int64_t i = 0; i < count; ++i) {
    node.name = count == 1 ? *name : fmt::format("{}-{}", *name, i);
    if (auto problem = core::NameProblem(node.name)) return r.Fail(name_path, *problem);
    auto [it, inserted] = owner.emplace(node.name, path);
    if (!inserted) {
      return r.Fail(name_path,
                    fmt::format("node name '{}' is already used by {}", node.name, it->second));
    }
    if (auto p = limits.AddNode(node)) return Broken(r, path, *p);
    if (!reserved.IsZero()) {
      if (auto p = limits.Reserve(node.name, reserved)) return Broken(r, path, *p);
      (*reserved_out)[node.name] = reserved;
    }
    out.push_back(node);
  }
  return {};
}

// One entry of `events`: {time, and one of add, remove, fail, update}.
// `present` holds the names of the nodes present just before it.
core::Status ParseEvent(const Reader& r, const YAML::Node& n, const std::string& path,
                        std::map<std::string, std::string>& owner, std::set<std::string>& present,
                        core::ClusterLimits& limits, core::Time& last,
                        std::vector<core::NodeEvent>& out) {
  if (auto st = r.CheckMap(n, path, "a map with time and one of add, remove, fail, update",
                           {"time", "add", "remove", "fail", "update"});
      !st) {
    return st;
  }
  core::NodeEvent e;
  const std::string time_path = Key(path, "time");
  if (!Given(n["time"])) return r.Missing(time_path, "a time in seconds");
  DLSCHED_TRY_LET(t, r.Number(n["time"], time_path, internal::kTime));
  if (*t < last) {
    return r.Fail(time_path, fmt::format("{:g} is before the previous event's time {:g} (list "
                                         "events in time order)",
                                         *t, last));
  }
  last = e.time = *t;
  int kinds = 0;
  for (const char* k : {"add", "remove", "fail", "update"}) kinds += Given(n[k]) ? 1 : 0;
  if (kinds != 1) {
    return r.Fail(path, "give exactly one of add, remove, fail, update");
  }
  if (Given(n["add"])) {
    e.kind = core::NodeEvent::Kind::kAdd;
    const std::string add_path = Key(path, "add");
    if (n["add"].IsMap() && Given(n["add"]["count"])) {
      return r.Fail(Key(add_path, "count"), "an added node is one node (no count)");
    }
    // A name removed earlier may come back (as a new node).
    if (n["add"].IsMap()) {
      const YAML::Node& nm = n["add"]["name"];
      if (nm.IsScalar() && !present.contains(nm.Scalar())) owner.erase(nm.Scalar());
    }
    std::vector<core::NodeSpec> added;
    if (auto st = ParseNodeEntry(r, n["add"], add_path, added, owner, limits); !st) return st;
    e.node = added.front();
    present.insert(e.node.name);
    out.push_back(std::move(e));
    return {};
  }
  const char* key = Given(n["remove"]) ? "remove" : Given(n["fail"]) ? "fail" : "update";
  const std::string key_path = Key(path, key);
  const YAML::Node& v = n[key];
  const bool update = std::string_view(key) == "update";
  const std::string name_path = update ? Key(key_path, "name") : key_path;
  // Copy-constructed, never assigned: assigning a YAML::Node writes into
  // the document.
  const YAML::Node name_node = update && v.IsMap() ? v["name"] : v;
  if (update) {
    e.kind = core::NodeEvent::Kind::kUpdate;
    if (auto st = r.CheckMap(v, key_path, "a map with name and the fields that change",
                             {"name", "resources", "labels", "taints", "schedulable"});
        !st) {
      return st;
    }
    if (!Given(v["name"])) return r.Missing(name_path, "the name of a node");
    if (Given(v["resources"])) {
      DLSCHED_TRY_LET(res, r.Resources(v["resources"], Key(key_path, "resources")));
      e.allocatable = *res;
      if (std::string why = core::NodeShareProblem(*res); !why.empty()) {
        return r.Fail(Key(Key(key_path, "resources"), core::ResourceName(core::kGpuMilli)), why);
      }
    }
    if (Given(v["labels"])) {
      e.labels.emplace();
      if (auto st = ParseLabels(r, v["labels"], Key(key_path, "labels"), *e.labels); !st) return st;
    }
    if (Given(v["taints"])) {
      e.taints.emplace();
      if (auto st = internal::ParseTaints(r, v["taints"], Key(key_path, "taints"), *e.taints);
          !st) {
        return st;
      }
    }
    if (Given(v["schedulable"])) {
      DLSCHED_TRY_LET(b, r.Bool(v["schedulable"], Key(key_path, "schedulable")));
      e.schedulable = *b;
    }
  } else {
    e.kind = std::string_view(key) == "remove" ? core::NodeEvent::Kind::kRemove
                                               : core::NodeEvent::Kind::kFail;
  }
  DLSCHED_TRY_LET(name, r.Name(name_node, name_path));
  if (!present.contains(*name)) {
    return r.Fail(name_path, fmt::format("no node '{}' is present at {:g}s", *name, e.time));
  }
  if (e.kind != core::NodeEvent::Kind::kUpdate) {
    present.erase(*name);
    limits.RemoveNode(*name);
  } else if (e.allocatable) {
    if (auto p = limits.UpdateNode(*name, *e.allocatable)) return Broken(r, key_path, *p);
  }
  e.node.name = *name;
  out.push_back(std::move(e));
  return {};
}

// One line of a queue's quota: a quantity (the nominal quota) or a map of
// nominal, borrowingLimit, lendingLimit.
core::Result<core::QuotaLine> ParseQuotaLine(const Reader& r, core::ResourceId id,
                                             const YAML::Node& n, const std::string& path,
                                             bool in_cohort, std::string_view who) {
  core::QuotaLine line;
  line.id = id;
  if (!n.IsMap()) {
    DLSCHED_TRY_LET(nominal, r.Amount(id, n, path));
    line.nominal = *nominal;
    return line;
  }
  DLSCHED_TRY(r.CheckMap(n, path, "a quantity or a map with nominal, borrowingLimit, lendingLimit",
                         {"nominal", "borrowingLimit", "lendingLimit"}));
  const std::string nominal_path = Key(path, "nominal");
  if (!Given(n["nominal"])) return r.Missing(nominal_path, "a quantity");
  DLSCHED_TRY_LET(nominal, r.Amount(id, n["nominal"], nominal_path));
  line.nominal = *nominal;
  for (const char* key : {"borrowingLimit", "lendingLimit"}) {
    if (!Given(n[key])) continue;
    const std::string key_path = Key(path, key);
    // Kueue's rule: only a node with a parent borrows or lends.
    if (!in_cohort) return r.Fail(key_path, fmt::format("only allowed for {}", who));
    DLSCHED_TRY_LET(amount, r.Amount(id, n[key], key_path));
    (std::string_view(key) == "borrowingLimit" ? line.borrowing_limit : line.lending_limit) =
        *amount;
  }
  if (line.lending_limit && *line.lending_limit > line.nominal) {
    return r.Fail(Key(path, "lendingLimit"),
                  fmt::format("{} is more than the nominal quota {}",
                              core::FormatResourceAmount(id, *line.lending_limit),
                              core::FormatResourceAmount(id, line.nominal)));
  }
  return line;
}

// A queue's or cohort's `quota`: a map of resource name to quota line,
// ascending by id; limits only if `limits` (else an error naming `who`
// may set them).
core::Result<std::vector<core::QuotaLine>> ParseQuota(const Reader& r, const YAML::Node& n,
                                                      const std::string& path, bool limits,
                                                      std::string_view who) {
  DLSCHED_TRY(r.CheckAnyMap(n, path, "a map of resource name to quota"));
  std::vector<core::QuotaLine> out;
  for (const auto& kv : n) {
    const std::string& key = kv.first.Scalar();
    const std::string line_path = Key(path, key);
    // R@T: resource R on GPU type T (Kueue's resource flavor).
    if (key.find('@') != std::string::npos) {
      const std::optional<core::FlavorKey> flavor = core::SplitFlavor(key);
      if (!flavor) {
        return r.Fail(line_path,
                      "expected a resource name, or RESOURCE@GPU_TYPE for one GPU type's quota "
                      "(e.g. nvidia.com/gpu@v100)");
      }
      if (auto problem = core::NameProblem(flavor->gpu_type)) {
        return r.Fail(line_path, fmt::format("GPU type: {}", *problem));
      }
      if (auto base = core::InternResource(flavor->resource); !base) {
        return r.Fail(line_path, base.error().message);
      }
    }
    auto id = core::InternResource(key);
    if (!id) return r.Fail(line_path, id.error().message);
    DLSCHED_TRY_LET(line, ParseQuotaLine(r, *id, kv.second, line_path, limits, who));
    out.push_back(*line);
  }
  std::sort(out.begin(), out.end(),
            [](const core::QuotaLine& a, const core::QuotaLine& b) { return a.id < b.id; });
  return out;
}

// A queue's `preemption`: Kueue's policies, each limited to the values
// Kueue allows for it.
core::Result<core::QueuePreemption> ParsePreemption(const Reader& r, const YAML::Node& n,
                                                    const std::string& path) {
  DLSCHED_TRY(r.CheckMap(
      n, path, "a map with withinQueue, reclaimWithinCohort, borrowWithinCohort",
      {"withinQueue", "reclaimWithinCohort", "borrowWithinCohort", "maxPriorityThreshold"}));
  core::QueuePreemption out;
  for (core::PreemptionField f : core::kPreemptionFields) {
    const std::string key(core::PreemptionFieldKey(f));
    if (!Given(n[key])) continue;
    const std::string field = Key(path, key);
    DLSCHED_TRY_LET(word, r.String(n[key], field));
    out.Field(f) = core::ParsePreemptionPolicy(f, *word);
    if (!out.Field(f)) return r.Expected(field, core::AllowedPolicies(f), n[key]);
  }
  if (Given(n["maxPriorityThreshold"])) {
    const std::string field = Key(path, "maxPriorityThreshold");
    DLSCHED_TRY_LET(word, r.String(n["maxPriorityThreshold"], field));
    out.max_priority_threshold = PriorityFromName(*word);
    if (!out.max_priority_threshold) {
      return r.Expected(field, "low, normal or high", n["maxPriorityThreshold"]);
    }
  }
  return out;
}

// One entry of `queues`.
core::Result<core::QueueSpec> ParseQueue(const Reader& r, const YAML::Node& n,
                                         const std::string& path) {
  DLSCHED_TRY(r.CheckMap(n, path, "a map with name and quota",
                         {"name", "cohort", "weight", "quota", "priority", "capability",
                          "guarantee", "deserved", "preemption"}));
  core::QueueSpec q;
  const std::string name_path = Key(path, "name");
  if (!Given(n["name"])) return r.Missing(name_path, "a queue name");
  DLSCHED_TRY_LET(name, r.Name(n["name"], name_path));
  q.name = *name;
  if (Given(n["cohort"])) {
    DLSCHED_TRY_LET(cohort, r.Name(n["cohort"], Key(path, "cohort")));
    q.cohort = *cohort;
  }
  if (Given(n["weight"])) {
    DLSCHED_TRY_LET(w, r.Number(n["weight"], Key(path, "weight"),
                                internal::NumberRange{0, false, core::kMaxQueueWeight}));
    q.weight = *w;
  }
  if (Given(n["quota"])) {
    DLSCHED_TRY_LET(quota, ParseQuota(r, n["quota"], Key(path, "quota"), !q.cohort.empty(),
                                      "a queue with a cohort"));
    q.quota = std::move(*quota);
  }
  if (Given(n["priority"])) {
    DLSCHED_TRY_LET(p, r.Int(n["priority"], Key(path, "priority"), -1'000'000'000, 1'000'000'000));
    q.priority = static_cast<int32_t>(*p);
  }
  if (Given(n["capability"])) {
    // Kept as listed: a capability of 0 GPUs is a limit, not an absence.
    const std::string cap_path = Key(path, "capability");
    DLSCHED_TRY(r.CheckAnyMap(n["capability"], cap_path, "a map of resource name to quantity"));
    for (const auto& kv : n["capability"]) {
      const std::string field = Key(cap_path, kv.first.Scalar());
      auto id = core::InternResource(kv.first.Scalar());
      if (!id) return r.Fail(field, id.error().message);
      DLSCHED_TRY_LET(amount, r.Amount(*id, kv.second, field));
      q.capability.emplace_back(*id, *amount);
    }
    std::sort(q.capability.begin(), q.capability.end());
  }
  for (const char* key : {"guarantee", "deserved"}) {
    if (!Given(n[key])) continue;
    DLSCHED_TRY_LET(res, r.Resources(n[key], Key(path, key)));
    (std::string_view(key) == "guarantee" ? q.guarantee : q.deserved) = *res;
  }
  if (Given(n["preemption"])) {
    DLSCHED_TRY_LET(p, ParsePreemption(r, n["preemption"], Key(path, "preemption")));
    q.preemption = *p;
  }
  return q;
}

core::Status ParseQueues(const Reader& r, const YAML::Node& queues,
                         std::vector<core::QueueSpec>& out) {
  if (!queues.IsSequence()) return r.Expected("queues", "a list of queues", queues);
  if (queues.size() > static_cast<size_t>(core::kMaxQueues)) {
    return r.Fail("queues", fmt::format("{} queues, more than the limit of {}", queues.size(),
                                        core::kMaxQueues));
  }
  std::map<std::string, std::string> owner;
  // What each cohort (or lone queue) is entitled to, per resource: kept
  // within core::kMaxTotalAmount so the quota arithmetic cannot overflow.
  std::map<std::pair<std::string, core::ResourceId>, int64_t> totals;
  for (size_t i = 0; i < queues.size(); ++i) {
    const std::string path = Index("queues", i);
    DLSCHED_TRY_LET(q, ParseQueue(r, queues[i], path));
    if (auto [it, inserted] = owner.emplace(q->name, path); !inserted) {
      return r.Fail(Key(path, "name"),
                    fmt::format("queue name '{}' is already used by {}", q->name, it->second));
    }
    for (const core::QuotaLine& l : q->quota) {
      int64_t& total = totals[{q->cohort.empty() ? " " + q->name : q->cohort, l.id}];
      total += l.nominal;
      if (total > core::kMaxTotalAmount) {
        return r.Fail(
            Key(Key(path, "quota"), core::ResourceName(l.id)),
            fmt::format("the nominal quotas of cohort {} add up to more than {}", q->cohort,
                        core::FormatResourceAmount(l.id, core::kMaxTotalAmount)));
      }
    }
    out.push_back(std::move(*q));
  }
  return {};
}

// One entry of `cohorts` (its name checked against the others by the caller).
core::Result<core::CohortSpec> ParseCohort(const Reader& r, const YAML::Node& n,
                                           const std::string& path) {
  DLSCHED_TRY(r.CheckMap(n, path, "a map with name, parent, weight, quota",
                         {"name", "parent", "weight", "quota"}));
  core::CohortSpec c;
  const std::string name_path = Key(path, "name");
  if (!Given(n["name"])) return r.Missing(name_path, "a cohort name");
  DLSCHED_TRY_LET(name, r.Name(n["name"], name_path));
  c.name = *name;
  if (Given(n["parent"])) {
    DLSCHED_TRY_LET(parent, r.Name(n["parent"], Key(path, "parent")));
    if (*parent == c.name) return r.Fail(Key(path, "parent"), "a cohort cannot be its own parent");
    c.parent = *parent;
  }
  if (Given(n["weight"])) {
    DLSCHED_TRY_LET(w, r.Number(n["weight"], Key(path, "weight"),
                                internal::NumberRange{0, false, core::kMaxQueueWeight}));
    c.weight = *w;
  }
  if (Given(n["quota"])) {
    DLSCHED_TRY_LET(quota, ParseQuota(r, n["quota"], Key(path, "quota"), !c.parent.empty(),
                                      "a cohort with a parent"));
    c.quota = std::move(*quota);
  }
  return c;
}

// Where entry i of the queues (cohort false) or cohorts (true) is, for
// messages: "queues[2]" in a file, "Queue team-a" on a cluster.
using EntryField = std::function<std::string(bool cohort, size_t i)>;

// Queues and cohorts as a whole: the cohorts' parents free of cycles, and
// every tree's nominal quota (its queues' and cohorts'), per resource,
// within core::kMaxTotalAmount. Names are unique.
core::Status CheckCohortTrees(const Reader& r, const std::vector<core::QueueSpec>& queues,
                              const std::vector<core::CohortSpec>& cohorts,
                              const EntryField& field) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cohorts.size(); ++i) index.emplace(cohorts[i].name, i);
  // No cycles: from each cohort, its parents reach a root (or an
  // undeclared cohort, which is one) within as many steps as there are
  // cohorts.
  for (size_t i = 0; i < cohorts.size(); ++i) {
    std::vector<std::string> chain{cohorts[i].name};
    for (auto it = index.find(cohorts[i].parent); it != index.end();
         it = index.find(cohorts[it->second].parent)) {
      chain.push_back(cohorts[it->second].name);
      if (it->second == i) {
        return r.Fail(
            Key(field(true, i), "parent"),
            fmt::format("the cohorts' parents form a cycle: {}", fmt::join(chain, " -> ")));
      }
      if (chain.size() > cohorts.size() + 1) break;  // a cycle not through i: found from its own
    }
  }
  auto root_of = [&](std::string name) {
    for (auto it = index.find(name); it != index.end() && !cohorts[it->second].parent.empty();
         it = index.find(name)) {
      name = cohorts[it->second].parent;
    }
    return name;
  };
  // A queue without a cohort is a tree of its own (" name" cannot be a
  // cohort's name).
  std::map<std::pair<std::string, core::ResourceId>, int64_t> totals;
  auto add = [&](const std::string& root, const core::QuotaLine& l,
                 const std::string& at) -> core::Status {
    int64_t& total = totals[{root, l.id}];
    total += l.nominal;
    if (total <= core::kMaxTotalAmount) return core::Status{};
    return r.Fail(Key(Key(at, "quota"), core::ResourceName(l.id)),
                  fmt::format("the nominal quotas under cohort {} add up to more than {}",
                              root.starts_with(' ') ? root.substr(1) : root,
                              core::FormatResourceAmount(l.id, core::kMaxTotalAmount)));
  };
  for (size_t i = 0; i < cohorts.size(); ++i) {
    for (const core::QuotaLine& l : cohorts[i].quota) {
      DLSCHED_TRY(add(root_of(cohorts[i].name), l, field(true, i)));
    }
  }
  for (size_t i = 0; i < queues.size(); ++i) {
    const std::string root =
        queues[i].cohort.empty() ? " " + queues[i].name : root_of(queues[i].cohort);
    for (const core::QuotaLine& l : queues[i].quota) DLSCHED_TRY(add(root, l, field(false, i)));
  }
  return {};
}

// The cluster file's `cohorts`: each a map of name, parent, weight and
// quota; names unique, parents free of cycles, and every tree's nominal
// quota (its queues' and cohorts') within core::kMaxTotalAmount.
core::Status ParseCohorts(const Reader& r, const YAML::Node& cohorts,
                          const std::vector<core::QueueSpec>& queues,
                          std::vector<core::CohortSpec>& out) {
  if (!cohorts.IsSequence()) return r.Expected("cohorts", "a list of cohorts", cohorts);
  if (cohorts.size() > static_cast<size_t>(core::kMaxQueues)) {
    return r.Fail("cohorts", fmt::format("{} cohorts, more than the limit of {}", cohorts.size(),
                                         core::kMaxQueues));
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cohorts.size(); ++i) {
    const std::string path = Index("cohorts", i);
    DLSCHED_TRY_LET(c, ParseCohort(r, cohorts[i], path));
    if (auto [it, inserted] = index.emplace(c->name, i); !inserted) {
      return r.Fail(Key(path, "name"), fmt::format("cohort name '{}' is already used by {}",
                                                   c->name, Index("cohorts", it->second)));
    }
    out.push_back(std::move(*c));
  }
  return CheckCohortTrees(r, queues, out, [](bool cohort, size_t i) {
    return Index(cohort ? "cohorts" : "queues", i);
  });
}

core::Result<core::ClusterSpec> ParseClusterNode(const Reader& r, const YAML::Node& root) {
  DLSCHED_TRY(r.CheckMap(root, "", "a map with 'nodes'", {"nodes", "events", "queues", "cohorts"}));
  const YAML::Node& nodes = root["nodes"];
  if (!Given(nodes)) return r.Missing("nodes", "a non-empty list of nodes");
  if (!nodes.IsSequence() || nodes.size() == 0) {
    return r.Expected("nodes", "a non-empty list of nodes", nodes);
  }
  core::ClusterSpec cluster;
  std::map<std::string, std::string> owner;
  core::ClusterLimits limits;
  for (size_t i = 0; i < nodes.size(); ++i) {
    DLSCHED_TRY(ParseNodeEntry(r, nodes[i], Index("nodes", i), cluster.nodes, owner, limits,
                               &cluster.reserved));
  }
  if (Given(root["events"])) {
    const YAML::Node& events = root["events"];
    if (!events.IsSequence()) return r.Expected("events", "a list of node events", events);
    std::set<std::string> present;
    for (const auto& node : cluster.nodes) present.insert(node.name);
    core::Time last = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      DLSCHED_TRY(ParseEvent(r, events[i], Index("events", i), owner, present, limits, last,
                             cluster.events));
    }
  }
  if (Given(root["queues"])) DLSCHED_TRY(ParseQueues(r, root["queues"], cluster.queues));
  if (Given(root["cohorts"])) {
    DLSCHED_TRY(ParseCohorts(r, root["cohorts"], cluster.queues, cluster.cohorts));
  }
  // What the entries checked one by one add up to, checked as a whole as
  // every other source of clusters is (nothing here should be new).
  if (auto p = core::CheckClusterLimits(cluster)) return r.Fail(p->field, p->what);
  return cluster;
}

}  // namespace

namespace {

// `spec` with its name added, for ParseQueue and ParseCohort; a `name` of
// its own is refused (the object's name is metadata.name).
core::Result<YAML::Node> Named(const Reader& r, const YAML::Node& spec, const std::string& name,
                               const std::string& path) {
  if (!spec.IsMap()) return r.Expected(path, "a map", spec);
  if (Given(spec["name"])) {
    return r.Fail(Key(path, "name"), "not a field here: the name is metadata.name");
  }
  YAML::Node named = YAML::Clone(spec);
  named["name"] = name;
  return named;
}

template <typename Parse>
auto ParseObjectSpec(const YAML::Node& spec, const std::string& name, const std::string& source,
                     const std::string& path, Parse parse)
    -> decltype(parse(Reader(source), YAML::Node(), path)) {
  const Reader r(source);
  try {
    DLSCHED_TRY_LET(named, Named(r, spec, name, path));
    return parse(r, *named, path);
  } catch (const std::exception& e) {
    return std::unexpected(internal::FromException(source, e));
  }
}

}  // namespace

core::Result<core::QueueSpec> ParseQueueObject(const YAML::Node& spec, const std::string& name,
                                               const std::string& source, const std::string& path) {
  return ParseObjectSpec(spec, name, source, path, ParseQueue);
}

core::Result<core::CohortSpec> ParseCohortObject(const YAML::Node& spec, const std::string& name,
                                                 const std::string& source,
                                                 const std::string& path) {
  return ParseObjectSpec(spec, name, source, path, ParseCohort);
}

core::Status CheckQueueObjects(const std::vector<core::QueueSpec>& queues,
                               const std::vector<core::CohortSpec>& cohorts) {
  const Reader r("");
  for (const auto& [kind, n] : {std::pair{"queues", queues.size()}, {"cohorts", cohorts.size()}}) {
    if (n > static_cast<size_t>(core::kMaxQueues)) {
      return core::Errorf("{} {}, more than the limit of {}", n, kind, core::kMaxQueues);
    }
  }
  auto st = CheckCohortTrees(r, queues, cohorts, [&](bool cohort, size_t i) {
    return cohort ? "Cohort " + cohorts[i].name : "Queue " + queues[i].name;
  });
  if (!st) {
    // "<field>: <what>" without the empty source's ": " in front.
    std::string m = st.error().message;
    if (m.starts_with(": ")) m.erase(0, 2);
    return core::Errorf("{}", m);
  }
  return {};
}

core::Result<core::ClusterSpec> ParseCluster(const std::string& text, const std::string& source) {
  return internal::ParseText(text, source, ParseClusterNode);
}

core::Result<core::ClusterSpec> LoadCluster(const std::string& path) {
  return internal::LoadFile(path, ParseCluster);
}

}  // namespace dlsched::config
