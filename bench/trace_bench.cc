// Replaying public traces: importing them, and whole simulations of the
// Tiresias 60-job trace repeated (same gaps, shifted submit times) under
// the literature's baselines, in process (no YAML, no report files).
//
//   cmake --preset bench && cmake --build --preset bench
//   build/bench/trace_bench --benchmark_min_time=0.2
//
// docs/performance.md has the whole-process numbers (dlsched simulate).

#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "dlsched/config/trace.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::bench {
namespace {

std::string Data(const std::string& name) {
  return std::string(DLSCHED_SOURCE_DIR) + "/data/" + name;
}

config::TraceOptions Options(config::TraceFormat f, const std::string& path) {
  config::TraceOptions o;
  o.format = f;
  o.path = path;
  return o;
}

// Reading all 82,247 rows of philly.csv into a workload.
void BM_LoadPhilly(benchmark::State& s) {
  const config::TraceOptions o = Options(config::TraceFormat::kPhilly, Data("pollux/philly.csv"));
  for (auto _ : s) {
    auto t = config::LoadTrace(o);
    if (!t) s.SkipWithError(t.error().message.c_str());
    benchmark::DoNotOptimize(t);
  }
  s.SetItemsProcessed(s.iterations() * 82'247);
}
BENCHMARK(BM_LoadPhilly)->Unit(benchmark::kMillisecond);

// The 60-job trace, copies x 60 jobs, copy k shifted by k x 1812 s (its
// last arrival plus its interval), on 4 nodes x 4 GPUs, under profile P.
void BM_Tiresias(benchmark::State& s, const char* profile) {
  auto trace =
      config::LoadTrace(Options(config::TraceFormat::kTiresias, Data("tiresias/60_job.csv")));
  auto cluster =
      config::LoadTiresiasCluster(std::string(DLSCHED_SOURCE_DIR) + "/examples/tiresias-n4g4.csv");
  if (!trace || !cluster) {
    s.SkipWithError("cannot read the data");
    return;
  }
  const int copies = static_cast<int>(s.range(0));
  config::WorkloadSpec w;
  w.source = "tiresias x" + std::to_string(copies);
  for (int k = 0; k < copies; ++k) {
    for (core::JobSpec job : trace->workload.jobs) {
      job.name += "-" + std::to_string(k);
      job.submit_time += 1812.0 * k;
      w.jobs.push_back(std::move(job));
    }
  }
  auto spec = policy::ResolveProfile(profile);
  if (!spec) {
    s.SkipWithError(spec.error().message.c_str());
    return;
  }
  auto built = policy::BuildProfile(*spec);
  if (!built) {
    s.SkipWithError(built.error().message.c_str());
    return;
  }
  const engine::Engine engine(std::move(*built));
  for (auto _ : s) {
    auto r = sim::Simulate(*cluster, w, engine, {});
    if (!r) s.SkipWithError(r.error().message.c_str());
    benchmark::DoNotOptimize(r);
  }
  s.SetItemsProcessed(s.iterations() * static_cast<int64_t>(w.jobs.size()));
}
BENCHMARK_CAPTURE(BM_Tiresias, fifo, "fifo")->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tiresias, gang_binpack, "gang-binpack")
    ->Arg(100)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tiresias, sjf, "sjf")->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tiresias, srtf, "srtf")->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tiresias, las, "las")->Arg(100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dlsched::bench
