#include "dlsched/policy/framework/registry.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <new>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/yaml_util.h"
#include "dlsched/core/text.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/framework/plugins.h"

namespace dlsched::policy {
namespace {

// The units DLSCHED_REGISTER_UNIT registered, in the order their static
// objects were constructed, and whether Table() has read them.
struct Registered {
  std::vector<Unit> units;
  bool read = false;
};
Registered& Registrations() {
  static auto* r = new Registered;  // constructed at the first registration
  return *r;
}

// Every unit's pieces, built once, at the first use.
const PluginTable& Table() {
  static const PluginTable* t = [] {
    auto table = BuildTable(RegisteredUnits());
    // Two units claiming one name is a bug of the build, not of an input.
    if (!table) throw std::logic_error(table.error().message);
    Registrations().read = true;
    return new PluginTable(std::move(*table));
  }();
  return *t;
}

// Moves the pieces of `from` into `into`; `owner` remembers which unit
// added each name at this point.
template <typename T>
core::Status Merge(FactoryMap<T>& into, FactoryMap<T>& from, std::string_view point,
                   std::string_view unit, std::map<std::string, std::string_view>& owner) {
  for (auto& [name, factory] : from) {
    auto [it, added] = owner.emplace(name, unit);
    if (!added) {
      return core::Errorf("policy units '{}' and '{}' both register {} '{}'", it->second, unit,
                          point, name);
    }
    into.emplace(name, std::move(factory));
  }
  return {};
}

const FactoryMap<engine::Admission>& Admissions() { return Table().admissions; }
const FactoryMap<engine::JobOrder>& Orders() { return Table().orders; }
const FactoryMap<engine::NodeFilter>& Filters() { return Table().filters; }
const FactoryMap<engine::Packer>& Packers() { return Table().packers; }
const FactoryMap<engine::NodeScorer>& Scorers() { return Table().scorers; }
const FactoryMap<engine::Preemptor>& Preemptors() { return Table().preemptors; }
const FactoryMap<engine::Sizer>& Sizers() { return Table().sizers; }
const FactoryMap<engine::QueueOrder>& QueueOrders() { return Table().queue_orders; }

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
    const std::vector<std::string_view> names = Names(m);
    return core::Errorf("{}: unknown {} '{}' (known: {}){}", NamePath(p), point, p.name,
                        fmt::join(names, ", "), core::DidYouMean(p.name, names));
  }
  // yaml-cpp throws from unexpected places (a conversion, a subscript); a
  // plugin's arguments are user input, so that is an error about them.
  try {
    return it->second(p.args, p.where);
  } catch (const std::bad_alloc&) {
    throw;  // out of memory is not an error in the arguments
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
    if (point == "queueOrder") return &spec.queue_order;
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

UnitRegistrar::UnitRegistrar(std::string_view name, AddUnit add) {
  Registered& r = Registrations();
  // A unit registered after the table was built would be missing from it.
  if (r.read) throw std::logic_error(fmt::format("policy unit '{}' registered too late", name));
  r.units.push_back({name, add});
}

std::vector<Unit> RegisteredUnits() {
  std::vector<Unit> units = Registrations().units;
  std::sort(units.begin(), units.end(),
            [](const Unit& a, const Unit& b) { return a.name < b.name; });
  return units;
}

core::Result<PluginTable> BuildTable(std::span<const Unit> units) {
  PluginTable table;
  std::set<std::string_view> names;
  std::map<std::string, std::string_view> owners[8];  // per point: piece -> unit
  for (const Unit& unit : units) {
    if (!names.insert(unit.name).second) {
      return core::Errorf("two policy units are named '{}'", unit.name);
    }
    PluginTable part;
    unit.add(part);
    for (core::Status st :
         {Merge(table.admissions, part.admissions, "Admission", unit.name, owners[0]),
          Merge(table.orders, part.orders, "JobOrder", unit.name, owners[1]),
          Merge(table.filters, part.filters, "NodeFilter", unit.name, owners[2]),
          Merge(table.packers, part.packers, "Packer", unit.name, owners[3]),
          Merge(table.scorers, part.scorers, "NodeScorer", unit.name, owners[4]),
          Merge(table.preemptors, part.preemptors, "Preemptor", unit.name, owners[5]),
          Merge(table.sizers, part.sizers, "Sizer", unit.name, owners[6]),
          Merge(table.queue_orders, part.queue_orders, "QueueOrder", unit.name, owners[7])}) {
      DLSCHED_TRY(st);
    }
    table.requirements.insert(table.requirements.end(), part.requirements.begin(),
                              part.requirements.end());
  }
  return table;
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
    case Point::kQueueOrder:
      return Names(QueueOrders());
  }
  return {};
}

core::Result<engine::Profile> BuildProfile(const config::ProfileSpec& spec) {
  engine::Profile p;
  p.name = spec.name;
  p.description = spec.description;
  p.protect_factor = spec.protect_factor;
  p.protect_relaunch_only = spec.protect_relaunch_only;
  p.hand_over_after_checkpoint = spec.hand_over_after_checkpoint;
  p.percentage_of_nodes_to_score = spec.percentage_of_nodes_to_score;
  p.task_loss =
      spec.restart_on_task_loss ? engine::TaskLossPolicy::kRestart : engine::TaskLossPolicy::kFail;
  DLSCHED_TRY_LET(admission, Build<engine::Admission>(Admissions(), spec.admission, "Admission"));
  // Every name is known before combinations are judged.
  DLSCHED_TRY_LET(order, Build<engine::JobOrder>(Orders(), spec.order, "JobOrder"));
  DLSCHED_TRY_LET(packer, Build<engine::Packer>(Packers(), spec.packer, "Packer"));
  DLSCHED_TRY_LET(preemptor, Build<engine::Preemptor>(Preemptors(), spec.preemptor, "Preemptor"));
  DLSCHED_TRY_LET(sizer, Build<engine::Sizer>(Sizers(), spec.sizer, "Sizer"));
  DLSCHED_TRY_LET(queue_order,
                  Build<engine::QueueOrder>(QueueOrders(), spec.queue_order, "QueueOrder"));
  DLSCHED_TRY(CheckCombination(spec));
  p.admission = std::move(*admission);
  p.order = std::move(*order);
  for (const auto& f : spec.filters) {
    DLSCHED_TRY_LET(filter, Build<engine::NodeFilter>(Filters(), f, "NodeFilter"));
    p.filters.push_back(std::move(*filter));
  }
  p.packer = std::move(*packer);
  for (const auto& s : spec.scorers) {
    DLSCHED_TRY_LET(scorer, Build<engine::NodeScorer>(Scorers(), s, "NodeScorer"));
    p.scorers.push_back(std::move(*scorer));
    p.scorer_weights.push_back(s.weight);
  }
  p.preemptor = std::move(*preemptor);
  p.sizer = std::move(*sizer);
  p.queue_order = std::move(*queue_order);
  return p;
}

std::optional<std::string> BuiltinProfileText(std::string_view name) {
  for (const auto& b : BuiltinProfiles()) {
    if (b.name == name) return std::string(b.yaml);
  }
  if (!name.starts_with("static-")) return std::nullopt;
  const std::string_view digits = name.substr(7);
  int n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || n < 1) return std::nullopt;
  std::string text(BuiltinProfileText("static-n").value());
  // The static-n text with this n: its name, description and slot size.
  auto replace = [&](std::string_view from, const std::string& to) {
    const size_t at = text.find(from);
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  replace("name: static-n\n", fmt::format("name: {}\n", name));
  const size_t desc = text.find("\ndescription: ");
  if (desc != std::string::npos) {
    const size_t from = desc + 14;
    text.replace(from, text.find('\n', from) - from,
                 fmt::format("Static partitioning - FIFO, one slot of {} GPUs per job", n));
  }
  replace("slotGpus: 2}", fmt::format("slotGpus: {}}}", n));
  return text;
}

namespace {

// "kod2-kappa-2" for kod2 with order.args.kappa=2: the last key and the
// value of each override, in the letters a profile name allows.
std::string VariantName(std::string name, std::span<const std::string> overrides) {
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    const size_t dot = o.rfind('.', eq);
    std::string part = o.substr(dot == std::string::npos ? 0 : dot + 1);
    for (char& c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_';
      if (!ok) c = '-';
    }
    name += "-" + part;
  }
  while (name.find("--") != std::string::npos) name.replace(name.find("--"), 2, "-");
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.substr(0, 63);
}

}  // namespace

core::Result<config::ProfileSpec> ResolveProfile(const std::string& name_or_path,
                                                 std::span<const std::string> overrides) {
  std::string text;
  std::string source = name_or_path;
  if (auto builtin = BuiltinProfileText(name_or_path)) {
    text = std::move(*builtin);
  } else if (name_or_path.find('/') == std::string::npos && !name_or_path.ends_with(".yaml") &&
             !name_or_path.ends_with(".yml")) {
    std::vector<std::string_view> names;
    for (const auto& b : BuiltinProfiles()) names.push_back(b.name);
    return core::Errorf("--profile: '{}' is neither a built-in profile ({}) nor a .yaml file{}",
                        name_or_path, fmt::join(names, ", "),
                        core::DidYouMean(name_or_path, names));
  } else if (overrides.empty()) {
    return config::LoadProfile(name_or_path);
  } else {
    DLSCHED_TRY_LET(read, config::internal::ReadFile(name_or_path));
    text = std::move(*read);
  }
  if (overrides.empty()) return config::ParseProfile(text, source);
  DLSCHED_TRY_LET(before, config::ParseProfile(text, source));
  DLSCHED_TRY_LET(changed, config::ApplyProfileOverrides(text, source, overrides));
  // Each override shortened: the source opens every error about the result.
  std::vector<std::string> shown;
  for (const std::string& o : overrides) shown.push_back(core::EscapeText(o, 100));
  source = fmt::format("{} with --set {}", name_or_path, fmt::join(shown, ","));
  auto spec = config::ParseProfile(*changed, source);
  if (!spec) return spec;
  const bool named = std::any_of(overrides.begin(), overrides.end(),
                                 [](const std::string& o) { return o.starts_with("name="); });
  if (!named) spec->name = VariantName(before->name, overrides);
  return spec;
}

core::Result<std::string> ResolvedProfileText(const std::string& name_or_path,
                                              std::span<const std::string> overrides) {
  DLSCHED_TRY_LET(spec, ResolveProfile(name_or_path, overrides));
  std::string text;
  if (auto builtin = BuiltinProfileText(name_or_path)) {
    text = std::move(*builtin);
  } else {
    DLSCHED_TRY_LET(read, config::internal::ReadFile(name_or_path));
    text = std::move(*read);
  }
  if (overrides.empty()) return text;
  std::vector<std::string> all(overrides.begin(), overrides.end());
  const bool named = std::any_of(all.begin(), all.end(),
                                 [](const std::string& o) { return o.starts_with("name="); });
  if (!named) {
    // A single-quoted YAML scalar: read back as the name, whatever it holds.
    std::string quoted = "'";
    for (char c : spec->name) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    all.push_back("name=" + quoted + "'");
  }
  return config::ApplyProfileOverrides(text, name_or_path, all);
}

}  // namespace dlsched::policy
