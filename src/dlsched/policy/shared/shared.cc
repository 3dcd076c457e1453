// The shared pieces: the job order, node filters, packers, scorers,
// preemptor and sizer that the Kubernetes default scheduler has and other
// policies build on (docs/policies.md).

#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/shared/filters.h"
#include "dlsched/policy/shared/order_fifo.h"
#include "dlsched/policy/shared/packer_consolidate.h"
#include "dlsched/policy/shared/packer_single_node.h"
#include "dlsched/policy/shared/packer_task_by_task.h"
#include "dlsched/policy/shared/preemptor_none.h"
#include "dlsched/policy/shared/resource_scorers.h"
#include "dlsched/policy/shared/sizer_fixed.h"
#include "dlsched/policy/shared/topology_scorers.h"

namespace dlsched::policy {
namespace {

void RegisterShared(PluginTable& t) {
  t.orders.emplace("FIFO", NoArgs<engine::JobOrder, FifoOrder>());
  t.filters.emplace("NodeAffinity", NoArgs<engine::NodeFilter, NodeAffinityFilter>());
  t.filters.emplace("TaintToleration", NoArgs<engine::NodeFilter, TaintTolerationFilter>());
  t.packers.emplace("TaskByTask", NoArgs<engine::Packer, TaskByTaskPacker>());
  t.packers.emplace("SingleNode", NoArgs<engine::Packer, SingleNodePacker>());
  t.packers.emplace("Consolidate", MakeConsolidate);
  t.scorers.emplace("LeastAllocated", MakeLeastAllocated);
  t.scorers.emplace("MostAllocated", MakeMostAllocated);
  t.scorers.emplace("RequestedToCapacityRatio", MakeRequestedToCapacityRatio);
  t.scorers.emplace("TopologyPack", MakeTopologyPack);
  t.scorers.emplace("TopologySpread", MakeTopologySpread);
  t.preemptors.emplace("None", NoArgs<engine::Preemptor, NoPreemptor>());
  t.sizers.emplace("Fixed", NoArgs<engine::Sizer, FixedSizer>());
}

}  // namespace

DLSCHED_REGISTER_UNIT(shared, RegisterShared);

}  // namespace dlsched::policy
