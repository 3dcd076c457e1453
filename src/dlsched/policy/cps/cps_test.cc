#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/baselines/volcano/order_priority.h"
#include "dlsched/policy/cps/cps_test_util.h"
#include "dlsched/policy/cps/order_cps.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::policy {
namespace {

using testing::AddCpsUserWeights;
using testing::CpsGroupJobs;
using testing::CpsScenarioJobs;

// The defaults (high 10, normal 5, low 1) and the paper's experiment
// (100, 50, 1), both with namespace "u<n>" weighing n.
CpsParams Defaults() {
  CpsParams p;
  AddCpsUserWeights(&p);
  return p;
}
CpsParams Paper() {
  CpsParams p = Defaults();
  p.priority_values[static_cast<int>(core::PriorityClass::kHigh)] = 100;
  p.priority_values[static_cast<int>(core::PriorityClass::kNormal)] = 50;
  return p;
}

std::vector<CpsTerms> Terms(const std::vector<core::JobSpec>& jobs, const CpsParams& p) {
  std::vector<const core::JobSpec*> ptrs;
  for (const auto& j : jobs) ptrs.push_back(&j);
  return CombinedPriorities(ptrs, p);
}

std::vector<double> Values(const std::vector<CpsTerms>& terms) {
  std::vector<double> v;
  for (const auto& t : terms) v.push_back(t.v);
  return v;
}

void ExpectValues(const std::vector<CpsTerms>& terms, const std::vector<double>& want) {
  ASSERT_EQ(terms.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(terms[i].v, want[i], 1e-12) << "job" << i + 1;
  }
}

// Serves `jobs` (all Waiting) through the engine's OrderJobs with `order`,
// the path Gang admission takes; returns the job names in serving order.
std::vector<std::string> Served(const std::vector<core::JobSpec>& jobs,
                                std::unique_ptr<engine::JobOrder> order) {
  core::ClusterSpec cluster = testing::CpsGroupCluster();
  engine::ClusterState state(cluster);
  for (const auto& j : jobs) {
    const engine::JobIndex idx = state.AddJob(&j, j.submit_time);
    state.SetPhase(idx, core::JobPhase::kWaiting, 0);
  }
  engine::Profile profile;
  profile.order = std::move(order);
  engine::Session session(state);
  engine::CycleState plan;
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 0};
  std::vector<engine::JobIndex> pending;
  state.PendingJobs(&pending);
  engine::OrderJobs(ctx, &pending);
  std::vector<std::string> names;
  for (engine::JobIndex j : pending) names.push_back(state.Job(j).spec->name);
  return names;
}

std::vector<std::string> CpsOrder(const std::vector<core::JobSpec>& jobs, const CpsParams& p) {
  return Served(jobs, std::make_unique<CombinedPriorityOrder>(p));
}
std::vector<std::string> PriorityClassOrder(const std::vector<core::JobSpec>& jobs) {
  return Served(jobs, std::make_unique<PriorityOrder>());
}

using Names = std::vector<std::string>;

TEST(CpsTest, TimeConstraintPriority) {
  // l = ceil(100 / L) for L in [1, 60].
  EXPECT_EQ(TimeConstraintPriority(1), 100);
  EXPECT_EQ(TimeConstraintPriority(20), 5);
  EXPECT_EQ(TimeConstraintPriority(30), 4);  // 3.33 -> 4
  EXPECT_EQ(TimeConstraintPriority(40), 3);  // 2.5 -> 3
  EXPECT_EQ(TimeConstraintPriority(50), 2);
  EXPECT_EQ(TimeConstraintPriority(60), 2);     // 1.67 -> 2: the smallest l with a limit
  EXPECT_EQ(TimeConstraintPriority(3), 34);     // 33.3 -> 34
  EXPECT_EQ(TimeConstraintPriority(0.5), 100);  // below a minute counts as 1
  EXPECT_EQ(TimeConstraintPriority(60.5), 1);   // beyond the horizon
  EXPECT_EQ(TimeConstraintPriority(std::nullopt), 1);
}

// S1 (rows 1, 4, 5, 7): only the priority class differs.
//   u = 5, m = 6, L = 20 -> l = 5 for every job.
//   defaults: b = 5 5 10 10 1 -> e = 15 15 20 20 11; e range 11..20:
//             e_norm = 4/9 4/9 1 1 0; m_norm = 0 (all equal).
//             V = 0.444 0.444 1 1 0.
//   paper:    b = 50 50 100 100 1 -> e = 60 60 110 110 11; range 11..110:
//             e_norm = 49/99 49/99 1 1 0; V = 0.495 0.495 1 1 0.
//   Order (ties by submit time, then listing): job3 job4 job1 job2 job5.
//   Volcano's priority order gives the same: high 3 4, normal 1 2, low 5.
TEST(CpsTest, ScenarioS1JobPriority) {
  const auto jobs = CpsScenarioJobs(1);
  const auto d = Terms(jobs, Defaults());
  EXPECT_EQ(d[0].e, 15);
  EXPECT_EQ(d[2].e, 20);
  EXPECT_EQ(d[4].e, 11);
  ExpectValues(d, {4.0 / 9, 4.0 / 9, 1, 1, 0});
  ExpectValues(Terms(jobs, Paper()), {49.0 / 99, 49.0 / 99, 1, 1, 0});
  const Names want = {"job3", "job4", "job1", "job2", "job5"};
  EXPECT_EQ(CpsOrder(jobs, Defaults()), want);
  EXPECT_EQ(CpsOrder(jobs, Paper()), want);
  EXPECT_EQ(PriorityClassOrder(jobs), want);
}

// S2 (rows 1, 3, 5, 8): only the maximum wait differs.
//   u = 5, b = 5 (paper 50), m = 6; L = 20 30 40 50 60 -> l = 5 4 3 2 2.
//   defaults e = 15 14 13 12 12, paper e = 60 59 58 57 57: the same spread,
//   so e_norm = (e - min) / 3 = 1 2/3 1/3 0 0 and V = 1 0.667 0.333 0 0 for
//   both. Order job1 .. job5 (job4 and job5 tie at 0: listing order).
TEST(CpsTest, ScenarioS2MaxWait) {
  const auto jobs = CpsScenarioJobs(2);
  const auto d = Terms(jobs, Defaults());
  EXPECT_EQ(d[1].l, 4);
  EXPECT_EQ(d[2].l, 3);
  EXPECT_EQ(d[4].l, 2);
  ExpectValues(d, {1, 2.0 / 3, 1.0 / 3, 0, 0});
  ExpectValues(Terms(jobs, Paper()), {1, 2.0 / 3, 1.0 / 3, 0, 0});
  EXPECT_EQ(CpsOrder(jobs, Defaults()), (Names{"job1", "job2", "job3", "job4", "job5"}));
}

// S3 (rows 1, 3, 6, 7): only parallelism differs.
//   e = 5 + 5 + 5 = 15 for all (paper 60): e_norm = 0.
//   m = 8 6 4 3 2, range 2..8: m_norm = V = 1 2/3 1/3 1/6 0 (both value sets).
//   Order job1 .. job5: the most parallel job first.
TEST(CpsTest, ScenarioS3Parallelism) {
  const auto jobs = CpsScenarioJobs(3);
  const auto d = Terms(jobs, Defaults());
  EXPECT_EQ(d[0].m, 8);
  EXPECT_DOUBLE_EQ(d[0].e_norm, 0);
  ExpectValues(d, {1, 4.0 / 6, 2.0 / 6, 1.0 / 6, 0});
  ExpectValues(Terms(jobs, Paper()), {1, 4.0 / 6, 2.0 / 6, 1.0 / 6, 0});
  EXPECT_EQ(CpsOrder(jobs, Defaults()), (Names{"job1", "job2", "job3", "job4", "job5"}));
}

// S4 (rows 2, 3, 6, 7): user priority and parallelism both fall from job1
// to job5.
//   u = 9 7 5 3 1, b = 5, l = 5: e = 19 17 15 13 11 (paper 64 62 60 58 56),
//   e_norm = 1 0.75 0.5 0.25 0; m_norm = 1 2/3 1/3 1/6 0 as in S3.
//   V = 2 1.417 0.833 0.417 0 for both. Order job1 .. job5.
TEST(CpsTest, ScenarioS4UserPriority) {
  const auto jobs = CpsScenarioJobs(4);
  const auto d = Terms(jobs, Defaults());
  EXPECT_EQ(d[0].u, 9);
  EXPECT_EQ(d[4].u, 1);
  ExpectValues(d, {2, 0.75 + 4.0 / 6, 0.5 + 2.0 / 6, 0.25 + 1.0 / 6, 0});
  ExpectValues(Terms(jobs, Paper()), {2, 0.75 + 4.0 / 6, 0.5 + 2.0 / 6, 0.25 + 1.0 / 6, 0});
  EXPECT_EQ(CpsOrder(jobs, Defaults()), (Names{"job1", "job2", "job3", "job4", "job5"}));
}

// Group-scheduling case: user 1 3 5 7 9, priority high high normal normal
// low, max wait 60 50 40 30 20 -> l = 2 2 3 4 5; workers 4 4 4 4 6.
//   defaults: b = 10 10 5 5 1, e = 13 15 13 16 15, range 13..16:
//             e_norm = 0 2/3 0 1 2/3; m_norm = 0 0 0 0 1;
//             V = 0 0.667 0 1 1.667 -> job5 job4 job2 job1 job3.
//   paper:    b = 100 100 50 50 1, e = 103 105 58 61 15, range 15..105:
//             e_norm = 88/90 1 43/90 46/90 0; V = 0.978 1 0.478 0.511 1.
//             job2 and job5 tie at exactly 1 and submit order decides:
//             job2 job5 job1 job4 job3. With the paper's values job 5 is
//             first only if it was submitted before job 2.
//   Volcano's priority order: job1 job2 (high) job3 job4 (normal) job5.
TEST(CpsTest, GroupSchedulingCase) {
  const auto jobs = CpsGroupJobs();
  const auto d = Terms(jobs, Defaults());
  const std::vector<int64_t> e = {13, 15, 13, 16, 15};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(d[i].e, e[i]) << "job" << i + 1;
  EXPECT_DOUBLE_EQ(d[4].m_norm, 1);
  EXPECT_DOUBLE_EQ(d[3].e_norm, 1);
  ExpectValues(d, {0, 2.0 / 3, 0, 1, 5.0 / 3});
  EXPECT_EQ(CpsOrder(jobs, Defaults()), (Names{"job5", "job4", "job2", "job1", "job3"}));

  const auto p = Terms(jobs, Paper());
  const std::vector<int64_t> pe = {103, 105, 58, 61, 15};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(p[i].e, pe[i]) << "job" << i + 1;
  ExpectValues(p, {88.0 / 90, 1, 43.0 / 90, 46.0 / 90, 1});
  EXPECT_EQ(p[1].v, p[4].v);  // an exact tie, not a rounding accident
  EXPECT_EQ(CpsOrder(jobs, Paper()), (Names{"job2", "job5", "job1", "job4", "job3"}));

  EXPECT_EQ(PriorityClassOrder(jobs), (Names{"job1", "job2", "job3", "job4", "job5"}));
}

// Normalisation is over the jobs being ordered: once job5 has started, the
// four left are compared among themselves. e = 13 15 13 16 (range 13..16),
// m = 4 for all (m_norm 0): V = 0 2/3 0 1 -> job4 job2 job1 job3.
TEST(CpsTest, NormalisedOverTheWaitingSetOnly) {
  auto jobs = CpsGroupJobs();
  jobs.pop_back();
  ExpectValues(Terms(jobs, Defaults()), {0, 2.0 / 3, 0, 1});
  EXPECT_EQ(CpsOrder(jobs, Defaults()), (Names{"job4", "job2", "job1", "job3"}));
  // One job alone: every term normalises to 0.
  jobs.resize(1);
  EXPECT_EQ(Values(Terms(jobs, Defaults())), std::vector<double>{0});
}

// k scales V and nothing else; unlisted namespaces get defaultUserPriority.
TEST(CpsTest, KScalesAndDefaultUserPriority) {
  const auto jobs = CpsGroupJobs();
  CpsParams p = Defaults();
  p.k = 3;
  ExpectValues(Terms(jobs, p), {0, 2, 0, 3, 5});
  EXPECT_EQ(CpsOrder(jobs, p), (Names{"job5", "job4", "job2", "job1", "job3"}));
  CpsParams none;  // no namespace weights: u = 5 for all
  const auto t = Terms(jobs, none);
  EXPECT_EQ(t[0].u, 5);
  EXPECT_EQ(t[0].e, 5 + 10 + 2);
}

// --- Arguments ------------------------------------------------------------

std::string BuildError(const std::string& yaml) {
  auto spec = config::ParseProfile(yaml, "p.yaml");
  if (!spec) return "parse: " + spec.error().message;
  auto built = BuildProfile(*spec);
  return built ? "" : built.error().message;
}

TEST(CpsArgsTest, ParsesEveryArgument) {
  auto order = MakeCombinedPriority(
      YAML::Load("{k: 2, defaultUserPriority: 3, namespaceWeights: {team-a: 9, team-b: 1}, "
                 "priorityValues: {high: 100, normal: 50}}"),
      "p.yaml: order.args");
  ASSERT_TRUE(order) << order.error().message;
  const CpsParams& p = static_cast<const CombinedPriorityOrder&>(**order).params();
  EXPECT_EQ(p.k, 2);
  EXPECT_EQ(p.default_user_priority, 3);
  EXPECT_EQ(p.namespace_weights.at("team-a"), 9);
  EXPECT_EQ(p.namespace_weights.at("team-b"), 1);
  EXPECT_EQ(p.priority_values[static_cast<int>(core::PriorityClass::kHigh)], 100);
  EXPECT_EQ(p.priority_values[static_cast<int>(core::PriorityClass::kNormal)], 50);
  EXPECT_EQ(p.priority_values[static_cast<int>(core::PriorityClass::kLow)], 1);  // default
}

TEST(CpsArgsTest, ErrorsNameTheField) {
  const std::string head = "name: p\norder:\n  name: CombinedPriority\n  args: ";
  EXPECT_EQ(BuildError(head + "{priorityValues: {high: lots}}\n"),
            "p.yaml: order.args.priorityValues.high: expected an integer in 0..1000000, got "
            "'lots'");
  EXPECT_EQ(BuildError(head + "{priorityValues: {urgent: 3}}\n"),
            "p.yaml: order.args.priorityValues.urgent: unknown argument (expected one of: high, "
            "normal, low)");
  EXPECT_EQ(BuildError(head + "{priorityValues: [1, 2]}\n"),
            "p.yaml: order.args.priorityValues: expected a map {high, normal, low} of integers in "
            "0..1000000");
  EXPECT_EQ(BuildError(head + "{namespaceWeights: {team-a: 11}}\n"),
            "p.yaml: order.args.namespaceWeights.team-a: expected an integer in 1..10, got '11'");
  EXPECT_EQ(BuildError(head + "{namespaceWeights: 3}\n"),
            "p.yaml: order.args.namespaceWeights: expected a map of namespace: weight (an "
            "integer in 1..10)");
  EXPECT_EQ(BuildError(head + "{k: 0}\n"),
            "p.yaml: order.args.k: expected a number in 1e-09..1000000000, got '0'");
  EXPECT_EQ(BuildError(head + "{defaultUserPriority: 0}\n"),
            "p.yaml: order.args.defaultUserPriority: expected an integer in 1..10, got '0'");
  EXPECT_EQ(BuildError(head + "{kappa: 1}\n"),
            "p.yaml: order.args.kappa: unknown argument (expected one of: k, defaultUserPriority, "
            "namespaceWeights, priorityValues)");
  EXPECT_EQ(BuildError("name: p\norder: {name: Priority, args: {x: 1}}\n"),
            "p.yaml: order.args.x: this plugin takes no arguments");
}

}  // namespace
}  // namespace dlsched::policy
