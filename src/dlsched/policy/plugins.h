#pragma once

// What a policy unit hands the registry: factories for its pieces, by
// extension point, and the rules its pieces impose on the others. Each
// unit (policy/kod2/, policy/cps/, policy/fsched/, policy/volcano/, and the
// baselines in policy/) registers itself in one function, so a policy's
// pieces, their argument types and their rules live in one place.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/args.h"

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
    if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
    return std::unique_ptr<T>(std::make_unique<Impl>());
  };
}

// A piece that works only with certain pieces at another extension point.
// Points are named by their profile keys (admission, order, packer,
// preemptor, sizer).
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
  std::vector<Requirement> requirements;
};

// The units. Each adds its pieces and rules to `t`.
void RegisterBaselines(PluginTable& t);  // registry.cc
void RegisterKod2(PluginTable& t);       // kod2/kod2.cc
void RegisterCps(PluginTable& t);        // cps/cps.cc
void RegisterFsched(PluginTable& t);     // fsched/fsched.cc
void RegisterVolcano(PluginTable& t);    // volcano/volcano.cc
void RegisterTiresias(PluginTable& t);   // tiresias/tiresias.cc

}  // namespace dlsched::policy
