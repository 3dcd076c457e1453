// Property tests: every built-in profile and every profile file of
// examples/ (profile-*.yaml, testing/sim/liveness.h's ExampleProfileRuns)
// on a few hundred seeded random clusters and workloads each. After every
// cycle the simulator checks that no node is over-committed, that a gang
// is all or nothing (a pending job holds nothing, a running one holds all
// its PS/Chief tasks) and that workers stay within [minReplicas,
// maxReplicas] and that no queue uses more quota than it may
// (SimOptions::check_invariants). On top of that: runs are
// deterministic, and under the gang profiles every job that could start
// on the empty cluster finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/core/queue.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/report/outputs.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"
#include "sim/liveness.h"

namespace dlsched::sim {
namespace {

using testing::MakeEngine;
using testing::Record;

// Small integers from the raw engine output, identical on every standard
// library (std::uniform_int_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int In(int lo, int hi) { return lo + static_cast<int>(gen_() % uint64_t(hi - lo + 1)); }
  bool Chance(int percent) { return In(0, 99) < percent; }

 private:
  std::mt19937_64 gen_;
};

core::ClusterSpec RandomCluster(Rng& rng) {
  core::ClusterSpec c;
  const int nodes = rng.In(1, 5);
  for (int i = 0; i < nodes; ++i) {
    core::NodeSpec n;
    n.name = "n" + std::to_string(i);
    n.allocatable[core::kCpu] = 1000 * rng.In(4, 32);
    n.allocatable[core::kMemory] = int64_t{rng.In(8, 64)} << 30;
    n.allocatable[core::kGpu] = rng.In(0, 8);
    c.nodes.push_back(n);
  }
  return c;
}

config::WorkloadSpec RandomWorkload(Rng& rng) {
  config::WorkloadSpec w;
  w.source = "random";
  const int jobs = rng.In(1, 12);
  const char* ns[] = {"team-a", "team-b", "default"};
  for (int i = 0; i < jobs; ++i) {
    core::JobSpec j;
    j.name = "j" + std::to_string(i);
    j.namespace_name = ns[rng.In(0, 2)];
    j.submit_time = rng.In(0, 200);
    j.priority = static_cast<core::PriorityClass>(rng.In(0, 2));
    if (rng.Chance(50)) j.max_wait_minutes = rng.In(1, 90);
    auto& ps = j.role(core::Role::kPS);
    ps.replicas = ps.min_replicas = ps.max_replicas = rng.In(0, 2);
    ps.resources[core::kCpu] = 500 * rng.In(1, 4);
    ps.resources[core::kMemory] = int64_t{rng.In(1, 8)} << 30;
    auto& wk = j.role(core::Role::kWorker);
    wk.min_replicas = rng.In(1, 3);
    wk.replicas = wk.min_replicas + rng.In(0, 2);
    wk.max_replicas = wk.replicas + rng.In(0, 3);
    wk.resources[core::kCpu] = 500 * rng.In(1, 8);
    wk.resources[core::kMemory] = int64_t{rng.In(1, 16)} << 30;
    wk.resources[core::kGpu] = rng.In(0, 2);
    j.total_steps = 50 * rng.In(1, 40);
    double rate = 0.5 * rng.In(1, 6);
    for (int n = 1; n <= wk.max_replicas; ++n) {
      j.throughput.steps_per_s[n] = rate;
      rate += 0.25 * rng.In(0, 4);
    }
    j.throughput.locality_sensitivity = 0.1 * rng.In(0, 5);
    j.launch_delay = rng.In(0, 3) * 5;
    j.checkpoint_delay = rng.In(0, 2) * 5;
    w.jobs.push_back(std::move(j));
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const auto& a, const auto& b) { return a.submit_time < b.submit_time; });
  return w;
}

// Half the seeds: the cluster declares one to four queues (run under each
// queue order in turn), some in a cohort (in half of those, the cohorts
// form a tree with quotas of their own), with random nominal quotas, borrowing and lending limits
// on GPUs and CPU, and every job names one of them (or none: "default"). Drawn from a generator of
// their own, so the clusters and workloads are those of the seeds without queues.
void AddRandomQueues(int seed, core::ClusterSpec& cluster, config::WorkloadSpec& workload) {
  Rng rng(seed + 1'000'003);
  if (!rng.Chance(50)) return;
  const int queues = rng.In(1, 4);
  for (int i = 0; i < queues; ++i) {
    core::QueueSpec q;
    q.name = "q" + std::to_string(i);
    if (rng.Chance(70)) q.cohort = rng.Chance(80) ? "c0" : "c1";
    for (const core::ResourceId id : {core::kGpu, core::kCpu}) {
      if (!rng.Chance(id == core::kGpu ? 90 : 40)) continue;
      core::QuotaLine l;
      l.id = id;
      l.nominal = rng.In(0, 8) * (id == core::kCpu ? 2000 : 1);
      if (!q.cohort.empty() && rng.Chance(50)) {
        l.borrowing_limit = rng.In(0, 4) * (id == core::kCpu ? 2000 : 1);
      }
      if (!q.cohort.empty() && rng.Chance(50)) l.lending_limit = rng.In(0, 100) * l.nominal / 100;
      q.quota.push_back(l);
    }
    std::sort(q.quota.begin(), q.quota.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    // Volcano's fields, and weights, for the queue orders that read them.
    q.weight = rng.In(0, 3);
    q.priority = rng.In(0, 1);
    if (rng.Chance(30)) q.capability = {{core::kGpu, rng.In(0, 12)}};
    if (rng.Chance(30)) q.guarantee[core::kGpu] = rng.In(0, 2);
    if (rng.Chance(50)) q.deserved[core::kGpu] = rng.In(0, 8);
    cluster.queues.push_back(q);
  }
  for (auto& j : workload.jobs) {
    const int q = rng.In(0, queues);
    j.queue = q == queues ? "default" : cluster.queues[q].name;
  }
  // Half of those: a tree. c1 under c0 or both under "org"; each cohort
  // with a quota of its own, borrowing and lending limits at random.
  if (!rng.Chance(50)) return;
  const bool deep = rng.Chance(50);
  for (const std::string name : {"c0", "c1"}) {
    core::CohortSpec c;
    c.name = name;
    c.parent = deep && name == "c1" ? "c0" : "org";
    c.weight = rng.In(0, 3);
    for (const core::ResourceId id : {core::kCpu, core::kGpu}) {
      if (!rng.Chance(id == core::kGpu ? 90 : 40)) continue;
      core::QuotaLine l;
      l.id = id;
      l.nominal = rng.In(0, 4) * (id == core::kCpu ? 2000 : 1);
      if (rng.Chance(60)) l.borrowing_limit = rng.In(0, 2) * (id == core::kCpu ? 2000 : 1);
      if (rng.Chance(50)) l.lending_limit = rng.In(0, 100) * l.nominal / 100;
      c.quota.push_back(l);
    }
    cluster.cohorts.push_back(c);
  }
}

// A quarter of the seeds with queues: the nodes get GPU types (v100, k80
// or none) and some queues a per-type GPU line (nvidia.com/gpu@v100,
// nvidia.com/gpu@k80) beside or instead of their GPU line. A generator of
// its own again.
void AddRandomGpuTypes(int seed, core::ClusterSpec& cluster) {
  Rng rng(seed + 2'000'003);
  if (cluster.queues.empty() || !rng.Chance(25)) return;
  constexpr const char* kTypes[] = {"v100", "k80"};
  for (core::NodeSpec& node : cluster.nodes) {
    const int t = rng.In(0, 2);
    if (t < 2) node.labels[std::string(core::kGpuTypeLabel)] = kTypes[t];
  }
  for (core::QueueSpec& q : cluster.queues) {
    if (!rng.Chance(60)) continue;
    if (rng.Chance(50)) {
      std::erase_if(q.quota, [](const core::QuotaLine& l) { return l.id == core::kGpu; });
    }
    for (const char* type : kTypes) {
      if (!rng.Chance(70)) continue;
      core::QuotaLine l;
      l.id = *core::InternResource(std::string("nvidia.com/gpu@") + type);
      l.nominal = rng.In(0, 8);
      if (!q.cohort.empty() && rng.Chance(50)) l.borrowing_limit = rng.In(0, 4);
      if (!q.cohort.empty() && rng.Chance(50)) l.lending_limit = rng.In(0, 100) * l.nominal / 100;
      q.quota.push_back(l);
    }
    std::sort(q.quota.begin(), q.quota.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
  }
}

class PropertyTest : public ::testing::TestWithParam<std::string> {};

constexpr int kSeeds = 400;

TEST_P(PropertyTest, InvariantsHoldAndRunsAreDeterministic) {
  const engine::Engine base = MakeEngine(GetParam());
  const bool gang = !base.profile().admission->UsesPodQueue();
  // With queues, the profile under each queue order in turn.
  std::vector<engine::Engine> with_order;
  for (const std::string_view order : policy::KnownNames(policy::Point::kQueueOrder)) {
    with_order.push_back(MakeEngine(
        GetParam(), [&](config::ProfileSpec& p) { p.queue_order.name = std::string(order); }));
  }
  SimOptions options;
  options.check_invariants = true;
  int completed = 0;
  int quota_bound = 0;  // jobs a queue's quota left waiting at the end
  for (int seed = 0; seed < kSeeds; ++seed) {
    Rng rng(seed);
    core::ClusterSpec cluster = RandomCluster(rng);
    config::WorkloadSpec workload = RandomWorkload(rng);
    AddRandomQueues(seed, cluster, workload);
    AddRandomGpuTypes(seed, cluster);
    const engine::Engine& engine =
        cluster.queues.empty() ? base : with_order[seed % with_order.size()];
    auto r1 = Simulate(cluster, workload, engine, options);
    ASSERT_TRUE(r1.has_value()) << "seed " << seed << ": " << r1.error().message;
    auto r2 = Simulate(cluster, workload, engine, options);
    ASSERT_TRUE(r2.has_value());
    ASSERT_EQ(report::JobsCsv(r1->run), report::JobsCsv(r2->run)) << "seed " << seed;
    for (size_t i = 0; i < workload.jobs.size(); ++i) {
      const metrics::JobRecord& rec = r1->run.jobs[i];
      if (rec.reason.find("queue ") != std::string::npos) ++quota_bound;
      if (rec.final_phase == core::JobPhase::kCompleted) {
        ++completed;
        continue;
      }
      if (!gang) continue;  // per-pod scheduling may deadlock: that is its point
      // Under gang scheduling a job is left unfinished only if it could never
      // start, even alone on the empty cluster.
      const core::JobSpec* spec = nullptr;
      for (const auto& j : workload.jobs) {
        if (j.name == rec.name) spec = &j;
      }
      ASSERT_NE(spec, nullptr);
      EXPECT_FALSE(dlsched::testing::CanEverStart(cluster, *spec, engine))
          << "seed " << seed << ": job " << rec.name << " could start alone but ended "
          << core::PhaseName(rec.final_phase) << " (" << rec.reason << ")";
    }
  }
  // The generator is not degenerate: most jobs do finish, and quotas bind.
  EXPECT_GT(completed, kSeeds * 2);
  EXPECT_GT(quota_bound, 0);
}

// A cohort's borrowing limit binds its whole subtree: org over c0 (no GPUs
// of its own, may borrow none) and c1 (4 GPUs); q0 (0 GPUs) in c0. c1's
// 4 GPUs are lent to org, but c0 may not borrow them: q0's 1-GPU job never
// starts (and its reason says why), while q1 in c1 runs.
TEST(HierarchyTest, ACohortsBorrowingLimitBindsItsQueues) {
  core::ClusterSpec cluster;
  core::NodeSpec n;
  n.name = "n0";
  n.allocatable[core::kCpu] = 32000;
  n.allocatable[core::kMemory] = int64_t{64} << 30;
  n.allocatable[core::kGpu] = 8;
  cluster.nodes.push_back(n);
  auto queue = [](const std::string& name, const std::string& cohort) {
    core::QueueSpec q;
    q.name = name;
    q.cohort = cohort;
    q.quota.push_back(core::QuotaLine{core::kGpu, 0, std::nullopt, std::nullopt});
    return q;
  };
  cluster.queues = {queue("q0", "c0"), queue("q1", "c1")};
  cluster.cohorts = {
      {"c0", "org", 1, {core::QuotaLine{core::kGpu, 0, 0, std::nullopt}}},
      {"c1", "org", 1, {core::QuotaLine{core::kGpu, 4, std::nullopt, std::nullopt}}}};
  Rng rng(7);
  config::WorkloadSpec workload = RandomWorkload(rng);
  workload.jobs.resize(2);
  for (int i = 0; i < 2; ++i) {
    core::JobSpec& j = workload.jobs[i];
    j.queue = i == 0 ? "q0" : "q1";
    j.role(core::Role::kPS).replicas = 0;
    j.role(core::Role::kPS).min_replicas = j.role(core::Role::kPS).max_replicas = 0;
    auto& wk = j.role(core::Role::kWorker);
    wk.replicas = wk.min_replicas = wk.max_replicas = 1;
    wk.resources[core::kGpu] = 1;
    j.max_wait_minutes.reset();
  }
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(cluster, workload, MakeEngine("fifo"), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& q0 = r->run.jobs[workload.jobs[0].queue == "q0" ? 0 : 1];
  const auto& q1 = r->run.jobs[workload.jobs[0].queue == "q0" ? 1 : 0];
  EXPECT_EQ(q1.final_phase, core::JobPhase::kCompleted);
  EXPECT_NE(q0.final_phase, core::JobPhase::kCompleted);
  EXPECT_NE(q0.reason.find("can never hold 1 nvidia.com/gpu: at most 0"), std::string::npos)
      << q0.reason;
}

INSTANTIATE_TEST_SUITE_P(BuiltinProfiles, PropertyTest,
                         ::testing::ValuesIn(dlsched::testing::BuiltinProfileRuns()),
                         [](const auto& info) { return testing::ProfileTestName(info.param); });
INSTANTIATE_TEST_SUITE_P(
    ExampleProfiles, PropertyTest,
    ::testing::ValuesIn(dlsched::testing::ExampleProfileRuns(DLSCHED_SOURCE_DIR)),
    [](const auto& info) { return testing::ProfileTestName(info.param); });

}  // namespace
}  // namespace dlsched::sim
