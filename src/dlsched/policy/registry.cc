#include "dlsched/policy/registry.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/policy/admission_gang.h"
#include "dlsched/policy/admission_per_pod.h"
#include "dlsched/policy/args.h"
#include "dlsched/policy/filters.h"
#include "dlsched/policy/order_fifo.h"
#include "dlsched/policy/packer_single_node.h"
#include "dlsched/policy/packer_task_by_task.h"
#include "dlsched/policy/plugins.h"
#include "dlsched/policy/preemptor_none.h"
#include "dlsched/policy/resource_scorers.h"
#include "dlsched/policy/sizer_fixed.h"

namespace dlsched::policy {
namespace {

// Every unit's pieces, built once.
const PluginTable& Table() {
  static const PluginTable* t = [] {
    auto* table = new PluginTable;
    RegisterBaselines(*table);
    RegisterKod2(*table);
    RegisterCps(*table);
    RegisterFsched(*table);
    RegisterVolcano(*table);
    RegisterTiresias(*table);
    return table;
  }();
  return *t;
}

const FactoryMap<engine::Admission>& Admissions() { return Table().admissions; }
const FactoryMap<engine::JobOrder>& Orders() { return Table().orders; }
const FactoryMap<engine::NodeFilter>& Filters() { return Table().filters; }
const FactoryMap<engine::Packer>& Packers() { return Table().packers; }
const FactoryMap<engine::NodeScorer>& Scorers() { return Table().scorers; }
const FactoryMap<engine::Preemptor>& Preemptors() { return Table().preemptors; }
const FactoryMap<engine::Sizer>& Sizers() { return Table().sizers; }

template <typename Map>
std::vector<std::string_view> Names(const Map& m) {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

// Where a plugin's name sits, e.g. "p.yaml: scorers[1].name", from its args
// location "p.yaml: scorers[1].args".
std::string NamePath(const config::PluginSpec& p) {
  std::string w = p.where;
  if (w.ends_with(".args")) w.resize(w.size() - 5);
  return w + ".name";
}

template <typename T, typename Map>
core::Result<std::unique_ptr<T>> Build(const Map& m, const config::PluginSpec& p,
                                       std::string_view point) {
  auto it = m.find(p.name);
  if (it == m.end()) {
    return core::Errorf("{}: unknown {} '{}' (known: {})", NamePath(p), point, p.name,
                        fmt::join(Names(m), ", "));
  }
  // yaml-cpp throws from unexpected places (a conversion, a subscript); a
  // plugin's arguments are user input, so that is an error about them.
  try {
    return it->second(p.args, p.where);
  } catch (const std::exception& e) {
    return core::Errorf("{}: {}", p.where, e.what());
  }
}

// The profile's field for a point's plugin, e.g. "p.yaml: order".
std::string FieldPath(const config::PluginSpec& p) {
  std::string w = p.where;
  if (w.ends_with(".args")) w.resize(w.size() - 5);
  return w;
}

core::Status CheckCombination(const config::ProfileSpec& spec) {
  auto plugin = [&spec](std::string_view point) -> const config::PluginSpec* {
    if (point == "admission") return &spec.admission;
    if (point == "order") return &spec.order;
    if (point == "packer") return &spec.packer;
    if (point == "preemptor") return &spec.preemptor;
    if (point == "sizer") return &spec.sizer;
    return nullptr;
  };
  for (const Requirement& req : Table().requirements) {
    const config::PluginSpec* piece = plugin(req.point);
    const config::PluginSpec* other = plugin(req.other);
    if (piece->name != req.name) continue;
    if (std::find(req.allowed.begin(), req.allowed.end(), other->name) != req.allowed.end()) {
      continue;
    }
    return core::Errorf("{}: {} {} needs {} {} ({}), got {}", FieldPath(*other), req.point,
                        req.name, req.other, fmt::join(req.allowed, " or "), req.why, other->name);
  }
  return {};
}

}  // namespace

void RegisterBaselines(PluginTable& t) {
  t.admissions.emplace(
      "Gang",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Admission>> {
        ArgReader reader(args, where);
        auto backfill = reader.Bool("backfill", true);
        if (!backfill) return std::unexpected(backfill.error());
        if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
        return std::make_unique<GangAdmission>(*backfill);
      });
  t.admissions.emplace("PerPod", NoArgs<engine::Admission, PerPodAdmission>());
  t.orders.emplace("FIFO", NoArgs<engine::JobOrder, FifoOrder>());
  t.filters.emplace("NodeAffinity", NoArgs<engine::NodeFilter, NodeAffinityFilter>());
  t.filters.emplace("TaintToleration", NoArgs<engine::NodeFilter, TaintTolerationFilter>());
  t.packers.emplace("TaskByTask", NoArgs<engine::Packer, TaskByTaskPacker>());
  t.packers.emplace("SingleNode", NoArgs<engine::Packer, SingleNodePacker>());
  t.scorers.emplace("LeastAllocated", MakeLeastAllocated);
  t.scorers.emplace("MostAllocated", MakeMostAllocated);
  t.scorers.emplace("RequestedToCapacityRatio", MakeRequestedToCapacityRatio);
  t.preemptors.emplace("None", NoArgs<engine::Preemptor, NoPreemptor>());
  t.sizers.emplace("Fixed", NoArgs<engine::Sizer, FixedSizer>());
  t.sizers.emplace("StaticPartition",
                   [](const YAML::Node& args,
                      const std::string& where) -> core::Result<std::unique_ptr<engine::Sizer>> {
                     ArgReader reader(args, where);
                     if (!reader.Has("slotGpus")) {
                       return core::Errorf("{}.slotGpus: required (the GPUs in one slot, e.g. 2)",
                                           where);
                     }
                     auto n = reader.Int("slotGpus", 1, 1, 1024);
                     if (!n) return std::unexpected(n.error());
                     if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
                     return std::make_unique<StaticPartitionSizer>(static_cast<int>(*n));
                   });
  // Per-pod admission is Kubernetes' default scheduler: pods one at a time.
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "order",
       {"FIFO"},
       "pods are scheduled in the order they were created; a job order would be ignored"});
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "packer",
       {"TaskByTask"},
       "pods are placed one at a time by the scorers; a packer would be ignored"});
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "preemptor",
       {"None"},
       "per-pod scheduling here does not preempt; a preemptor would be ignored"});
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "sizer",
       {"Fixed"},
       "a job's pods are created at its replicas and never resized; a sizer would be ignored"});
}

std::vector<std::string_view> KnownNames(Point point) {
  switch (point) {
    case Point::kAdmission:
      return Names(Admissions());
    case Point::kOrder:
      return Names(Orders());
    case Point::kFilter:
      return Names(Filters());
    case Point::kPacker:
      return Names(Packers());
    case Point::kScorer:
      return Names(Scorers());
    case Point::kPreemptor:
      return Names(Preemptors());
    case Point::kSizer:
      return Names(Sizers());
  }
  return {};
}

core::Result<engine::Profile> BuildProfile(const config::ProfileSpec& spec) {
  engine::Profile p;
  p.name = spec.name;
  p.description = spec.description;
  p.protect_factor = spec.protect_factor;
  p.percentage_of_nodes_to_score = spec.percentage_of_nodes_to_score;
  p.task_loss =
      spec.restart_on_task_loss ? engine::TaskLossPolicy::kRestart : engine::TaskLossPolicy::kFail;
  auto admission = Build<engine::Admission>(Admissions(), spec.admission, "Admission");
  if (!admission) return std::unexpected(admission.error());
  // Every name is known before combinations are judged.
  auto order = Build<engine::JobOrder>(Orders(), spec.order, "JobOrder");
  if (!order) return std::unexpected(order.error());
  auto packer = Build<engine::Packer>(Packers(), spec.packer, "Packer");
  if (!packer) return std::unexpected(packer.error());
  auto preemptor = Build<engine::Preemptor>(Preemptors(), spec.preemptor, "Preemptor");
  if (!preemptor) return std::unexpected(preemptor.error());
  auto sizer = Build<engine::Sizer>(Sizers(), spec.sizer, "Sizer");
  if (!sizer) return std::unexpected(sizer.error());
  if (auto st = CheckCombination(spec); !st) return std::unexpected(st.error());
  p.admission = std::move(*admission);
  p.order = std::move(*order);
  for (const auto& f : spec.filters) {
    auto filter = Build<engine::NodeFilter>(Filters(), f, "NodeFilter");
    if (!filter) return std::unexpected(filter.error());
    p.filters.push_back(std::move(*filter));
  }
  p.packer = std::move(*packer);
  for (const auto& s : spec.scorers) {
    auto scorer = Build<engine::NodeScorer>(Scorers(), s, "NodeScorer");
    if (!scorer) return std::unexpected(scorer.error());
    p.scorers.push_back(std::move(*scorer));
    p.scorer_weights.push_back(s.weight);
  }
  p.preemptor = std::move(*preemptor);
  p.sizer = std::move(*sizer);
  return p;
}

core::Result<config::ProfileSpec> ResolveProfile(const std::string& name_or_path) {
  for (const auto& b : BuiltinProfiles()) {
    if (b.name == name_or_path)
      return config::ParseProfile(std::string(b.yaml), std::string(b.name));
  }
  if (name_or_path.starts_with("static-") && name_or_path != "static-n") {
    const std::string_view digits = std::string_view(name_or_path).substr(7);
    int n = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && n >= 1) {
      auto spec = ResolveProfile("static-n");
      if (!spec) return spec;
      spec->name = name_or_path;
      spec->description = fmt::format("Static partitioning - FIFO, one slot of {} GPUs per job", n);
      spec->sizer.args["slotGpus"] = n;
      spec->source = name_or_path;
      spec->sizer.where = name_or_path + ": sizer.args";
      return spec;
    }
  }
  if (name_or_path.find('/') == std::string::npos && !name_or_path.ends_with(".yaml") &&
      !name_or_path.ends_with(".yml")) {
    std::vector<std::string_view> names;
    for (const auto& b : BuiltinProfiles()) names.push_back(b.name);
    return core::Errorf("--profile: '{}' is neither a built-in profile ({}) nor a .yaml file",
                        name_or_path, fmt::join(names, ", "));
  }
  return config::LoadProfile(name_or_path);
}

}  // namespace dlsched::policy
