#pragma once

#include <string>
#include <vector>

#include <algorithm>

#include "core/builders.h"
#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/engine/cluster_state.h"

namespace dlsched::engine::testing {

// Clusters and jobs come from the shared test library (testing/core).
using dlsched::testing::Job;
using dlsched::testing::Nodes;

// Everything a rollback must restore, per node and per job.
struct Fingerprint {
  std::vector<core::Resources> requested, nonzero;
  std::vector<int> tasks_on;
  std::vector<std::vector<NodeIndex>> buckets;
  std::vector<std::vector<NodeIndex>> task_node;
  std::vector<int> placed_workers, placed_tasks;
  core::Resources total;
  std::vector<core::Resources> queue_usage;
  bool operator==(const Fingerprint&) const = default;
};

inline Fingerprint Take(const ClusterState& s) {
  Fingerprint f;
  for (NodeIndex n = 0; n < s.NumNodes(); ++n) {
    f.requested.push_back(s.Requested(n));
    f.nonzero.push_back(s.NonZeroRequested(n));
    f.tasks_on.push_back(s.NumTasksOn(n));
  }
  for (int g = 0; g <= s.MaxGpuPerNode(); ++g) {
    auto b = s.NodesWithFreeGpu(g);
    std::sort(b.begin(), b.end());  // bucket order is not part of the contract
    f.buckets.push_back(b);
  }
  for (JobIndex j = 0; j < s.NumJobs(); ++j) {
    f.task_node.push_back(s.Job(j).task_node);
    f.placed_workers.push_back(s.Job(j).placed_workers);
    f.placed_tasks.push_back(s.Job(j).placed_tasks);
  }
  f.total = s.TotalRequested();
  for (int q = 0; q < s.Quotas().NumQueues(); ++q) f.queue_usage.push_back(s.Quotas().Usage(q));
  return f;
}

}  // namespace dlsched::engine::testing
