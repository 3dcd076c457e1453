// One scheduling cycle (engine::Engine::Cycle) on a realistic state:
// {1k, 10k} nodes of 8 GPU / 64 cpu / 512Gi, ~70% of the GPUs held by
// running jobs on random nodes, and {1k, 10k} waiting jobs, under the
// gang-binpack and k8s-default built-in profiles.
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

#include <benchmark/benchmark.h>

#include "bench_state.h"
#include "dlsched/engine/engine.h"
#include "dlsched/policy/registry.h"

namespace dlsched::bench {
namespace {

constexpr double kRunningGpuShare = 0.7;

engine::Engine MakeEngine(const std::string& profile) {
  auto spec = policy::ResolveProfile(profile);
  if (!spec) throw std::runtime_error(spec.error().message);
  auto built = policy::BuildProfile(*spec);
  if (!built) throw std::runtime_error(built.error().message);
  return engine::Engine(std::move(*built));
}

// States are expensive to build (10k nodes, tens of thousands of jobs) and
// Google Benchmark calls each function several times: build each once.
BenchState& State(int nodes, int waiting, bool pod_queue) {
  static std::map<std::tuple<int, int, bool>, std::unique_ptr<BenchState>> cache;
  auto& slot = cache[{nodes, waiting, pod_queue}];
  if (!slot) slot = std::make_unique<BenchState>(nodes, waiting, kRunningGpuShare, pod_queue);
  return *slot;
}

void BM_Cycle(benchmark::State& bm, const std::string& profile) {
  const engine::Engine engine = MakeEngine(profile);
  const bool pod_queue = engine.profile().admission->UsesPodQueue();
  BenchState& s = State(static_cast<int>(bm.range(0)), static_cast<int>(bm.range(1)), pod_queue);
  int64_t binds = 0;
  int64_t starts = 0;
  for (auto _ : bm) {
    engine::Plan plan = engine.Cycle(*s.state, s.now);
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
  bm.counters["pods"] = static_cast<double>(s.state->Pods().size());
  bm.SetItemsProcessed(bm.iterations() * s.waiting_jobs);  // waiting jobs considered
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"nodes", "waiting"});
  for (int nodes : {1000, 10000}) {
    for (int waiting : {1000, 10000}) b->Args({nodes, waiting});
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Cycle, gang_binpack, std::string("gang-binpack"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Cycle, k8s_default, std::string("k8s-default"))->Apply(Sizes);

}  // namespace
}  // namespace dlsched::bench
