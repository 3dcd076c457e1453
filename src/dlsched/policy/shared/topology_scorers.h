#pragma once

// Placement by network topology (docs/topology.md): a job's tasks packed
// under few switches (Tiresias' consolidation), or spread over racks. Each
// groups nodes by the value of one label, its topologyKey (default
// dlsched.io/switch), as Kubernetes' pod affinity and topology spread do.
// Like KeepTogether, each Score visits the slots of the task's own job only:
// O(tasks of the job) per node scored. The task's own slot is skipped.

#include <string>

#include "dlsched/core/error.h"
#include "dlsched/engine/extension_points.h"

namespace YAML {
class Node;
}

namespace dlsched::policy {

// TopologyPack: 100 x (the job's other placed tasks on nodes with n's
// value of the key) / (the job's other placed tasks); 0 while none is
// placed, on a node without the key, and for a job whose
// localitySensitivity is below `min_sensitivity` (Tiresias consolidates only
// the models that train slower spread out).
class TopologyPack final : public engine::NodeScorer {
 public:
  TopologyPack(std::string key, double min_sensitivity)
      : key_(std::move(key)), min_sensitivity_(min_sensitivity) {}
  std::string_view Name() const override { return "TopologyPack"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;

 private:
  std::string key_;
  double min_sensitivity_;
};

// TopologySpread: 100 - TopologyPack's share (minimum sensitivity 0): 100
// where none of the job's other placed tasks share n's value of the key,
// 0 where all do; 100 while none is placed; 0 on a node without the key.
class TopologySpread final : public engine::NodeScorer {
 public:
  explicit TopologySpread(std::string key) : key_(std::move(key)) {}
  std::string_view Name() const override { return "TopologySpread"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;

 private:
  std::string key_;
};

class ArgReader;

// The `topologyKey` argument: a node label key, default dlsched.io/switch.
core::Result<std::string> TopologyKeyArg(ArgReader& reader);

// Factories from a profile's args:
//   topologyKey: a node label key (default dlsched.io/switch)
//   minLocalitySensitivity: 0..1 (TopologyPack only; default 0)
core::Result<std::unique_ptr<engine::NodeScorer>> MakeTopologyPack(const YAML::Node& args,
                                                                   const std::string& where);
core::Result<std::unique_ptr<engine::NodeScorer>> MakeTopologySpread(const YAML::Node& args,
                                                                     const std::string& where);

}  // namespace dlsched::policy
