#pragma once

#include <map>
#include <string>
#include <vector>

#include "dlsched/core/affinity.h"
#include "dlsched/core/resources.h"

namespace dlsched::core {

struct NodeSpec {
  std::string name;
  Resources allocatable;
  // At least zone, rack and gpu-model are meaningful to policies; any label
  // may be present. Ordered so output is deterministic.
  Labels labels;
  // Taints keep tasks that do not tolerate them off the node (NoSchedule,
  // NoExecute) or make it less attractive (PreferNoSchedule).
  std::vector<Taint> taints;
  bool schedulable = true;
};

struct ClusterSpec {
  std::vector<NodeSpec> nodes;

  Resources Capacity() const {
    Resources total;
    for (const auto& n : nodes) {
      if (n.schedulable) total += n.allocatable;
    }
    return total;
  }
};

}  // namespace dlsched::core
