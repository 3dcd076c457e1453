#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/shared/packer_single_node.h"

namespace dlsched::policy {

// Visits schedulable nodes "most idle first": most free GPUs, then most free
// cpu, then most free memory, then lowest node index. Walks the free-GPU
// index from the top and sorts only the buckets it reaches, so a caller that
// stops early never sorts the whole cluster. Each bucket is copied before it
// is visited, so `visit` may place tasks (which moves nodes to lower
// buckets); a node moved down that way is visited again when its new bucket
// comes, and callers that fill a node completely find nothing more fits.
class MostIdleNodes {
 public:
  // Calls visit(n) for every schedulable node with at least `min_free_gpu`
  // free GPUs, in the order above, until visit returns false.
  template <typename Visit>
  void ForEach(const engine::ClusterState& state, int min_free_gpu, Visit&& visit) const {
    std::vector<Entry> bucket;
    for (int g = state.MaxGpuPerNode(); g >= std::max(min_free_gpu, 0); --g) {
      const std::vector<engine::NodeIndex>& nodes = state.NodesWithFreeGpu(g);
      if (nodes.empty()) continue;
      bucket.clear();
      for (engine::NodeIndex n : nodes) {
        bucket.push_back(Entry{state.FreeOf(n, core::kCpu), state.FreeOf(n, core::kMemory), n});
      }
      std::sort(bucket.begin(), bucket.end(), [](const Entry& a, const Entry& b) {
        if (a.cpu != b.cpu) return a.cpu > b.cpu;
        if (a.memory != b.memory) return a.memory > b.memory;
        return a.node < b.node;
      });
      for (const Entry& e : bucket) {
        if (!visit(e.node)) return;
      }
    }
  }

 private:
  struct Entry {
    int64_t cpu;
    int64_t memory;
    engine::NodeIndex node;
  };
};

// KOD2's job-level packing (docs/policies/kod2.md): the whole gang on one node
// if any node has room for it (chosen by the profile's scorers, exactly as
// SingleNodePacker does); otherwise PS, Chief and workers together, filling the
// most idle nodes first (MostIdleNodes), each node with as many of the gang's
// tasks as fit (PS first, then Chief, then workers), so the job spans as few
// nodes as this greedy order finds. All or nothing: on failure the session is
// rolled back.
class FewestNodesPacker final : public engine::Packer {
 public:
  bool PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                 std::string* reason) const override;

 private:
  SingleNodePacker single_;
  MostIdleNodes idle_;
};

}  // namespace dlsched::policy
