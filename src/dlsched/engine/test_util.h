#pragma once

#include <string>
#include <vector>

#include <algorithm>

#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/engine/cluster_state.h"

namespace dlsched::engine::testing {

// n identical nodes named node-0.. with the given cpu (cores), memory (GiB)
// and GPUs.
inline core::ClusterSpec Nodes(int n, int64_t cores, int64_t mem_gib, int64_t gpus) {
  core::ClusterSpec c;
  for (int i = 0; i < n; ++i) {
    core::NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.allocatable[core::kCpu] = cores * 1000;
    node.allocatable[core::kMemory] = mem_gib << 30;
    node.allocatable[core::kGpu] = gpus;
    c.nodes.push_back(node);
  }
  return c;
}

// A job with `ps` parameter servers (1 core, 2 GiB) and workers of 1 core,
// 2 GiB and `gpus_per_worker` GPUs, elastic in [min, max].
inline core::JobSpec Job(std::string name, double arrival, int ps, int workers, int min, int max,
                         int64_t gpus_per_worker = 1) {
  core::JobSpec j;
  j.name = std::move(name);
  j.submit_time = arrival;
  auto& p = j.role(core::Role::kPS);
  p.replicas = p.min_replicas = p.max_replicas = ps;
  p.resources[core::kCpu] = 1000;
  p.resources[core::kMemory] = int64_t{2} << 30;
  auto& w = j.role(core::Role::kWorker);
  w.replicas = workers;
  w.min_replicas = min;
  w.max_replicas = max;
  w.resources[core::kCpu] = 1000;
  w.resources[core::kMemory] = int64_t{2} << 30;
  w.resources[core::kGpu] = gpus_per_worker;
  j.total_steps = 1000;
  j.throughput.steps_per_s = {{1, 1.0}};
  return j;
}

// Everything a rollback must restore, per node and per job.
struct Fingerprint {
  std::vector<core::Resources> requested, nonzero;
  std::vector<int> tasks_on;
  std::vector<std::vector<NodeIndex>> buckets;
  std::vector<std::vector<NodeIndex>> task_node;
  std::vector<int> placed_workers, placed_tasks;
  core::Resources total;
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
  return f;
}

}  // namespace dlsched::engine::testing
