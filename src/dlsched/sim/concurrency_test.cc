// One Engine serves several states at once: policies keep nothing between
// calls (per-cycle data lives in the cycle's CycleState), so two runs on
// two threads give, plan for plan, what each gives alone. The tsan preset
// builds and runs this test under ThreadSanitizer (`cmake --workflow
// --preset tsan`); the other presets run it as a plain test.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "dlsched/config/specs.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::MakeEngine;

// Every action of every plan of a run, one line each.
std::vector<std::string> PlansOf(const engine::Engine& engine, const core::ClusterSpec& cluster,
                                 const config::WorkloadSpec& workload) {
  std::vector<std::string> lines;
  SimOptions options;
  options.on_plan = [&lines](core::Time t, const engine::Plan& plan) {
    for (const engine::Action& a : plan.actions) {
      lines.push_back(fmt::format("{} {} {}/{}/{} n{} w{} r{} p{} s{} {}", t,
                                  static_cast<int>(a.kind), a.task.job,
                                  static_cast<int>(a.task.role), a.task.index, a.node, a.workers,
                                  a.restart, a.preempted, static_cast<int>(a.status), a.reason));
    }
  };
  auto r = Simulate(cluster, workload, engine, options);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return lines;
}

config::WorkloadSpec Workload(uint64_t seed) {
  GenerateOptions o;
  o.jobs = 150;
  o.seed = seed;
  o.mean_interarrival = 30;
  o.elastic_fraction = 0.5;
  o.min_steps = 100;
  o.max_steps = 5000;
  auto w = GenerateWorkload(o);
  EXPECT_TRUE(w.has_value()) << w.error().message;
  return *w;
}

core::ClusterSpec Cluster() {
  ClusterOptions o;
  o.nodes = 4;
  o.gpus_per_node = 4;
  auto yaml = ClusterYaml(o);
  EXPECT_TRUE(yaml.has_value());
  auto c = config::ParseCluster(*yaml, "generated");
  EXPECT_TRUE(c.has_value()) << c.error().message;
  return *c;
}

class ConcurrencyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConcurrencyTest, OneEngineOnTwoThreadsGivesTheSinglePlans) {
  const engine::Engine engine = MakeEngine(GetParam());
  const core::ClusterSpec cluster = Cluster();
  const config::WorkloadSpec a = Workload(1), b = Workload(2);
  const std::vector<std::string> alone_a = PlansOf(engine, cluster, a);
  const std::vector<std::string> alone_b = PlansOf(engine, cluster, b);
  ASSERT_FALSE(alone_a.empty());
  std::vector<std::string> together_a, together_b;
  std::thread ta([&] { together_a = PlansOf(engine, cluster, a); });
  std::thread tb([&] { together_b = PlansOf(engine, cluster, b); });
  ta.join();
  tb.join();
  EXPECT_EQ(together_a, alone_a);
  EXPECT_EQ(together_b, alone_b);
}

TEST_P(ConcurrencyTest, TwoEnginesOnTwoThreadsGiveTheSinglePlans) {
  const engine::Engine e1 = MakeEngine(GetParam()), e2 = MakeEngine(GetParam());
  const core::ClusterSpec cluster = Cluster();
  const config::WorkloadSpec a = Workload(3);
  const std::vector<std::string> alone = PlansOf(e1, cluster, a);
  std::vector<std::string> got1, got2;
  std::thread t1([&] { got1 = PlansOf(e1, cluster, a); });
  std::thread t2([&] { got2 = PlansOf(e2, cluster, a); });
  t1.join();
  t2.join();
  EXPECT_EQ(got1, alone);
  EXPECT_EQ(got2, alone);
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, ConcurrencyTest,
                         ::testing::Values("k8s-default", "gang-binpack", "static-2", "kod2", "cps",
                                           "volcano-priority", "fsched"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace dlsched::sim
