#include "dlsched/policy/shared/topology_scorers.h"

#include <yaml-cpp/yaml.h>

#include "dlsched/core/job.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {
namespace {

// Node n's value of `key`, or nullptr when it has none.
const std::string* ValueOf(const engine::ClusterState& state, engine::NodeIndex n,
                           const std::string& key) {
  const core::Labels& labels = state.NodeSpecOf(n).labels;
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

// The share (0..100) of job t.job's other placed tasks on nodes with n's
// value of `key`; nullopt while none is placed.
std::optional<int64_t> ShareHere(const engine::ClusterState& state, engine::TaskRef t,
                                 engine::NodeIndex n, const std::string& value,
                                 const std::string& key) {
  const engine::JobState& js = state.Job(t.job);
  const int self = js.SlotOf(t.role, t.index);
  int seen = 0;    // placed slots visited, t's own included
  int others = 0;  // of which not t's
  int here = 0;    // of which under n's value
  for (int s = 0; s < static_cast<int>(js.task_node.size()) && seen < js.placed_tasks; ++s) {
    const engine::NodeIndex at = js.task_node[s];
    if (at == engine::kNoNode) continue;
    ++seen;
    if (s == self) continue;
    ++others;
    if (at == n) {
      ++here;
    } else if (const std::string* v = ValueOf(state, at, key); v != nullptr && *v == value) {
      ++here;
    }
  }
  if (others == 0) return std::nullopt;
  return int64_t{100} * here / others;
}

}  // namespace

core::Result<std::string> TopologyKeyArg(ArgReader& reader) {
  const YAML::Node n = reader.Node("topologyKey");
  if (!n.IsDefined() || n.IsNull()) return std::string(core::kSwitchLabel);
  if (!n.IsScalar() || n.Scalar().empty()) {
    return reader.Expected("topologyKey", "a node label key (a non-empty string)", n);
  }
  return n.Scalar();
}

int64_t TopologyPack::Score(const engine::ClusterState& state, engine::TaskRef t,
                            engine::NodeIndex n) const {
  if (state.Job(t.job).spec->throughput.locality_sensitivity < min_sensitivity_) return 0;
  const std::string* value = ValueOf(state, n, key_);
  if (value == nullptr) return 0;
  return ShareHere(state, t, n, *value, key_).value_or(0);
}

int64_t TopologySpread::Score(const engine::ClusterState& state, engine::TaskRef t,
                              engine::NodeIndex n) const {
  const std::string* value = ValueOf(state, n, key_);
  if (value == nullptr) return 0;
  return 100 - ShareHere(state, t, n, *value, key_).value_or(0);
}

core::Result<std::unique_ptr<engine::NodeScorer>> MakeTopologyPack(const YAML::Node& args,
                                                                   const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(key, TopologyKeyArg(reader));
  DLSCHED_TRY_LET(min, reader.Double("minLocalitySensitivity", 0, 0, 1));
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<TopologyPack>(*key, *min);
}

core::Result<std::unique_ptr<engine::NodeScorer>> MakeTopologySpread(const YAML::Node& args,
                                                                     const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(key, TopologyKeyArg(reader));
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<TopologySpread>(*key);
}

}  // namespace dlsched::policy
