// Contract tests shared by every implementation of an extension point, as
// Mesos runs one suite over all its sorters. Implementations are enumerated
// from the registry, so a new policy is covered the day it is registered
// (DLSCHED_REGISTER_UNIT), each in a profile with the pieces its unit
// requires (plugins.h, Requirement); kArgs supplies arguments to those that
// cannot be built without any.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <tuple>

#include "dlsched/engine/engine.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/framework/registry.h"
#include "policy/profiles.h"

namespace dlsched::policy {
namespace {

using engine::ClusterState;
using engine::JobIndex;

// Arguments for implementations that cannot be built without any.
const std::map<std::string, std::string>& kArgs() {
  static const auto* m = new std::map<std::string, std::string>{
      {"StaticPartition", "{slotGpus: 2}"},
      {"RequestedToCapacityRatio",
       "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}"},
  };
  return *m;
}

std::string PluginYaml(std::string_view name) {
  auto it = kArgs().find(std::string(name));
  return fmt::format("{{name: {}, args: {}}}", name, it == kArgs().end() ? "{}" : it->second);
}

// A profile with the defaults (gang FIFO, task by task, LeastAllocated, no
// preemption, fixed sizes) except `key`, set to implementation `name`, and
// the pieces `name` cannot work without: for each rule of its unit on
// another point, the first piece the rule allows there.
engine::Profile ProfileWith(const std::string& key, std::string_view name) {
  std::string yaml = "name: contract\nprotectFactor: 0\n";
  static const PluginTable* table = new PluginTable(BuildTable(RegisteredUnits()).value());
  std::map<std::string_view, std::string_view> needs;
  for (const Requirement& r : table->requirements) {
    if (r.point == key && r.name == name) needs.emplace(r.other, r.allowed.front());
  }
  for (const auto& [point, piece] : needs) yaml += fmt::format("{}: {}\n", point, piece);
  if (key == "scorers") {
    yaml += "scorers: [" + PluginYaml(name) + "]\n";
  } else {
    yaml += key + ": " + PluginYaml(name) + "\n";
  }
  auto spec = config::ParseProfile(yaml, "contract.yaml");
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  auto built = BuildProfile(*spec);
  EXPECT_TRUE(built.has_value()) << name << ": " << built.error().message;
  return std::move(*built);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int In(int lo, int hi) { return lo + static_cast<int>(gen_() % uint64_t(hi - lo + 1)); }

 private:
  std::mt19937_64 gen_;
};

// A random cluster with some jobs running (placed by a gang cycle) and more
// pending, in realistic phases.
struct World {
  core::ClusterSpec cluster;
  std::deque<core::JobSpec> specs;
  std::unique_ptr<ClusterState> state;
};

// Two or three queues in one cohort or none, with GPU quotas, limits and
// Volcano's fields, drawn apart so a world's other draws stay.
void AddQueues(uint64_t seed, core::ClusterSpec& cluster) {
  Rng rng(seed + 2000003);
  const int n = rng.In(2, 3);
  for (int i = 0; i < n; ++i) {
    core::QueueSpec q;
    q.name = "q" + std::to_string(i);
    if (rng.In(0, 3) > 0) q.cohort = "c";
    q.weight = rng.In(0, 4);
    q.priority = rng.In(0, 2);
    core::QuotaLine l;
    l.id = core::kGpu;
    l.nominal = rng.In(0, 8);
    if (!q.cohort.empty() && rng.In(0, 1)) l.borrowing_limit = rng.In(0, 4);
    if (!q.cohort.empty() && rng.In(0, 1)) l.lending_limit = rng.In(0, static_cast<int>(l.nominal));
    q.quota.push_back(l);
    if (rng.In(0, 2) == 0) q.capability = {{core::kGpu, rng.In(0, 12)}};
    if (rng.In(0, 2) == 0) q.guarantee[core::kGpu] = rng.In(0, 2);
    if (rng.In(0, 1)) q.deserved[core::kGpu] = rng.In(0, 6);
    cluster.queues.push_back(q);
  }
}

std::unique_ptr<World> MakeWorld(uint64_t seed, bool queues = false) {
  Rng rng(seed);
  auto w = std::make_unique<World>();
  w->cluster = engine::testing::Nodes(rng.In(1, 6), rng.In(4, 32), rng.In(16, 128), rng.In(0, 8));
  if (queues) AddQueues(seed, w->cluster);
  // Switches of two nodes each, the last node of an odd count under none
  // (no draw: the other draws stay).
  for (size_t n = 0; n < w->cluster.nodes.size(); ++n) {
    if ((n | 1) >= w->cluster.nodes.size()) continue;
    w->cluster.nodes[n].labels[std::string(core::kSwitchLabel)] = "s" + std::to_string(n / 2);
  }
  w->state = std::make_unique<ClusterState>(w->cluster);
  const int jobs = rng.In(2, 14);
  const char* ns[] = {"a", "b"};
  // Deadlines for half of the jobs, drawn apart so the other draws stay.
  Rng deadlines(seed + 1000003);
  for (int i = 0; i < jobs; ++i) {
    const int min = rng.In(1, 3);
    core::JobSpec spec =
        engine::testing::Job("j" + std::to_string(i), rng.In(0, 50), rng.In(0, 2),
                             min + rng.In(0, 2), min, min + rng.In(2, 5), rng.In(0, 2));
    spec.namespace_name = ns[rng.In(0, 1)];
    spec.priority = static_cast<core::PriorityClass>(rng.In(0, 2));
    if (rng.In(0, 1)) spec.max_wait_minutes = rng.In(1, 90);
    if (deadlines.In(0, 1)) spec.deadline = deadlines.In(60, 3600);
    for (int n = 1; n <= spec.role(core::Role::kWorker).max_replicas; ++n) {
      spec.throughput.steps_per_s[n] = 1.0 + 0.5 * n * rng.In(0, 2);
    }
    if (queues) spec.queue = "q" + std::to_string(deadlines.In(0, 3));  // q3: none
    w->specs.push_back(std::move(spec));
    const JobIndex j = w->state->AddJob(&w->specs.back(), w->specs.back().submit_time);
    w->state->SetPhase(j, core::JobPhase::kWaiting, w->specs.back().submit_time);
  }
  // Start what fits, as a backend would after a gang-binpack cycle.
  const engine::Engine engine = dlsched::testing::MakeEngine("gang-binpack");
  engine::PodQueue pods;
  engine::Memos memos;
  const engine::Plan plan = engine.Cycle(*w->state, pods, memos, 60);
  engine::ApplyPlacements(*w->state, plan);
  for (const auto& a : plan.actions) {
    if (a.kind == engine::ActionKind::kStart && rng.In(0, 3) > 0) {
      w->state->MutableJob(a.task.job).target_workers = a.workers;
      w->state->SetPhase(a.task.job, core::JobPhase::kLaunching, 60);
      w->state->SetPhase(a.task.job, core::JobPhase::kRunning, 60);
    } else if (a.kind == engine::ActionKind::kStart) {
      // Leave some placed jobs in a frozen phase.
      w->state->SetPhase(a.task.job, core::JobPhase::kLaunching, 60);
    }
  }
  return w;
}

constexpr int kWorlds = 150;

std::vector<std::string> Names(Point p) {
  std::vector<std::string> out;
  for (auto n : KnownNames(p)) out.emplace_back(n);
  return out;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// --- JobOrder: finite, deterministic keys; the order does not depend on the
// order in which jobs are presented (a strict weak order on the job set).
class JobOrderContract : public ::testing::TestWithParam<std::string> {};

TEST_P(JobOrderContract, KeysAreFiniteDeterministicAndOrderIndependent) {
  const engine::Profile profile = ProfileWith("order", GetParam());
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    std::vector<JobIndex> pending;
    w->state->PendingJobs(&pending);
    if (pending.empty()) continue;
    std::vector<double> k1(pending.size()), k2(pending.size());
    profile.order->Keys(*w->state, pending, 500, k1);
    profile.order->Keys(*w->state, pending, 500, k2);
    for (size_t i = 0; i < k1.size(); ++i) {
      ASSERT_TRUE(std::isfinite(k1[i])) << "seed " << seed;
      ASSERT_EQ(k1[i], k2[i]) << "seed " << seed;
    }
    engine::CycleState plan;
    engine::Session session(*w->state);
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 500, 0, -1, nullptr};
    std::vector<JobIndex> forward = pending;
    std::vector<JobIndex> backward(pending.rbegin(), pending.rend());
    engine::OrderJobs(ctx, &forward);
    engine::OrderJobs(ctx, &backward);
    ASSERT_EQ(forward, backward) << "seed " << seed;
  }
}

// An order with static keys keeps its keys as time passes, and never
// starves a job: admission passes over the jobs of its kept queue that
// stand behind a blocked one without asking (AdmitInOrder).
TEST_P(JobOrderContract, StaticKeysStayAndNeverStarve) {
  const engine::Profile profile = ProfileWith("order", GetParam());
  if (!profile.order->StaticKeys()) return;  // nothing promised
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    std::vector<JobIndex> pending;
    w->state->PendingJobs(&pending);
    std::vector<double> now(pending.size()), later(pending.size());
    profile.order->Keys(*w->state, pending, 500, now);
    profile.order->Keys(*w->state, pending, 1e8, later);
    ASSERT_EQ(now, later) << "seed " << seed;
    for (JobIndex j : pending) ASSERT_FALSE(profile.order->IsStarving(*w->state, j, 1e8));
  }
}

INSTANTIATE_TEST_SUITE_P(All, JobOrderContract, ::testing::ValuesIn(Names(Point::kOrder)),
                         TestName);

// --- NodeScorer: 0..100 on every feasible node, deterministic.
class NodeScorerContract : public ::testing::TestWithParam<std::string> {};

TEST_P(NodeScorerContract, ScoresAreWithinZeroAndHundred) {
  const engine::Profile profile = ProfileWith("scorers", GetParam());
  ASSERT_EQ(profile.scorers.size(), 1u);
  const engine::NodeScorer& scorer = *profile.scorers[0];
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    std::vector<JobIndex> pending;
    w->state->PendingJobs(&pending);
    std::vector<engine::TaskRef> slots;
    for (JobIndex j : pending) {
      engine::GangSlots(*w->state, j, w->state->Job(j).target_workers, &slots);
      for (const auto& t : slots) {
        for (engine::NodeIndex n = 0; n < w->state->NumNodes(); ++n) {
          if (!w->state->Request(t).FitsIn(w->state->Free(n))) continue;
          const int64_t s = scorer.Score(*w->state, t, n);
          ASSERT_GE(s, 0) << "seed " << seed;
          ASSERT_LE(s, 100) << "seed " << seed;
          ASSERT_EQ(s, scorer.Score(*w->state, t, n));
        }
      }
    }
  }
}

// A scorer that says it is node-local (NodeLocal) gives a node the score
// the engine keeps for it (engine::SelectNode): the same for every task of
// one kind (a role without node constraints asking the same resources, of
// any job), and the same while tasks, of the task's own job or another,
// come and go on the other nodes.
TEST_P(NodeScorerContract, NodeLocalScoresDependOnTheNodeAndTheKindOfTask) {
  const engine::Profile profile = ProfileWith("scorers", GetParam());
  const engine::NodeScorer& scorer = *profile.scorers[0];
  if (!scorer.NodeLocal()) return;  // nothing promised
  int compared = 0;
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    ClusterState& st = *w->state;
    std::vector<JobIndex> pending;
    st.PendingJobs(&pending);
    std::vector<engine::TaskRef> tasks, slots;  // every pending job's, in order
    for (JobIndex j : pending) {
      engine::GangSlots(st, j, st.Job(j).target_workers, &slots);
      tasks.insert(tasks.end(), slots.begin(), slots.end());
    }
    const auto fits = [&](engine::TaskRef t, engine::NodeIndex n) {
      return st.Request(t).FitsIn(st.Free(n));
    };
    const auto kind_of = [&](engine::TaskRef t) {
      const bool free = st.Job(t.job).spec->role(t.role).constraints.Empty();
      return std::tuple(free, st.Request(t), st.ScoringRequest(t));
    };
    for (size_t a = 0; a < tasks.size(); ++a) {
      for (size_t b = 0; b < a; ++b) {
        if (tasks[a].job == tasks[b].job || !std::get<0>(kind_of(tasks[a])) ||
            kind_of(tasks[a]) != kind_of(tasks[b])) {
          continue;
        }
        for (engine::NodeIndex n = 0; n < st.NumNodes(); ++n) {
          if (!fits(tasks[a], n)) continue;
          ASSERT_EQ(scorer.Score(st, tasks[a], n), scorer.Score(st, tasks[b], n))
              << "seed " << seed << " node " << n;
          ++compared;
        }
        break;
      }
    }
    // Place tasks[1..3] one after another (tasks[1] and tasks[2] are of
    // t's job if it has three), each on another node than the one before.
    if (tasks.empty()) continue;
    const engine::TaskRef t = tasks[0];
    engine::Session session(st);
    engine::NodeIndex last = engine::kNoNode;
    for (size_t k = 1; k < tasks.size() && k < 4; ++k) {
      const engine::TaskRef u = tasks[k];
      engine::NodeIndex m = engine::kNoNode;
      for (engine::NodeIndex n = 0; n < st.NumNodes(); ++n) {
        if (fits(u, n) && (m == engine::kNoNode || m == last)) m = n;
      }
      if (m == engine::kNoNode) continue;
      std::vector<int64_t> before(st.NumNodes(), -1);
      for (engine::NodeIndex n = 0; n < st.NumNodes(); ++n) {
        if (fits(t, n)) before[n] = scorer.Score(st, t, n);
      }
      session.Assign(u, m);
      for (engine::NodeIndex n = 0; n < st.NumNodes(); ++n) {
        if (n == m || before[n] < 0 || !fits(t, n)) continue;
        ASSERT_EQ(scorer.Score(st, t, n), before[n]) << "seed " << seed << " node " << n;
        ++compared;
      }
      last = m;
    }
    session.RollbackTo(0);
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(All, NodeScorerContract, ::testing::ValuesIn(Names(Point::kScorer)),
                         TestName);

// --- Packer: all or nothing.
class PackerContract : public ::testing::TestWithParam<std::string> {};

TEST_P(PackerContract, PlacesTheWholeGangOrNothing) {
  const engine::Profile profile = ProfileWith("packer", GetParam());
  int placed = 0, refused = 0;
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    std::vector<JobIndex> pending;
    w->state->PendingJobs(&pending);
    for (JobIndex j : pending) {
      const auto before = engine::testing::Take(*w->state);
      engine::CycleState plan;
      engine::Session session(*w->state);
      engine::PodQueue pods_ctx;
      engine::Memos memos_ctx;
      engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 500, 0, -1, nullptr};
      const engine::JobState& js = w->state->Job(j);
      const int workers = js.spec->role(core::Role::kWorker).min_replicas;
      std::string reason;
      if (profile.packer->PlaceGang(ctx, j, workers, &reason)) {
        ++placed;
        EXPECT_EQ(js.placed_workers, workers) << "seed " << seed;
        EXPECT_EQ(js.placed_tasks, js.spec->NumTasks(workers)) << "seed " << seed;
        for (engine::NodeIndex n = 0; n < w->state->NumNodes(); ++n) {
          ASSERT_TRUE(w->state->Requested(n).FitsIn(w->state->Allocatable(n)));
        }
        // A gang it can place on the current cluster can be placed on the
        // empty one: the never-fits check never contradicts the packer.
        EXPECT_EQ(engine::NeverFits(ctx, j, workers, *profile.packer, /*exact=*/true), std::nullopt)
            << "seed " << seed;
        EXPECT_EQ(js.placed_tasks, js.spec->NumTasks(workers)) << "seed " << seed;
      } else {
        ++refused;
        EXPECT_FALSE(reason.empty()) << "seed " << seed;
        EXPECT_EQ(engine::testing::Take(*w->state), before) << "seed " << seed;
      }
      session.RollbackTo(0);
      ASSERT_EQ(engine::testing::Take(*w->state), before);
    }
  }
  EXPECT_GT(placed, 0);
  EXPECT_GT(refused, 0);
}

INSTANTIATE_TEST_SUITE_P(All, PackerContract, ::testing::ValuesIn(Names(Point::kPacker)), TestName);

// --- Preemptor: on failure the session and the plan are unchanged; on
// success the job's gang is placed and nothing is over-committed.
class PreemptorContract : public ::testing::TestWithParam<std::string> {};

TEST_P(PreemptorContract, FailureChangesNothingSuccessPlacesTheGang) {
  const engine::Profile profile = ProfileWith("preemptor", GetParam());
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    std::vector<JobIndex> pending;
    w->state->PendingJobs(&pending);
    for (JobIndex j : pending) {
      const auto before = engine::testing::Take(*w->state);
      engine::CycleState plan;
      engine::Session session(*w->state);
      engine::PodQueue pods_ctx;
      engine::Memos memos_ctx;
      engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 500, 0, -1, nullptr};
      const int workers = profile.sizer->StartWorkers(*w->state, j);
      std::string reason;
      if (profile.preemptor->Preempt(ctx, j, workers, *profile.packer, &reason)) {
        const engine::JobState& js = w->state->Job(j);
        EXPECT_EQ(js.placed_workers, workers) << "seed " << seed;
        EXPECT_EQ(js.placed_tasks, js.spec->NumTasks(workers)) << "seed " << seed;
        for (engine::NodeIndex n = 0; n < w->state->NumNodes(); ++n) {
          ASSERT_TRUE(w->state->Requested(n).FitsIn(w->state->Allocatable(n)));
        }
      } else {
        EXPECT_TRUE(plan.actions().empty()) << "seed " << seed;
        EXPECT_TRUE(session.Steps().empty()) << "seed " << seed;
        EXPECT_EQ(engine::testing::Take(*w->state), before) << "seed " << seed;
      }
      session.RollbackTo(0);
      ASSERT_EQ(engine::testing::Take(*w->state), before);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, PreemptorContract, ::testing::ValuesIn(Names(Point::kPreemptor)),
                         TestName);

// --- Sizer: start sizes and sizes after a whole cycle are within
// [minReplicas, maxReplicas].
class SizerContract : public ::testing::TestWithParam<std::string> {};

TEST_P(SizerContract, SizesStayWithinMinAndMax) {
  const engine::Profile profile = ProfileWith("sizer", GetParam());
  const engine::Engine engine(ProfileWith("sizer", GetParam()));
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed);
    for (JobIndex j = 0; j < w->state->NumJobs(); ++j) {
      const core::RoleSpec& r = w->state->Job(j).spec->role(core::Role::kWorker);
      const int start = profile.sizer->StartWorkers(*w->state, j);
      EXPECT_GE(start, r.min_replicas);
      EXPECT_LE(start, r.max_replicas);
    }
    const auto before = engine::testing::Take(*w->state);
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(*w->state, pods, memos, 500);
    ASSERT_EQ(engine::testing::Take(*w->state), before) << "Cycle must leave the state unchanged";
    engine::ApplyPlacements(*w->state, plan);
    for (JobIndex j = 0; j < w->state->NumJobs(); ++j) {
      const engine::JobState& js = w->state->Job(j);
      if (js.placed_tasks == 0) continue;
      const core::RoleSpec& r = js.spec->role(core::Role::kWorker);
      EXPECT_GE(js.placed_workers, r.min_replicas) << "seed " << seed << " job " << js.spec->name;
      EXPECT_LE(js.placed_workers, r.max_replicas) << "seed " << seed << " job " << js.spec->name;
    }
    for (engine::NodeIndex n = 0; n < w->state->NumNodes(); ++n) {
      ASSERT_TRUE(w->state->Requested(n).FitsIn(w->state->Allocatable(n))) << "seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, SizerContract, ::testing::ValuesIn(Names(Point::kSizer)), TestName);

// --- QueueOrder: keys are numbers (never NaN: infinity is allowed) and
// the same for the same state; a cycle under it leaves the state as it
// found it, and the placements it plans keep every queue within its quota,
// capability and this cycle's cap.
class QueueOrderContract : public ::testing::TestWithParam<std::string> {};

TEST_P(QueueOrderContract, KeysAreNumbersAndQueuesStayWithinLimits) {
  const engine::Profile profile = ProfileWith("queueOrder", GetParam());
  const engine::Engine engine(ProfileWith("queueOrder", GetParam()));
  for (int seed = 0; seed < kWorlds; ++seed) {
    auto w = MakeWorld(seed, /*queues=*/true);
    const ClusterState& st = *w->state;
    std::vector<engine::QueueHead> heads;
    for (JobIndex j = 0; j < st.NumJobs(); ++j) {
      if (!st.Job(j).IsPending()) continue;
      const int q = st.Job(j).queue;
      if (std::any_of(heads.begin(), heads.end(), [&](const auto& h) { return h.queue == q; })) {
        continue;
      }
      heads.push_back({q, j, st.Job(j).spec->Demand(st.Job(j).target_workers),
                       static_cast<size_t>(st.NumJobs() - j)});
    }
    for (const engine::QueueHead& h : heads) {
      const engine::QueueKey key = profile.queue_order->Key(st, h);
      for (double k : key) EXPECT_FALSE(std::isnan(k)) << "seed " << seed;
      EXPECT_EQ(profile.queue_order->Key(st, h), key) << "seed " << seed;
    }
    std::vector<core::Resources> before_usage;
    for (int q = 0; q < st.Quotas().NumQueues(); ++q) before_usage.push_back(st.Quotas().Usage(q));
    const auto before = engine::testing::Take(st);
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(*w->state, pods, memos, 500);
    ASSERT_EQ(engine::testing::Take(st), before) << "Cycle must leave the state unchanged";
    engine::ApplyPlacements(*w->state, plan);
    const engine::QuotaBook& book = st.Quotas();
    for (int q = 0; q < book.NumQueues(); ++q) {
      const int64_t used = book.Usage(q)[core::kGpu];
      if (used <= before_usage[q][core::kGpu]) continue;  // nothing added
      const core::QueueSpec& spec = book.Spec(q);
      const core::QuotaLine& l = spec.quota[0];
      if (l.borrowing_limit) {
        EXPECT_LE(used, l.nominal + *l.borrowing_limit) << "seed " << seed;
      }
      for (const auto& [id, limit] : spec.capability) EXPECT_LE(used, limit) << "seed " << seed;
      for (const auto& [id, limit] : book.CycleCap(q)) {
        if (id == core::kGpu) {
          EXPECT_LE(used, limit) << "seed " << seed;
        }
      }
      EXPECT_LE(used, book.MaxCapacity(q, core::kGpu)) << "seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, QueueOrderContract, ::testing::ValuesIn(Names(Point::kQueueOrder)),
                         TestName);

}  // namespace
}  // namespace dlsched::policy
