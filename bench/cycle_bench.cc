// One scheduling cycle (engine::Engine::Cycle) on a realistic state:
// {1k, 10k} nodes of 8 GPU / 64 cpu / 512Gi, 70% of the GPUs held by
// running jobs on random nodes, and {1k, 10k} waiting jobs, under the
// gang-binpack and k8s-default built-in profiles. With 70% busy most of the
// waiting jobs fit, so the cycle mostly places; the busy:97 cases keep the
// cluster nearly full, so most waiting jobs are tried and rolled back (the
// steady state of an overloaded cluster, which every cycle pays again).
//
// Cycle() rolls every tentative step back, so the state is the same on every
// iteration and the loop measures exactly one cycle each time.
//
//   cmake --preset bench && cmake --build --preset bench
//   build/bench/cycle_bench --benchmark_min_time=0.2

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_state.h"
#include "dlsched/engine/engine.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::bench {
namespace {

// `percentage`: the profile's percentageOfNodesToScore, when >= 0;
// `queue_order`: its queueOrder, when given.
engine::Engine MakeEngine(const std::string& profile, int percentage = -1,
                          const std::string& queue_order = "") {
  auto spec = policy::ResolveProfile(profile);
  if (!spec) throw std::runtime_error(spec.error().message);
  if (percentage >= 0) spec->percentage_of_nodes_to_score = percentage;
  if (!queue_order.empty()) spec->queue_order.name = queue_order;
  auto built = policy::BuildProfile(*spec);
  if (!built) throw std::runtime_error(built.error().message);
  return engine::Engine(std::move(*built));
}

// States are expensive to build (10k nodes, tens of thousands of jobs) and
// Google Benchmark calls each function several times: build each once.
BenchState& State(int nodes, int waiting, int busy_percent, bool pod_queue, int extra_names = 0,
                  bool tasks_ask = false, int queues = 0) {
  static std::map<std::tuple<int, int, int, bool, int, bool, int>, std::unique_ptr<BenchState>>
      cache;
  auto& slot = cache[{nodes, waiting, busy_percent, pod_queue, extra_names, tasks_ask, queues}];
  if (!slot) {
    slot = std::make_unique<BenchState>(nodes, waiting, busy_percent / 100.0, pod_queue,
                                        extra_names, tasks_ask, queues);
  }
  return *slot;
}

void BM_Cycle(benchmark::State& bm, const std::string& profile) {
  const engine::Engine engine = MakeEngine(profile);
  const bool pod_queue = engine.profile().admission->UsesPodQueue();
  BenchState& s = State(static_cast<int>(bm.range(0)), static_cast<int>(bm.range(1)),
                        static_cast<int>(bm.range(2)), pod_queue);
  int64_t binds = 0;
  int64_t starts = 0;
  for (auto _ : bm) {
    // The plan is not applied, so the state must not keep the cycle's
    // remembered failures (ClusterState::RoomEpoch): every iteration
    // measures a full cycle.
    s.state->NoteRoomChanged();
    engine::Plan plan = engine.Cycle(*s.state, s.pods, s.memos, s.now);
    binds = 0;
    starts = 0;
    for (const auto& a : plan.actions) {
      binds += a.kind == engine::ActionKind::kBind;
      starts += a.kind == engine::ActionKind::kStart;
    }
    benchmark::DoNotOptimize(plan);
  }
  bm.counters["binds"] = static_cast<double>(binds);
  bm.counters["starts"] = static_cast<double>(starts);
  bm.counters["running"] = s.running_jobs;
  bm.counters["free_gpu"] = static_cast<double>(s.state->TotalFree()[core::kGpu]);
  bm.counters["pods"] = static_cast<double>(s.pods.size());
  bm.SetItemsProcessed(bm.iterations() * s.waiting_jobs);  // waiting jobs considered
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"nodes", "waiting", "busy"});
  for (int busy : {70, 97}) {
    for (int nodes : {1000, 10000}) {
      for (int waiting : {1000, 10000}) b->Args({nodes, waiting, busy});
    }
  }
  b->Unit(benchmark::kMillisecond);
}

// Issue 9's target case: one cycle that places a 64-task gang (64 one-GPU
// workers, submitted first) on `nodes` nodes at 97% GPUs busy, with
// `waiting` jobs behind it that cannot start (each worker asks for 9 GPUs,
// more than a node has), scoring every feasible node (pct 100) or as
// kube-scheduler's adaptive percentageOfNodesToScore (pct 0: 5% of 10k
// nodes). `warm`: the queue's failures are remembered from
// the cycle before (ClusterState::RoomEpoch unchanged: the steady state of a
// blocked queue); cold: room was freed, so every job is tried again (what
// no placement can change, whether it could ever fit, is still
// remembered).
void BM_GangAtTheHead(benchmark::State& bm, const std::string& profile) {
  const engine::Engine engine = MakeEngine(profile, static_cast<int>(bm.range(3)));
  const int nodes = static_cast<int>(bm.range(0));
  const int waiting = static_cast<int>(bm.range(1));
  const bool warm = bm.range(2) != 0;
  BenchState s(nodes, 0, 0.97, false);
  std::vector<core::JobSpec> extra(static_cast<size_t>(waiting) + 1);
  for (size_t i = 0; i < extra.size(); ++i) {
    core::JobSpec& j = extra[i];
    j.name = "gang-" + std::to_string(i);
    j.submit_time = s.now + static_cast<double>(i);
    core::RoleSpec& w = j.role(core::Role::kWorker);
    w.replicas = w.min_replicas = w.max_replicas = i == 0 ? 64 : 1;
    w.resources[core::kGpu] = i == 0 ? 1 : 9;
    j.SetDuration(100, {});
    const engine::JobIndex idx = s.state->AddJob(&j, j.submit_time);
    s.state->SetPhase(idx, core::JobPhase::kWaiting, j.submit_time);
  }
  const core::Time now = s.now + static_cast<double>(extra.size());
  // The cycle before, which fills the memos (a job's first cycle words why
  // it can never fit: one scan of the nodes, remembered until a node
  // changes).
  engine.Cycle(*s.state, s.pods, s.memos, now);
  int64_t binds = 0;
  for (auto _ : bm) {
    if (!warm) s.state->NoteRoomChanged();
    engine::Plan plan = engine.Cycle(*s.state, s.pods, s.memos, now);
    binds = 0;
    for (const auto& a : plan.actions) binds += a.kind == engine::ActionKind::kBind;
    benchmark::DoNotOptimize(plan);
  }
  bm.counters["binds"] = static_cast<double>(binds);
}

// Issue 9's placement rate: one cycle on 5,000 nodes (30% of the GPUs
// busy) placing the pods of `waiting` generated jobs, nearly all of which
// fit; items/s is pods bound per second (kube-scheduler's scheduler_perf
// suite expects about 800 pods/s at 5,000 nodes).
// The `names` variants: every node also lists 16 more resource names, 11
// of them past the ids a resource vector holds inline, and with `asked`
// every task asks for one of those (docs/performance.md, "Any number of
// resource names").
void BM_PlacementRate(benchmark::State& bm, const std::string& profile, int extra_names = 0,
                      bool tasks_ask = false) {
  const engine::Engine engine = MakeEngine(profile, static_cast<int>(bm.range(2)));
  const bool pod_queue = engine.profile().admission->UsesPodQueue();
  BenchState& s = State(static_cast<int>(bm.range(0)), static_cast<int>(bm.range(1)), 30, pod_queue,
                        extra_names, tasks_ask);
  int64_t binds = 0;
  int64_t total = 0;
  for (auto _ : bm) {
    s.state->NoteRoomChanged();
    engine::Plan plan = engine.Cycle(*s.state, s.pods, s.memos, s.now);
    binds = 0;
    for (const auto& a : plan.actions) binds += a.kind == engine::ActionKind::kBind;
    total += binds;
    benchmark::DoNotOptimize(plan);
  }
  bm.counters["binds"] = static_cast<double>(binds);
  bm.SetItemsProcessed(total);
}

// The queue layer (docs/performance.md, "Queues"): one gang-binpack cycle
// on 5,000 nodes at 97% of the GPUs busy with 100,000 waiting jobs, without
// queues and with 100 queues in one cohort (each an equal share of the
// GPUs as nominal quota, jobs spread over them) under each queue order.
void BM_QueueLayer(benchmark::State& bm, const std::string& queue_order) {
  const engine::Engine engine = MakeEngine("gang-binpack", -1, queue_order);
  BenchState& s = State(static_cast<int>(bm.range(0)), static_cast<int>(bm.range(1)), 97, false, 0,
                        false, static_cast<int>(bm.range(2)));
  int64_t binds = 0;
  for (auto _ : bm) {
    s.state->NoteRoomChanged();
    engine::Plan plan = engine.Cycle(*s.state, s.pods, s.memos, s.now);
    binds = 0;
    for (const auto& a : plan.actions) binds += a.kind == engine::ActionKind::kBind;
    benchmark::DoNotOptimize(plan);
  }
  bm.counters["binds"] = static_cast<double>(binds);
  bm.SetItemsProcessed(bm.iterations() * s.waiting_jobs);
}

BENCHMARK_CAPTURE(BM_Cycle, gang_binpack, std::string("gang-binpack"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Cycle, k8s_default, std::string("k8s-default"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_GangAtTheHead, gang_binpack, std::string("gang-binpack"))
    ->ArgNames({"nodes", "waiting", "warm", "pct"})
    ->Args({10000, 0, 1, 100})
    ->Args({10000, 10000, 1, 100})
    ->Args({10000, 10000, 0, 100})
    ->Args({10000, 0, 1, 0})
    ->Args({10000, 10000, 1, 0})
    ->Args({10000, 10000, 0, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlacementRate, gang_binpack, std::string("gang-binpack"))
    ->ArgNames({"nodes", "waiting", "pct"})
    ->Args({5000, 1000, 100})
    ->Args({5000, 1000, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlacementRate, k8s_default, std::string("k8s-default"))
    ->ArgNames({"nodes", "waiting", "pct"})
    ->Args({5000, 1000, 100})
    ->Args({5000, 1000, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlacementRate, gang_binpack_names, std::string("gang-binpack"), 16, false)
    ->ArgNames({"nodes", "waiting", "pct"})
    ->Args({5000, 1000, 100})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlacementRate, gang_binpack_names_asked, std::string("gang-binpack"), 16, true)
    ->ArgNames({"nodes", "waiting", "pct"})
    ->Args({5000, 1000, 100})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlacementRate, k8s_default_names, std::string("k8s-default"), 16, false)
    ->ArgNames({"nodes", "waiting", "pct"})
    ->Args({5000, 1000, 100})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlacementRate, k8s_default_names_asked, std::string("k8s-default"), 16, true)
    ->ArgNames({"nodes", "waiting", "pct"})
    ->Args({5000, 1000, 100})
    ->Unit(benchmark::kMillisecond);

// No queues, then 100 queues under each queue order.
[[maybe_unused]] const bool kQueueLayerRegistered = [] {
  const std::pair<const char*, int> cases[] = {{"None", 0},
                                               {"None", 100},
                                               {"Kueue", 100},
                                               {"KueueFairSharing", 100},
                                               {"Drf", 100},
                                               {"VolcanoProportion", 100},
                                               {"VolcanoCapacity", 100}};
  for (const auto& [order, queues] : cases) {
    benchmark::RegisterBenchmark(
        (std::string("BM_QueueLayer/") + (queues == 0 ? "no_queues" : order)).c_str(),
        [order = std::string(order)](benchmark::State& bm) { BM_QueueLayer(bm, order); })
        ->ArgNames({"nodes", "waiting", "queues"})
        ->Args({5000, 100000, queues})
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace dlsched::bench
