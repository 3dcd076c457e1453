// Gavel's allocations (policy/gavel/gavel_allocation.h): the max-min
// fairness LP (two CLP solves) and the FIFO greedy, on `jobs` jobs over
// Gavel's three GPU types (36 GPUs each, its simulations' cluster). Each
// round of the Gavel admission computes one of them afresh, so this is
// the floor of a round's cost.
//
//   cmake --preset bench && cmake --build --preset bench --target gavel_bench
//   build/bench/gavel_bench --benchmark_min_time=0.2

#include <cstdint>
#include <numeric>
#include <vector>

#include <benchmark/benchmark.h>

#include "dlsched/policy/gavel/gavel_allocation.h"

namespace dlsched::bench {
namespace {

// Jobs of 1, 2, 4 or 8 GPUs (Gavel's mix, 70/10/15/5 %) with rates on
// k80, p100 and v100 spread like Gavel's measurements (v100 1-10x k80),
// from a fixed linear congruential sequence.
policy::GavelProblem Problem(int jobs) {
  policy::GavelProblem p;
  p.jobs = jobs;
  p.types = 3;
  p.capacity = {36, 36, 36};
  uint64_t x = 12345;
  auto next = [&x]() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(x >> 11) / static_cast<double>(uint64_t{1} << 53);
  };
  for (int i = 0; i < jobs; ++i) {
    const double r = next();
    p.gpus.push_back(r < 0.7 ? 1 : r < 0.8 ? 2 : r < 0.95 ? 4 : 8);
    p.weight.push_back(1);
    const double v100 = 1 + 99 * next();
    p.rate.push_back(v100 / (1 + 9 * next()));  // k80
    p.rate.push_back(v100 / (1 + 2 * next()));  // p100
    p.rate.push_back(v100);
  }
  return p;
}

void BM_MaxMinFairness(benchmark::State& state) {
  const policy::GavelProblem p = Problem(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(policy::MaxMinFairness(p, true));
}
BENCHMARK(BM_MaxMinFairness)->Arg(10)->Arg(50)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_Fifo(benchmark::State& state) {
  const policy::GavelProblem p = Problem(static_cast<int>(state.range(0)));
  std::vector<int> order(static_cast<size_t>(p.jobs));
  std::iota(order.begin(), order.end(), 0);
  for (auto _ : state) benchmark::DoNotOptimize(policy::Fifo(p, order, true));
}
BENCHMARK(BM_Fifo)->Arg(10)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace dlsched::bench
