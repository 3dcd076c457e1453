// The orders of Tiresias' sjf and shortest, on hand-worked keys, and the
// Replan admission's rounds. (Replan is tested on whole runs in
// sim/tiresias_sim_test.cc and sim/pollux_sim_test.cc.)

#include "dlsched/policy/baselines/tiresias/tiresias.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/test_util.h"

namespace dlsched::policy {
namespace {

using engine::JobIndex;
using engine::testing::Job;
using engine::testing::Nodes;

// Makes `state` keep the Tiresias pieces' record of each job.
void KeepLevels(engine::ClusterState& state) {
  state.UseRecordFields({std::begin(LevelRecord::kFields), std::end(LevelRecord::kFields)});
}

// a: 1 PS (no GPU) + 4 workers of 2 GPUs -> 8 GPUs; b: 2 workers of 1 GPU
// -> 2; c: 3 workers of 1 GPU, elastic 1..6, initial size 3 -> 3.
TEST(GpuDemandOrderTest, KeyIsTheGpusAtTheInitialSize) {
  const core::ClusterSpec cluster = Nodes(2, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 0, 1, 4, 4, 4, 2), Job("b", 5, 0, 2, 2, 2),
                                      Job("c", 9, 0, 3, 1, 6)};
  engine::ClusterState state(cluster);
  for (const auto& s : specs) state.AddJob(&s, s.submit_time);
  const std::vector<JobIndex> jobs = {0, 1, 2};
  std::vector<double> keys(3);
  GpuDemandOrder().Keys(state, jobs, 10, keys);
  EXPECT_EQ(keys, (std::vector<double>{8, 2, 3}));
}

// Steps at 1 step/s per worker: a has 1000 steps, 300 done, 2 workers at 2
// steps/s -> 350 s left; b has 1000 steps, none done, 1 worker at 1 step/s
// -> 1000 s. The key ignores where a job runs (no locality factor).
TEST(RemainingTimeOrderTest, KeyIsTheRunningTimeLeftAtTheJobsSize) {
  const core::ClusterSpec cluster = Nodes(2, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 0, 0, 2, 2, 2), Job("b", 5, 0, 1, 1, 1)};
  for (auto& s : specs) s.throughput.steps_per_s = {{1, 1.0}, {2, 2.0}};
  specs[0].throughput.locality_sensitivity = 0.5;
  engine::ClusterState state(cluster);
  for (const auto& s : specs) state.AddJob(&s, s.submit_time);
  state.MutableJob(0).steps_done = 300;
  const std::vector<JobIndex> jobs = {0, 1};
  std::vector<double> keys(2);
  const RemainingTimeOrder order;
  EXPECT_TRUE(order.ReadsProgress());
  order.Keys(state, jobs, 10, keys);
  EXPECT_DOUBLE_EQ(keys[0], 350);
  EXPECT_DOUBLE_EQ(keys[1], 1000);
}

// Thresholds 100 and 300 GPU-s, `queueOrder: entry`. At t = 50: a (2 GPUs
// placed, attained 120, level 0 recorded) should be at level 1, entering
// now: key 1e13 + 2e12 + 50; its next crossing (300) is (300 - 120) / 2 = 90
// s away. b (pending, attained 0, level 0 since its arrival at 5): key 1e12
// + 5. c (pending, arrived now): key 2e12 + 50. So b, c, then a.
TEST(LasOrderTest, LevelsByAttainedServiceAndEntryTime) {
  const core::ClusterSpec cluster = Nodes(2, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 0, 0, 2, 2, 2), Job("b", 5, 0, 1, 1, 1),
                                      Job("c", 50, 0, 1, 1, 1)};
  engine::ClusterState state(cluster);
  KeepLevels(state);
  for (const auto& s : specs) state.AddJob(&s, s.submit_time);
  state.SetPhase(0, core::JobPhase::kRunning, 0);
  state.PlaceTask({0, core::Role::kWorker, 0}, 0);
  state.PlaceTask({0, core::Role::kWorker, 1}, 0);
  state.MutableJob(0).attained = 120;
  for (JobIndex j : {1, 2}) state.SetPhase(j, core::JobPhase::kWaiting, specs[j].submit_time);
  const LasOrder order({100, 300}, 0, LasOrder::QueueOrder::kEntry);
  EXPECT_FALSE(order.KeepsPlaces());
  EXPECT_EQ(order.Level(state, 0, 50), 1);
  EXPECT_EQ(order.Level(state, 1, 50), 0);
  EXPECT_DOUBLE_EQ(order.NextLevelChange(state, 0, 50), 140);
  const std::vector<JobIndex> jobs = {0, 1, 2};
  std::vector<double> keys(3);
  order.Keys(state, jobs, 50, keys);
  EXPECT_DOUBLE_EQ(keys[0], 1e13 + 2e12 + 50);
  EXPECT_DOUBLE_EQ(keys[1], 1e12 + 5);
  EXPECT_DOUBLE_EQ(keys[2], 2e12 + 50);
  // Past the last threshold there is no next change.
  state.MutableJob(0).attained = 400;
  EXPECT_EQ(order.Level(state, 0, 50), 2);
  EXPECT_EQ(order.NextLevelChange(state, 0, 50), core::kNever);
}

// Tiresias' lists (`queueOrder: list`, the default), threshold 100 GPU-s,
// at t = 50, one GPU each. Level 1's list as Tiresias' scheduler left it:
// b was demoted at 10 and stopped in the same pass, so it went behind the
// pending jobs (place 4); d was demoted at 12 and stopped (place 5), then
// started at 45, going behind the running jobs (place 7); a was demoted at
// 20 and kept running, then was stopped at 40 by a job of level 0, which
// put it ahead of every pending job (place -1); c was demoted at 30 and
// kept running (place 6, behind the jobs running then). f (level 0,
// running, 150 GPU-s) is demoted now: it goes to the end of level 1. e
// arrives now (no place) at level 0.
// List order: e; then level 1's running jobs c (6), d (7); its pending ones
// a (-1), b (4); then f entering. By entry time (`queueOrder: entry`) d
// (12) would go before c (30), and b (10) before a (20): a job that kept
// running when it went down stays ahead of one that entered the level
// earlier but waited.
TEST(LasOrderTest, TiresiasListsKeepTheirHistory) {
  const core::ClusterSpec cluster = Nodes(1, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 0, 0, 1, 1, 1),  Job("b", 1, 0, 1, 1, 1),
                                      Job("c", 2, 0, 1, 1, 1),  Job("d", 3, 0, 1, 1, 1),
                                      Job("e", 50, 0, 1, 1, 1), Job("f", 4, 0, 1, 1, 1)};
  engine::ClusterState state(cluster);
  KeepLevels(state);
  for (const auto& s : specs) state.AddJob(&s, s.submit_time);
  // (level, level since, place, running, attained)
  const std::vector<std::tuple<int, double, double, bool, double>> at = {
      {1, 20, -1, false, 120},
      {1, 10, 4, false, 110},
      {1, 30, 6, true, 130},
      {1, 12, 7, true, 140},
      {0, 50, LevelRecord::kNoPlace, false, 0},
      {0, 4, 2, true, 150}};
  for (JobIndex j = 0; j < 6; ++j) {
    const auto& [level, since, place, running, attained] = at[j];
    if (running) {
      state.SetPhase(j, core::JobPhase::kRunning, since);
      state.PlaceTask({j, core::Role::kWorker, 0}, 0);
    } else {
      state.SetPhase(j, core::JobPhase::kWaiting, since);
    }
    state.SetRecord(j, LevelRecord::kLevel, level);
    state.SetRecord(j, LevelRecord::kSince, since);
    state.SetRecord(j, LevelRecord::kPlace, place);
    state.MutableJob(j).attained = attained;
  }
  const std::vector<JobIndex> jobs = {0, 1, 2, 3, 4, 5};
  auto ordered = [&](const LasOrder& order) {
    std::vector<double> keys(jobs.size());
    order.Keys(state, jobs, 50, keys);
    std::vector<std::pair<double, char>> by_key;
    for (size_t i = 0; i < jobs.size(); ++i) {
      by_key.emplace_back(keys[i], static_cast<char>('a' + jobs[i]));
    }
    std::sort(by_key.begin(), by_key.end());
    std::string names;
    for (const auto& [key, name] : by_key) names += name;
    return names;
  };
  const LasOrder list({100}, 0);
  EXPECT_TRUE(list.KeepsPlaces());
  EXPECT_EQ(list.Level(state, 5, 50), 1);
  EXPECT_EQ(ordered(list), "ecdabf");
  EXPECT_EQ(ordered(LasOrder({100}, 0, LasOrder::QueueOrder::kEntry)), "edcbaf");
  // The same with places too large to fold into one key with the level
  // (the keys are then ranks).
  for (JobIndex j = 0; j < 6; ++j) {
    const double place = state.Record(j, LevelRecord::kPlace);
    if (place != LevelRecord::kNoPlace) state.SetRecord(j, LevelRecord::kPlace, place + 1e13);
  }
  EXPECT_EQ(ordered(list), "ecdabf");
}

// Starvation N = 2, thresholds 100 and 300. a (2 GPUs) is pending at level
// 1 with 200 GPU-s attained, first run at 10: it ran 200 / 2 = 100 s, so it
// goes back to level 0 once pending 2 x 100 s after that: at 10 + 100 + 200
// = 310. Promoted before with 150 GPU-s then: it ran 50 / 2 = 25 s since,
// back at 10 + 25 + 50 = 85. Without starvation (N = 0) it stays.
TEST(LasOrderTest, AStarvingJobGoesBackToLevelZero) {
  const core::ClusterSpec cluster = Nodes(2, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 0, 0, 2, 2, 2)};
  engine::ClusterState state(cluster);
  KeepLevels(state);
  state.AddJob(&specs[0], 0);
  state.SetPhase(0, core::JobPhase::kWaiting, 110);
  engine::JobState& a = state.MutableJob(0);
  a.attained = 200;
  state.SetRecord(0, LevelRecord::kLevel, 1);
  state.SetRecord(0, LevelRecord::kRanSince, 10);
  const LasOrder starving({100, 300}, 2);
  EXPECT_EQ(starving.Level(state, 0, 309), 1);
  EXPECT_EQ(starving.NextLevelChange(state, 0, 300), 310);
  EXPECT_EQ(starving.Level(state, 0, 310), 0);
  EXPECT_EQ(starving.NextLevelChange(state, 0, 310), core::kNever);
  state.SetRecord(0, LevelRecord::kBase, 150);
  EXPECT_EQ(starving.Level(state, 0, 84), 1);
  EXPECT_EQ(starving.Level(state, 0, 85), 0);
  state.SetRecord(0, LevelRecord::kBase, 0);
  const LasOrder plain({100, 300}, 0);
  EXPECT_EQ(plain.Level(state, 0, 1e6), 1);
  EXPECT_EQ(plain.NextLevelChange(state, 0, 300), core::kNever);
  // Not after a promotion until it has run again.
  state.SetRecord(0, LevelRecord::kRanSince, core::kNever);
  EXPECT_EQ(starving.Level(state, 0, 1e6), 1);
}

// A promotion survives the job's start in the same cycle. Starvation N =
// 2, thresholds 100 and 300: a (2 GPUs) is pending at level 1 with 250
// GPU-s, first run at 10: it ran 125 s, so it is promoted at 10 + 125 + 250
// = 385. The cycle at 385 places it (the session places its workers; its
// phase stays Waiting): it is still promoted, and its service counts
// afresh, so it next goes down once it has run 100 GPU-s more, 100 / 2 = 50
// s later, at 435 (not when its 250 GPU-s reach 300, at 410). N x ran is
// rounded down, as Tiresias' int(): with N = 0.5 and 251 GPU-s (125.5 s
// run) it is due at 10 + 125.5 + 62 = 197.5, at 198 whole seconds (not 10
// + 125.5 + 62.75 = 198.25, at 199).
TEST(LasOrderTest, APromotionSurvivesTheStartInTheSameCycle) {
  const core::ClusterSpec cluster = Nodes(2, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 0, 0, 2, 2, 2)};
  engine::ClusterState state(cluster);
  KeepLevels(state);
  state.AddJob(&specs[0], 0);
  state.SetPhase(0, core::JobPhase::kWaiting, 300);
  engine::JobState& a = state.MutableJob(0);
  a.attained = 250;
  state.SetRecord(0, LevelRecord::kLevel, 1);
  state.SetRecord(0, LevelRecord::kRanSince, 10);
  a.attained = 251;
  const LasOrder half({100, 300}, 0.5);
  EXPECT_EQ(half.NextLevelChange(state, 0, 100), 198);
  a.attained = 250;
  const LasOrder starving({100, 300}, 2);
  EXPECT_EQ(starving.NextLevelChange(state, 0, 300), 385);
  EXPECT_EQ(starving.Level(state, 0, 385), 0);
  state.PlaceTask({0, core::Role::kWorker, 0}, 0);
  state.PlaceTask({0, core::Role::kWorker, 1}, 0);
  EXPECT_EQ(starving.Level(state, 0, 385), 0);
  EXPECT_EQ(starving.NextLevelChange(state, 0, 385), 435);
}

// Pollux's port (queueOrder strictEntry, countLaunching), threshold 100
// GPU-s, at t = 50.
// a: 2 GPUs running, arrived at 20, 60 GPU-s trained and 40 spent
// launching; b: pending since its arrival at 5.
// - By entry (queueOrder entry): a has 60 < 100: level 0, key 20 (running
//   first); b 1e12 + 5. a goes first.
// - strictEntry: a 20, b 5: b, which entered the queue first, goes first.
// - strictEntry + countLaunching: a has 60 + 40 = 100: level 1 from now, key
//   1e13 + 50; no threshold after it. With 20 trained instead (service 60)
//   it is at level 0 and reaches 100 in (100 - 60) / 2 = 20 s: at 70.
// - A job launching since 45 with 2 GPUs has 2 x 5 = 10 GPU-s at 50.
TEST(LasOrderTest, StrictEntryAndCountingLaunches) {
  const core::ClusterSpec cluster = Nodes(2, 64, 256, 8);
  std::vector<core::JobSpec> specs = {Job("a", 20, 0, 2, 2, 2), Job("b", 5, 0, 1, 1, 1),
                                      Job("c", 0, 0, 2, 2, 2)};
  engine::ClusterState state(cluster);
  KeepLevels(state);
  for (const auto& s : specs) state.AddJob(&s, s.submit_time);
  state.SetPhase(0, core::JobPhase::kRunning, 20);
  state.PlaceTask({0, core::Role::kWorker, 0}, 0);
  state.PlaceTask({0, core::Role::kWorker, 1}, 0);
  state.MutableJob(0).attained = 60;
  state.MutableJob(0).launch_attained = 40;
  state.SetPhase(1, core::JobPhase::kWaiting, 5);
  const std::vector<JobIndex> jobs = {0, 1};
  std::vector<double> keys(2);

  const LasOrder plain({100}, 0, LasOrder::QueueOrder::kEntry);
  EXPECT_EQ(plain.Level(state, 0, 50), 0);
  plain.Keys(state, jobs, 50, keys);
  EXPECT_LT(keys[0], keys[1]);

  const LasOrder by_entry({100}, 0, LasOrder::QueueOrder::kStrictEntry, false);
  EXPECT_EQ(by_entry.Level(state, 0, 50), 0);
  by_entry.Keys(state, jobs, 50, keys);
  EXPECT_EQ(keys, (std::vector<double>{20, 5}));

  const LasOrder pollux({100}, 0, LasOrder::QueueOrder::kStrictEntry, true);
  EXPECT_EQ(pollux.Level(state, 0, 50), 1);
  EXPECT_EQ(pollux.NextLevelChange(state, 0, 50), core::kNever);
  pollux.Keys(state, jobs, 50, keys);
  EXPECT_EQ(keys, (std::vector<double>{1e13 + 50, 5}));
  state.MutableJob(0).attained = 20;
  EXPECT_EQ(pollux.Level(state, 0, 50), 0);
  EXPECT_DOUBLE_EQ(pollux.NextLevelChange(state, 0, 50), 70);

  state.SetPhase(2, core::JobPhase::kLaunching, 45);
  state.PlaceTask({2, core::Role::kWorker, 0}, 1);
  state.PlaceTask({2, core::Role::kWorker, 1}, 1);
  EXPECT_DOUBLE_EQ(pollux.NextLevelChange(state, 2, 50), 50 + 45);  // (100 - 10) / 2
}

// Replan with interval 60 (pollux-tiresias) on one node of 4 GPUs; x (2
// GPUs) has been waiting since 107. A cycle at 107 decides nothing: x is
// told the next round (120), and the plan asks for a cycle then. At 110
// nothing is said (x keeps its verdict). At 120, and at 120.4 (within half
// a second of it), x starts; at 120.6 it does not, and 180 is asked for.
// A job waiting at 30 waits for the first round, at 60 (none at 0).
TEST(ReplanAdmissionTest, DecidesOnlyInRounds) {
  const engine::Engine engine(
      testing::MakeProfile("name: p\nadmission: {name: Replan, args: {interval: 60}}\n"
                           "order: {name: Las, args: {thresholds: [57600], queueOrder: "
                           "strictEntry, countLaunching: true}}\n"));
  const core::ClusterSpec cluster = Nodes(1, 64, 256, 4);
  const core::JobSpec x = Job("x", 107, 0, 2, 2, 2);
  auto verdicts = [&](core::Time waiting_since, core::Time now) {
    engine::ClusterState state(cluster);
    state.AddJob(&x, x.submit_time);
    state.SetPhase(0, core::JobPhase::kWaiting, waiting_since);
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(state, pods, memos, now);
    std::vector<std::string> out;
    for (const auto& a : plan.actions) {
      if (a.kind == engine::ActionKind::kStart) out.push_back("start");
      if (a.kind == engine::ActionKind::kWait) out.push_back(a.reason);
    }
    out.push_back(fmt::format("revisit {:g}", plan.revisit_at));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(verdicts(107, 107),
            (V{"waiting: decisions are made every 60s, next at 120s", "revisit 120"}));
  EXPECT_EQ(verdicts(107, 110), (V{"revisit 120"}));
  // (The next change of level: x's 57,600 GPU-s, 28,800 s of running away.)
  EXPECT_EQ(verdicts(107, 120), (V{"start", "revisit 28920"}));
  EXPECT_EQ(verdicts(107, 120.4), (V{"start", "revisit 28980"}));
  EXPECT_EQ(verdicts(107, 120.6), (V{"revisit 180"}));
  EXPECT_EQ(verdicts(30, 30),
            (V{"waiting: decisions are made every 60s, next at 60s", "revisit 60"}));
}

TEST(ReplanAdmissionTest, ArgumentsAreChecked) {
  for (const auto& [yaml, error] : std::vector<std::pair<std::string, std::string>>{
           {"admission: {name: Replan, args: {interval: 0.5}}",
            "p.yaml: admission.args.interval: expected 0 (decide in every cycle) or at least 1 "
            "second, got 0.5"},
           {"admission: Replan\norder: {name: Las, args: {countLaunching: true, starvation: 2}}",
            "p.yaml: order.args.starvation: not with countLaunching (a promotion restarts the "
            "count of the GPU-seconds run, not of those spent launching)"}}) {
    auto spec = config::ParseProfile("name: p\n" + yaml + "\n", "p.yaml");
    ASSERT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    ASSERT_FALSE(built.has_value()) << yaml;
    EXPECT_EQ(built.error().message, error);
  }
}

}  // namespace
}  // namespace dlsched::policy
