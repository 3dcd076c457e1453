// The liveness sweep (testing/sim/liveness.h) at scale: every built-in
// profile on generated cases (50 to 2,000 jobs, offered load 0.3 to 2, 2 to
// 64 nodes, with and without launch and checkpoint delays), the same checks
// as src/dlsched/sim/liveness_test.cc. DLSCHED_LIVENESS_CASES cases per
// profile (default 200; 100,000 runs in all over the 12 profiles:
// DLSCHED_LIVENESS_CASES=8334), from seed DLSCHED_LIVENESS_FIRST (default
// 1), sizes up to DLSCHED_LIVENESS_MAX_JOBS (default 2000). Violations are
// printed to stderr and fail the benchmark; counters give the runs, the
// jobs and the largest share of a job's scale-event bound used. With
// DLSCHED_LIVENESS_DUMP=DIR, each case with a violation is written there as
// <profile>-<seed>-cluster.yaml and -workload.yaml, to replay with
// `dlsched simulate`.
//
//   build/bench/liveness_bench --benchmark_filter=fsched
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "dlsched/policy/framework/registry.h"
#include "dlsched/sim/generate.h"
#include "sim/liveness.h"

namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

void BM_Liveness(benchmark::State& state, std::string profile) {
  auto spec = dlsched::policy::ResolveProfile(profile);
  auto built = dlsched::policy::BuildProfile(*spec);
  const dlsched::engine::Engine engine(std::move(*built));
  const double min_gain = dlsched::testing::GainRuleOf(profile);
  const int cases = EnvInt("DLSCHED_LIVENESS_CASES", 200);
  const int first = EnvInt("DLSCHED_LIVENESS_FIRST", 1);
  const int max_jobs = EnvInt("DLSCHED_LIVENESS_MAX_JOBS", 2000);
  int64_t runs = 0;
  int64_t jobs = 0;
  int64_t violations = 0;
  dlsched::testing::LivenessStats stats;
  for (auto _ : state) {
    for (int i = 0; i < cases; ++i) {
      const auto c = dlsched::testing::DrawCase(static_cast<uint64_t>(first + i), 50, max_jobs);
      auto input = dlsched::testing::BuildCase(c);
      dlsched::sim::SimOptions options;
      options.timeline = false;
      dlsched::testing::ResizeCounter resizes;
      resizes.Hook(options);
      auto run = dlsched::sim::Simulate(input->cluster, input->workload, engine, options);
      if (!run) {
        std::fprintf(stderr, "%s, %s: %s\n", profile.c_str(), c.Describe().c_str(),
                     run.error().message.c_str());
        ++violations;
        continue;
      }
      const auto bad =
          dlsched::testing::CheckLiveness(*input, engine, *run, resizes, min_gain, &stats);
      for (const std::string& v : bad) {
        std::fprintf(stderr, "%s, %s: %s\n", profile.c_str(), c.Describe().c_str(), v.c_str());
        ++violations;
      }
      if (const char* dir = std::getenv("DLSCHED_LIVENESS_DUMP"); dir != nullptr && !bad.empty()) {
        const std::string base = std::string(dir) + "/" + profile + "-" + std::to_string(c.seed);
        std::ofstream(base + "-cluster.yaml") << dlsched::sim::ClusterToYaml(input->cluster);
        std::ofstream(base + "-workload.yaml") << dlsched::sim::WorkloadToYaml(input->workload);
      }
      ++runs;
      jobs += c.jobs;
    }
  }
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["jobs"] = static_cast<double>(jobs);
  state.counters["violations"] = static_cast<double>(violations);
  state.counters["max_scale_events"] = stats.max_scale_events;
  state.counters["max_bound_use"] = stats.max_bound_use;
  state.counters["max_stretch_use"] = stats.max_stretch_use;
  if (violations > 0) state.SkipWithError("liveness violations (see stderr)");
}

const bool kRegistered = [] {
  for (const std::string& name : dlsched::testing::BuiltinProfileRuns()) {
    benchmark::RegisterBenchmark(("liveness/" + name).c_str(), BM_Liveness, name)
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  }
  return true;
}();

}  // namespace
