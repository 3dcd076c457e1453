#include <array>

#include "dlsched/policy/registry.h"

namespace dlsched::policy {
namespace {

constexpr std::string_view kK8sDefault =
    R"(# The Kubernetes default scheduler, as a dlsched profile: pods are scheduled
# one at a time in creation order, spread with LeastAllocated, with no gang:
# a job runs only once all its pods are bound, and bound pods hold their
# resources while the rest wait (how per-pod scheduling deadlocks).
name: k8s-default
description: Kubernetes default - pods one at a time, LeastAllocated spread, no gang
admission: PerPod
order: FIFO
packer: TaskByTask
scorers:
  - name: LeastAllocated
    weight: 1
    args:
      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kGangBinpack =
    R"(# Gang scheduling (all of a job's minimum or nothing) in FIFO order with
# backfill, binpacking GPUs with kube-scheduler's RequestedToCapacityRatio
# (shape 0->0, 100->10: fuller nodes score higher).
name: gang-binpack
description: Gang scheduling in FIFO order with backfill, GPUs binpacked (RequestedToCapacityRatio)
admission:
  name: Gang
  args: {backfill: true}
order: FIFO
packer: TaskByTask
scorers:
  - name: RequestedToCapacityRatio
    weight: 1
    args:
      shape:
        - {utilization: 0, score: 0}
        - {utilization: 100, score: 10}
      resources:
        - {name: nvidia.com/gpu, weight: 5}
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kStaticN =
    R"(# Static partitioning: the GPUs are cut into fixed slots of slotGpus GPUs on
# one node; each job takes one free slot in FIFO order and keeps it to the
# end. `dlsched simulate --profile static-<n>` builds this with slotGpus n.
name: static-n
description: Static partitioning - FIFO, one slot of n GPUs per job (static-<n> for any n; here n = 2)
admission:
  name: Gang
  args: {backfill: false}
order: FIFO
packer: SingleNode
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer:
  name: StaticPartition
  args: {slotGpus: 2}
)";

constexpr std::array<BuiltinProfile, 3> kBuiltins = {{
    {"k8s-default", "Kubernetes default: pods one at a time, LeastAllocated spread, no gang",
     kK8sDefault},
    {"gang-binpack", "Gang scheduling, FIFO with backfill, GPUs binpacked", kGangBinpack},
    {"static-n", "Static partitioning into slots of n GPUs, FIFO (static-1, static-2, ...)",
     kStaticN},
}};

}  // namespace

std::span<const BuiltinProfile> BuiltinProfiles() { return kBuiltins; }

}  // namespace dlsched::policy
