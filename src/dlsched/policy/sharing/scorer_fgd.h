#pragma once

// Fragmentation Gradient Descent as a node scorer (docs/sharing.md): a node
// scores by how little placing the task there adds to the fragmentation of
// the cluster's free GPU capacity, measured against the target workload
// (the classes of the tasks of every job the cluster has seen, to 95% of
// them: ClusterState::TaskCensus). Weng et al., USENIX ATC'23.

#include <memory>
#include <string>

#include "dlsched/core/error.h"
#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/sharing/sharing.h"

namespace YAML {
class Node;
}

namespace dlsched::policy {

// The node as the fragmentation measure sees it: its free CPU and, per GPU
// device, its free thousandths (a device holding shares: 1000 minus them;
// a fully free device: 1000; devices taken by whole-GPU tasks left out, as
// they have none free).
sharing::Node SharingNodeOf(const engine::ClusterState& state, engine::NodeIndex n);

// The target workload of ClusterState::TaskCensus.
std::vector<sharing::TaskClass> CensusWorkload(const engine::ClusterState& state);

// FGD: floor(100 sigmoid(-d / 1000)) where d is the fragmentation increase
// (milli-GPU) of placing the task on node n, its share on the device the
// engine gives it (ClusterState::TightestDevice), whole GPUs on fully free
// devices; 50 for an increase of 0, higher where it lowers fragmentation.
// The target workload is worked out once per state and number of jobs.
class FgdScorer final : public engine::NodeScorer {
 public:
  std::string_view Name() const override { return "FragmentationGradient"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
};

core::Result<std::unique_ptr<engine::NodeScorer>> MakeFgdScorer(const YAML::Node& args,
                                                                const std::string& where);

}  // namespace dlsched::policy
