#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlsched/config/openb.h"
#include "dlsched/policy/sharing/sharing.h"

namespace dlsched::sim {

// The FGD paper's experiment (docs/sharing.md): tasks arrive one at a time
// onto the cluster and none leaves; each is placed at once by the policy or
// dropped. After every task the share of the cluster's GPU capacity
// allocated and the fragmentation of what is free are recorded against the
// workload arrived so far (in % of the GPU capacity, failed tasks
// included).
struct SharingCluster {
  std::vector<policy::sharing::Node> nodes;  // as empty
  std::vector<policy::sharing::Task> tasks;  // the trace, in file order
  int64_t gpu_milli = 0;                     // the GPU capacity
};

// The nodes and tasks of an openb node list and pod list.
SharingCluster FromOpenb(const std::vector<config::OpenbNode>& nodes,
                         const std::vector<config::OpenbPod>& pods);

struct SharingOptions {
  policy::sharing::Policy policy = policy::sharing::Policy::kFgd;
  uint64_t seed = 42;
  // The trace is shuffled, then tasks drawn from it at random are added
  // (or removed at random) until its GPU request is this share of the
  // cluster's GPU capacity.
  double tune = 1.3;
  bool exact = false;  // FGD by the exact fragmentation increase, not the simulator's score
};

// One run: per arrived workload x (integer %, 0 up to the last pod's; a
// point no event landed on takes its neighbours', or with none either
// the point before it), the mean over the events there.
struct SharingCurve {
  std::vector<double> allocated;   // GPU capacity allocated, %
  std::vector<double> fragmented;  // fragmented free GPU capacity, % of the capacity
  int64_t placed = 0;
  int64_t failed = 0;
  int64_t tasks = 0;  // after tuning
};

SharingCurve RunSharing(const SharingCluster& cluster, const SharingOptions& options);

}  // namespace dlsched::sim
