#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dlsched/core/affinity.h"
#include "dlsched/core/queue.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"

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

// A change of the cluster at a time of a simulation (the cluster file's
// `events`): a node added, removed (drained away: its tasks are lost), failed
// (its tasks are lost) or updated (the fields given replace the node's).
struct NodeEvent {
  enum class Kind : uint8_t { kAdd, kRemove, kFail, kUpdate };
  Time time = 0;
  Kind kind = Kind::kAdd;
  NodeSpec node;  // kAdd: the whole node; otherwise only its name
  std::optional<Resources> allocatable;
  std::optional<Labels> labels;
  std::optional<std::vector<Taint>> taints;
  std::optional<bool> schedulable;
};

struct ClusterSpec {
  std::vector<NodeSpec> nodes;
  // In time order (the file's order among equal times).
  std::vector<NodeEvent> events;
  // By node name: what pods outside the workload hold there (a snapshot of
  // a live cluster), in use from the start and never released.
  std::map<std::string, Resources> reserved;
  // The teams' queues (the cluster file's `queues`), in the file's order.
  // Jobs naming no declared queue run without quota.
  std::vector<QueueSpec> queues;
  // The cohorts the cluster file declares (`cohorts`): those with a quota
  // of their own or a parent. Cohorts are a tree; every queue's cohort
  // and every parent is a node of it, declared or not.
  std::vector<CohortSpec> cohorts;

  Resources Capacity() const {
    Resources total;
    for (const auto& n : nodes) {
      if (n.schedulable) total += n.allocatable;
    }
    return total;
  }
};

}  // namespace dlsched::core
