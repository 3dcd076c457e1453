// Session: tentatively place a 64-task gang and roll it back, as a packer
// does for every job it tries. Rollback replays the undo log; it never
// copies the cluster, so the cost must not depend on the number of nodes.
//
//   cmake --preset bench && cmake --build --preset bench
//   build/bench/session_bench --benchmark_min_time=0.2

#include <vector>

#include <benchmark/benchmark.h>

#include "bench_state.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/session.h"

namespace dlsched::bench {
namespace {

constexpr int kGang = 64;

// One job of 1 PS + 63 one-GPU workers on an empty cluster of `nodes` nodes.
struct GangState {
  core::ClusterSpec cluster;
  core::JobSpec spec;
  std::unique_ptr<engine::ClusterState> state;
  std::vector<engine::TaskRef> tasks;
  std::vector<engine::NodeIndex> nodes;  // where each task goes

  explicit GangState(int num_nodes) : cluster(MakeCluster(num_nodes)) {
    spec.name = "gang";
    auto& ps = spec.role(core::Role::kPS);
    ps.replicas = ps.min_replicas = ps.max_replicas = 1;
    ps.resources[core::kCpu] = 4000;
    ps.resources[core::kMemory] = int64_t{16} << 30;
    auto& w = spec.role(core::Role::kWorker);
    w.replicas = w.min_replicas = w.max_replicas = kGang - 1;
    w.resources[core::kCpu] = 4000;
    w.resources[core::kMemory] = int64_t{16} << 30;
    w.resources[core::kGpu] = 1;
    spec.total_steps = 1;
    state = std::make_unique<engine::ClusterState>(cluster);
    const engine::JobIndex j = state->AddJob(&spec, 0);
    state->SetPhase(j, core::JobPhase::kWaiting, 0);
    engine::GangSlots(*state, j, w.replicas, &tasks);
    // 8 tasks per node, spread over the cluster so every step rebuckets a
    // different node's free-GPU entry.
    const int stride = std::max(1, num_nodes / (kGang / 8));
    for (int i = 0; i < static_cast<int>(tasks.size()); ++i) {
      nodes.push_back(static_cast<engine::NodeIndex>(((i / 8) * stride) % num_nodes));
    }
  }
};

// A long-lived session (as inside one cycle): the undo log keeps its
// capacity, so this is the per-step cost without allocation.
void BM_SessionAssignRollback(benchmark::State& bm) {
  GangState g(static_cast<int>(bm.range(0)));
  engine::Session session(*g.state);
  for (auto _ : bm) {
    const auto mark = session.GetMark();
    for (size_t i = 0; i < g.tasks.size(); ++i) session.Assign(g.tasks[i], g.nodes[i]);
    session.RollbackTo(mark);
  }
  bm.SetItemsProcessed(bm.iterations() * static_cast<int64_t>(g.tasks.size()));
}
BENCHMARK(BM_SessionAssignRollback)->ArgName("nodes")->Arg(16)->Arg(1000)->Arg(10000);

// A fresh session each time (as each Engine::Cycle makes one): includes
// growing the undo log from empty.
void BM_FreshSessionAssignRollback(benchmark::State& bm) {
  GangState g(static_cast<int>(bm.range(0)));
  for (auto _ : bm) {
    engine::Session session(*g.state);
    for (size_t i = 0; i < g.tasks.size(); ++i) session.Assign(g.tasks[i], g.nodes[i]);
    session.RollbackTo(0);
  }
  bm.SetItemsProcessed(bm.iterations() * static_cast<int64_t>(g.tasks.size()));
}
BENCHMARK(BM_FreshSessionAssignRollback)->ArgName("nodes")->Arg(16)->Arg(1000);

}  // namespace
}  // namespace dlsched::bench
