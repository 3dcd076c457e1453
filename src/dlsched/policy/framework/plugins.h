#pragma once

// What a policy unit hands the registry: factories for its pieces, by
// extension point, and the rules its pieces impose on the others. Each
// unit (a folder of policy/ such as kod2/, or the shared pieces in
// shared/shared.cc) adds them in one function and registers that function with
// DLSCHED_REGISTER_UNIT, so a policy's pieces, their argument types and
// their rules live in one place, and no other file names the unit.

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {

// Builds a piece from its `args` map; `where` names the map for messages
// ("p.yaml: order.args").
template <typename T>
using Factory = std::function<core::Result<std::unique_ptr<T>>(const YAML::Node& args,
                                                               const std::string& where)>;
template <typename T>
using FactoryMap = std::map<std::string, Factory<T>, std::less<>>;

// A factory for a piece without arguments.
template <typename T, typename Impl>
Factory<T> NoArgs() {
  return [](const YAML::Node& args, const std::string& where) -> core::Result<std::unique_ptr<T>> {
    ArgReader reader(args, where);
    DLSCHED_TRY(reader.Finish());
    return std::unique_ptr<T>(std::make_unique<Impl>());
  };
}

// A piece that works only with certain pieces at another extension point.
// Points are named by their profile keys (admission, order, packer,
// preemptor, sizer, queueOrder).
struct Requirement {
  std::string_view point;
  std::string_view name;
  std::string_view other;
  std::vector<std::string_view> allowed;
  std::string_view why;  // what would break otherwise
};

struct PluginTable {
  FactoryMap<engine::Admission> admissions;
  FactoryMap<engine::JobOrder> orders;
  FactoryMap<engine::NodeFilter> filters;
  FactoryMap<engine::Packer> packers;
  FactoryMap<engine::NodeScorer> scorers;
  FactoryMap<engine::Preemptor> preemptors;
  FactoryMap<engine::Sizer> sizers;
  FactoryMap<engine::QueueOrder> queue_orders;
  std::vector<Requirement> requirements;
};

// A unit: its name and the function that adds its pieces and rules.
using AddUnit = void (*)(PluginTable& t);
struct Unit {
  std::string_view name;
  AddUnit add = nullptr;
};

// Registers a unit before main runs: DLSCHED_REGISTER_UNIT below.
class UnitRegistrar {
 public:
  UnitRegistrar(std::string_view name, AddUnit add);
};

// One line at namespace scope in one .cc file of a unit,
//   DLSCHED_REGISTER_UNIT(kod2, RegisterKod2);
// registers the unit `kod2` (an identifier: it names a static object)
// whose pieces RegisterKod2 adds. The object's constructor runs before
// main; the registry builds its table from every unit so registered at its
// first use, after main has begun. Nothing calls into the unit's files, so
// a static library would leave them out of the link: CMakeLists.txt links
// the policy layer whole (WHOLE_ARCHIVE).
#define DLSCHED_REGISTER_UNIT(name, add) \
  [[maybe_unused]] static const ::dlsched::policy::UnitRegistrar dlsched_unit_##name(#name, add)

// Every registered unit, sorted by name: the order the registry adds them
// in, whatever the order of static initialisation (the link's).
std::vector<Unit> RegisteredUnits();

// The table of `units`, added in the order given. Two units of one name,
// or two pieces of one name at one extension point, are an error naming
// the units: a name means one piece, whatever the order of the units.
core::Result<PluginTable> BuildTable(std::span<const Unit> units);

}  // namespace dlsched::policy
