// Unit tests of the KOD2 policies (docs/policies/kod2.md): the weight order
// with starvation aging, the admission cycle, scale-in, scale-out and the
// fewest-nodes packer. Every expected weight, node and worker count is worked
// out by hand in the comments.
//
// Unless a test says otherwise the profile is the built-in `kod2` (kappa 0.5,
// scale node, starveLimit 600, resources cpu + memory + nvidia.com/gpu) and
// every PS requests 1 cpu / 2 GiB. With scale `node`
//   sum share = N * sum_r (minimum request of r / cluster capacity of r)
//   w' = 0.5 * minReplicas / sum share,   w = 1 / (1 + exp(-w')).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dlsched/engine/engine.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/policy/kod2/admission_kod2.h"
#include "dlsched/policy/kod2/order_kod2.h"
#include "dlsched/policy/kod2/packer_fewest_nodes.h"
#include "dlsched/policy/kod2/preemptor_kod2.h"
#include "policy/profiles.h"

namespace dlsched::policy {
namespace {

using core::JobPhase;
using core::Role;
using engine::ActionKind;
using engine::ClusterState;
using engine::JobIndex;
using engine::NodeIndex;
using engine::TaskRef;

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// `ps` PS of 1 cpu / 2 GiB and workers of `worker_milli_cpu` / `worker_mem_gib`
// / `worker_gpus`, elastic in [min, max], starting with min.
core::JobSpec Spec(std::string name, double submit, int ps, int min, int max,
                   int64_t worker_milli_cpu, int64_t worker_mem_gib, int64_t worker_gpus) {
  using dlsched::testing::GiB;
  using dlsched::testing::Res;
  return dlsched::testing::JobBuilder(std::move(name))
      .Submit(submit)
      .Ps(ps, Res(1000, GiB(2)))
      .Workers(min, min, max)
      .WorkerResources(Res(worker_milli_cpu, GiB(worker_mem_gib), worker_gpus))
      .Steps(1000, {{1, 1.0}});
}

engine::Profile Kod2Profile(const std::string& order_args = "") {
  return dlsched::testing::BuiltinProfile("kod2", [&](config::ProfileSpec& spec) {
    if (!order_args.empty()) spec.order.args = YAML::Load(order_args);
  });
}

class Kod2Test : public ::testing::Test {
 protected:
  // n identical nodes node-0.. of `cores` cpu, `mem_gib` memory, `gpus` GPUs.
  void Cluster(int n, int64_t cores, int64_t mem_gib, int64_t gpus) {
    cluster_ = engine::testing::Nodes(n, cores, mem_gib, gpus);
    state_.emplace(cluster_);
  }
  JobIndex Add(core::JobSpec spec, JobPhase phase = JobPhase::kWaiting) {
    specs_.push_back(std::move(spec));
    const JobIndex j = state_->AddJob(&specs_.back(), specs_.back().submit_time);
    state_->SetPhase(j, phase, specs_.back().submit_time);
    return j;
  }
  // A running job: its PS on the nodes `ps`, worker slot i on workers[i].
  JobIndex AddRunning(core::JobSpec spec, std::vector<NodeIndex> ps, std::vector<NodeIndex> workers,
                      JobPhase phase = JobPhase::kRunning) {
    const JobIndex j = Add(std::move(spec), phase);
    engine::Session s(*state_);
    for (size_t i = 0; i < ps.size(); ++i) s.Assign({j, Role::kPS, static_cast<int>(i)}, ps[i]);
    for (size_t i = 0; i < workers.size(); ++i) {
      s.Assign({j, Role::kWorker, static_cast<int>(i)}, workers[i]);
    }
    s.Commit();
    state_->MutableJob(j).target_workers = static_cast<int>(workers.size());
    return j;
  }
  NodeIndex NodeOf(JobIndex j, Role role, int index) const {
    return state_->Job(j).NodeOf(role, index);
  }
  // Runs one engine cycle and applies its placements (as a backend would,
  // without the phase changes).
  engine::Plan CycleAndApply(core::Time now) {
    const engine::Engine engine(Kod2Profile(order_args_));
    engine::PodQueue pods;
    engine::Memos memos;
    engine::Plan plan = engine.Cycle(*state_, pods, memos, now);
    engine::ApplyPlacements(*state_, plan);
    return plan;
  }
  // The job-level actions of a plan as "kind job workers" strings.
  // A session's steps in order: "- job Role[i] node-N" for an eviction,
  // "+ ..." for a placement.
  std::vector<std::string> Steps(const engine::Session& session) const {
    std::vector<std::string> steps;
    for (const auto& st : session.Steps()) {
      steps.push_back(fmt::format("{} {} {}[{}] node-{}", st.assigned ? "+" : "-",
                                  state_->Job(st.task.job).spec->name, core::RoleName(st.task.role),
                                  st.task.index, st.node));
    }
    return steps;
  }
  std::vector<std::string> JobActions(const engine::Plan& plan) const {
    return JobActions(plan.actions);
  }
  std::vector<std::string> JobActions(const engine::CycleState& decisions) const {
    return JobActions(decisions.actions());
  }
  std::vector<std::string> JobActions(std::span<const engine::Action> actions) const {
    std::vector<std::string> out;
    for (const auto& a : actions) {
      const std::string& name = state_->Job(a.task.job).spec->name;
      switch (a.kind) {
        case ActionKind::kStart:
          out.push_back("start " + name + " " + std::to_string(a.workers));
          break;
        case ActionKind::kResize:
          out.push_back("resize " + name + " " + std::to_string(a.workers));
          break;
        case ActionKind::kWait:
          out.push_back("wait " + name);
          break;
        case ActionKind::kStarve:
          out.push_back("starve " + name);
          break;
        default:
          break;
      }
    }
    return out;
  }
  const engine::Action* Find(const engine::Plan& plan, ActionKind kind, JobIndex j) const {
    return Find(plan.actions, kind, j);
  }
  const engine::Action* Find(const engine::CycleState& decisions, ActionKind kind,
                             JobIndex j) const {
    return Find(decisions.actions(), kind, j);
  }
  const engine::Action* Find(std::span<const engine::Action> actions, ActionKind kind,
                             JobIndex j) const {
    for (const auto& a : actions) {
      if (a.kind == kind && a.task.job == j) return &a;
    }
    return nullptr;
  }

  core::ClusterSpec cluster_;
  std::deque<core::JobSpec> specs_;
  std::optional<ClusterState> state_;
  std::string order_args_;
};

// ---------------------------------------------------------------------------
// Kod2Weight

// Two nodes of 8 cpu, 32 GiB, 4 GPUs: capacity 16 cpu, 64 GiB, 8 GPUs, N = 2.
//   a: 1 PS + 2 workers of 1 cpu / 2 GiB / 1 GPU: min request 3 cpu, 6 GiB, 2 GPU
//      shares 3/16 + 6/64 + 2/8 = 0.53125; x N = 1.0625
//      w' = 0.5 * 2 / 1.0625 = 0.941176, w = 0.719337
//   b: 1 PS + 4 workers of 1 cpu / 2 GiB, no GPU: 5 cpu, 10 GiB
//      shares 5/16 + 10/64 = 0.46875; x 2 = 0.9375
//      w' = 0.5 * 4 / 0.9375 = 2.133333, w = 0.894101
//   c: 1 worker of 1 cpu / 2 GiB / 4 GPUs: 1/16 + 2/64 + 4/8 = 0.59375; x 2 = 1.1875
//      w' = 0.5 / 1.1875 = 0.421053, w = 0.603735
// Heaviest first: b, a, c. With the paper's scale (`cluster`, no x N) every
// w' doubles: a 1.882353 (w 0.867881), b 4.266667 (0.986166), c 0.842105
// (0.698908); same order, pushed towards 1 - on 200 such nodes b's w' would
// be 426.7 and every weight would round to 1.0.
TEST_F(Kod2Test, WeightsMatchTheHandComputation) {
  Cluster(2, 8, 32, 4);
  const JobIndex a = Add(Spec("a", 0, 1, 2, 4, 1000, 2, 1));
  const JobIndex b = Add(Spec("b", 0, 1, 4, 4, 1000, 2, 0));
  const JobIndex c = Add(Spec("c", 0, 0, 1, 1, 1000, 2, 4));
  const Kod2WeightOrder node(Kod2WeightOptions{});
  EXPECT_NEAR(node.Exponent(*state_, a), 0.5 * 2 / 1.0625, 1e-12);
  EXPECT_NEAR(node.Exponent(*state_, b), 0.5 * 4 / 0.9375, 1e-12);
  EXPECT_NEAR(node.Exponent(*state_, c), 0.5 * 1 / 1.1875, 1e-12);
  EXPECT_NEAR(node.Weight(*state_, a), 0.719337, 1e-6);
  EXPECT_NEAR(node.Weight(*state_, b), 0.894101, 1e-6);
  EXPECT_NEAR(node.Weight(*state_, c), 0.603735, 1e-6);

  Kod2WeightOptions paper;
  paper.scale = Kod2Scale::kCluster;
  const Kod2WeightOrder cluster(paper);
  EXPECT_NEAR(cluster.Weight(*state_, a), 0.867881, 1e-6);
  EXPECT_NEAR(cluster.Weight(*state_, b), 0.986166, 1e-6);
  EXPECT_NEAR(cluster.Weight(*state_, c), 0.698908, 1e-6);

  // Keys are -w; served b, a, c.
  std::vector<JobIndex> jobs = {a, b, c};
  std::vector<double> keys(3);
  node.Keys(*state_, jobs, 0, keys);
  EXPECT_DOUBLE_EQ(keys[1], -node.Weight(*state_, b));
  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 0};
  engine::OrderJobs(ctx, &jobs);
  EXPECT_EQ(jobs, (std::vector<JobIndex>{b, a, c}));
}

// Only the configured resources count; a job that requests none of them has
// w' = 0 and w = 0.5, below every job that requests something.
TEST_F(Kod2Test, ResourcesArgumentAndZeroRequest) {
  Cluster(2, 8, 32, 4);
  const JobIndex a = Add(Spec("a", 0, 1, 2, 4, 1000, 2, 1));
  core::JobSpec none = Spec("none", 0, 0, 3, 3, 0, 0, 0);
  const JobIndex z = Add(none);
  Kod2WeightOptions gpu_only;
  gpu_only.resources = {core::kGpu};
  // a on GPUs only: 2/8 x 2 = 0.5, w' = 0.5 * 2 / 0.5 = 2.
  EXPECT_DOUBLE_EQ(Kod2WeightOrder(gpu_only).Exponent(*state_, a), 2.0);
  EXPECT_DOUBLE_EQ(Kod2WeightOrder(Kod2WeightOptions{}).Exponent(*state_, z), 0.0);
  EXPECT_DOUBLE_EQ(Kod2WeightOrder(Kod2WeightOptions{}).Weight(*state_, z), 0.5);
}

// Aging, starveLimit 100 s. c (w 0.603735) submitted at 0, c2 (same shape)
// at 10, b (w 0.894101) at 50.
//   now 100: c waited 100 s, not more than 100: no aging; b, c, c2.
//   now 150: c waited 150 > 100 and c2 140 > 100: both raised to
//            0.894101 + 1e-9, above b (waited 100); equal raised weights
//            keep FIFO: c, c2, b. Both get a kStarve action.
// A job that holds resources is never aged, so the same call over a running
// job gives its plain weight.
TEST_F(Kod2Test, AgingPutsStarvingJobsFirstInFifoOrder) {
  Cluster(2, 8, 32, 4);
  const JobIndex c = Add(Spec("c", 0, 0, 1, 1, 1000, 2, 4));
  const JobIndex c2 = Add(Spec("c2", 10, 0, 1, 1, 1000, 2, 4));
  const JobIndex b = Add(Spec("b", 50, 1, 4, 4, 1000, 2, 0));
  order_args_ = "{starveLimit: 100}";
  const engine::Profile profile = Kod2Profile(order_args_);
  const auto& order = *profile.order;
  auto served = [&](core::Time now) {
    std::vector<JobIndex> jobs;
    state_->PendingJobs(&jobs);
    engine::CycleState plan;
    engine::Session session(*state_);
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, now};
    engine::OrderJobs(ctx, &jobs);
    return jobs;
  };
  EXPECT_EQ(served(100), (std::vector<JobIndex>{b, c, c2}));
  EXPECT_FALSE(order.IsStarving(*state_, c, 100));
  EXPECT_EQ(served(150), (std::vector<JobIndex>{c, c2, b}));
  EXPECT_TRUE(order.IsStarving(*state_, c, 150));
  EXPECT_TRUE(order.IsStarving(*state_, c2, 150));
  EXPECT_FALSE(order.IsStarving(*state_, b, 150));
  std::vector<JobIndex> jobs = {c, c2, b};
  std::vector<double> keys(3);
  order.Keys(*state_, jobs, 150, keys);
  EXPECT_DOUBLE_EQ(keys[0], -(Sigmoid(0.5 * 4 / 0.9375) + kKod2StarveBump));
  EXPECT_DOUBLE_EQ(keys[0], keys[1]);

  // The admission cycle at 150: nothing runs, so c takes step 2 and starts
  // on node-0 (its 4-GPU worker fits either empty node; tie -> lowest
  // index). c now runs with its plain weight 0.603735. c2 (raised weight
  // 0.894101 + 1e-9 >= 0.603735) starts on node-1. b (0.894101 >= 0.603735)
  // takes step 2 too and fits whole on node-0 (5 cpu, 10 GiB, no GPU).
  const engine::Plan plan = CycleAndApply(150);
  EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"starve c", "start c 1", "starve c2",
                                                        "start c2 1", "start b 4"}));
  EXPECT_EQ(NodeOf(c, Role::kWorker, 0), 0);
  EXPECT_EQ(NodeOf(c2, Role::kWorker, 0), 1);
  EXPECT_EQ(NodeOf(b, Role::kPS, 0), 0);
  // Once placed, c is weighed plainly again.
  std::vector<JobIndex> one = {c};
  std::vector<double> key(1);
  order.Keys(*state_, one, 150, key);
  EXPECT_DOUBLE_EQ(key[0], -Sigmoid(0.5 / 1.1875));
  EXPECT_FALSE(order.IsStarving(*state_, c, 150));
}

TEST_F(Kod2Test, WeightArgumentsAreValidatedNamingTheField) {
  auto expect_error = [](const std::string& args, const std::string& message) {
    auto built = MakeKod2Weight(YAML::Load(args), "p.yaml: order.args");
    ASSERT_FALSE(built.has_value()) << args;
    EXPECT_EQ(built.error().message, message);
  };
  expect_error("{kappa: 0}", "p.yaml: order.args.kappa: expected a number > 0, got '0'");
  expect_error("{kappa: -1}",
               "p.yaml: order.args.kappa: expected a number in 0..1000000000, got '-1'");
  expect_error("{scale: nodes}", "p.yaml: order.args.scale: expected node or cluster, got 'nodes'");
  expect_error("{starveLimit: -5}",
               "p.yaml: order.args.starveLimit: expected a number in 0..1000000000000, got '-5'");
  expect_error("{resources: []}",
               "p.yaml: order.args.resources: expected a non-empty list of resource names such as "
               "[cpu, memory]");
  expect_error("{resources: [cpu, cpu]}", "p.yaml: order.args.resources[1]: 'cpu' is listed twice");
  expect_error("{kapa: 1}",
               "p.yaml: order.args.kapa: unknown argument (expected one of: kappa, starveLimit, "
               "scale, resources); did you mean 'kappa'?");
  EXPECT_TRUE(
      MakeKod2Weight(YAML::Load("{kappa: 2, scale: cluster, starveLimit: 0}"), "p").has_value());
  auto scale_in = MakeKod2ScaleIn(YAML::Load("{restartOnResize: maybe}"), "p.yaml: preemptor.args");
  ASSERT_FALSE(scale_in.has_value());
  EXPECT_EQ(scale_in.error().message,
            "p.yaml: preemptor.args.restartOnResize: expected true or false, got 'maybe'");
}

// ---------------------------------------------------------------------------
// Kod2 admission (the whole engine cycle)

// Two nodes of 8 cpu, 32 GiB, 4 GPUs (capacity 16 cpu, 64 GiB, 8 GPUs, N = 2).
// Running:
//   s: 2 workers of 4 cpu / 8 GiB / 1 GPU, min = max = 2, one per node.
//      8/16 + 16/64 + 2/8 = 1, x 2 = 2; w' = 0.5 * 2 / 2 = 0.5, w = 0.6225
//   r: 1 PS + 4 workers of 1 cpu / 2 GiB / 1 GPU, min 2: w = 0.7193 (job a
//      above). PS, w0, w1 on node-0; w2, w3 on node-1.
// Free: node-0 1 cpu, 18 GiB, 1 GPU; node-1 2 cpu, 20 GiB, 1 GPU.
// Pending:
//   j1: 4 workers of 500m / 1 GiB / 1 GPU: 2/16 + 4/64 + 4/8 = 0.6875, x 2 =
//       1.375; w' = 2 / 1.375 = 1.4545, w = 0.8107
//   j2: 1 worker of 2 cpu / 8 GiB: (2/16 + 8/64) x 2 = 0.5; w' = 1, w = 0.7311
//   j3: 1 worker of 4 cpu / 4 GiB: (4/16 + 4/64) x 2 = 0.625; w' = 0.8, w = 0.69
// Cycle:
//   j1: 0.8107 >= 0.7193 (r, the heaviest running): step 2. 4 GPUs needed, 2
//       free: scale-in. s is at its minimum; r is lighter. r's PS is on
//       node-0, so node-1 goes first, highest slot first: w3 (2 GPUs free in
//       all), w2 (3 free on node-1 + 1 on node-0 = 4; r is at min 2 now). No
//       node has 4, so fewest nodes: node-1 (3 free) takes j1's w0..w2,
//       node-0 w3. r -> 2 workers.
//   j2: 0.7311 < 0.8107 (j1 now runs): step 3, idle room only; fits whole on
//       node-1 (2.5 cpu, 21 GiB free).
//   j3: 0.69 < 0.8107: step 3; needs 4 cpu, 1 is free: waits, no scale-in.
//   Scale-out: j1, j2, s at max; r was shrunk in this cycle: nothing grows.
TEST_F(Kod2Test, HeavyJobScalesInLighterJobsTakeIdleRoomOnly) {
  Cluster(2, 8, 32, 4);
  const JobIndex s = AddRunning(Spec("s", 0, 0, 2, 2, 4000, 8, 1), {}, {0, 1});
  const JobIndex r = AddRunning(Spec("r", 0, 1, 2, 4, 1000, 2, 1), {0}, {0, 0, 1, 1});
  const JobIndex j1 = Add(Spec("j1", 10, 0, 4, 4, 500, 1, 1));
  const JobIndex j2 = Add(Spec("j2", 20, 0, 1, 1, 2000, 8, 0));
  const JobIndex j3 = Add(Spec("j3", 30, 0, 1, 1, 4000, 4, 0));
  const engine::Plan plan = CycleAndApply(40);
  EXPECT_EQ(JobActions(plan),
            (std::vector<std::string>{"resize r 2", "start j1 4", "start j2 1", "wait j3"}));
  EXPECT_EQ(Find(plan, ActionKind::kResize, r)->reason, "scaled in 2 workers of r for j1");
  EXPECT_FALSE(Find(plan, ActionKind::kResize, r)->restart);
  EXPECT_EQ(Find(plan, ActionKind::kStart, j1)->reason,
            "started with 4 workers after scale-in (weight 0.8107 >= 0.7193 of running r)");
  EXPECT_EQ(Find(plan, ActionKind::kStart, j2)->reason,
            "started with 1 worker (weight 0.7311 < 0.8107 of running j1)");
  EXPECT_EQ(Find(plan, ActionKind::kWait, j3)->reason,
            "waiting: gang of 1 worker needs 4 cpu, the cluster has 1 free (weight 0.69 < 0.8107 "
            "of running j1: idle room only, no scale-in)");
  // r kept its PS-node workers; j1 spans node-1 and node-0.
  EXPECT_EQ(state_->Job(r).placed_workers, 2);
  EXPECT_EQ(NodeOf(r, Role::kWorker, 0), 0);
  EXPECT_EQ(NodeOf(r, Role::kWorker, 1), 0);
  EXPECT_EQ(NodeOf(r, Role::kWorker, 2), engine::kNoNode);
  EXPECT_EQ(NodeOf(r, Role::kWorker, 3), engine::kNoNode);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(NodeOf(j1, Role::kWorker, i), 1) << i;
  EXPECT_EQ(NodeOf(j1, Role::kWorker, 3), 0);
  EXPECT_EQ(NodeOf(j2, Role::kWorker, 0), 1);
  EXPECT_EQ(state_->Job(s).placed_workers, 2);
}

// Same cluster. Running r: 6 workers of 1 cpu / 2 GiB / 1 GPU, min = max = 6
// (w' = 0.5 * 6 / ((6/16 + 12/64 + 6/8) x 2) = 3 / 2.625 = 1.1429, w 0.7582):
// w0..w3 on node-0, w4, w5 on node-1; 2 GPUs free on node-1.
//   big: 10 workers of 100m / 1 GPU (w' = 5 / ((1/16 + 10/8) x 2) = 1.9048,
//        w 0.8704): 10 GPUs is more than the cluster's 8. Step 2, no fit,
//        nothing to scale in, and it could never start: skipped.
//   j:   4 workers of 500m / 1 GiB / 1 GPU (w 0.8107 >= 0.7582): step 2; 2
//        GPUs free, r is at its minimum: no scale-in. j would fit on the
//        empty cluster, so it waits and holds back every lighter job.
//   l:   1 worker of 1 cpu / 8 GiB (w' = 0.5 / ((1/16 + 8/64) x 2) = 1.3333,
//        w 0.7914) would fit in node-1's idle room, but waits behind j.
TEST_F(Kod2Test, BlockedHeaviestJobHoldsBackLighterOnesUnlessItCanNeverFit) {
  Cluster(2, 8, 32, 4);
  AddRunning(Spec("r", 0, 0, 6, 6, 1000, 2, 1), {}, {0, 0, 0, 0, 1, 1});
  const JobIndex big = Add(Spec("big", 5, 0, 10, 10, 100, 0, 1));
  const JobIndex j = Add(Spec("j", 10, 0, 4, 4, 500, 1, 1));
  const JobIndex l = Add(Spec("l", 20, 0, 1, 1, 1000, 8, 0));
  const engine::Plan plan = CycleAndApply(30);
  EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"wait big", "wait j", "wait l"}));
  EXPECT_EQ(Find(plan, ActionKind::kWait, big)->reason,
            "waiting: its gang of 10 workers needs 10 nvidia.com/gpu, the cluster has 8 in all; it "
            "can never start on this cluster, so it does not hold back lighter jobs");
  EXPECT_EQ(Find(plan, ActionKind::kWait, j)->reason,
            "waiting: gang of 4 workers needs 4 nvidia.com/gpu, the cluster has 2 free; scale-in "
            "found no running job lighter than j with workers above its minReplicas (weight "
            "0.8107 >= 0.7582 of running r); no lighter job starts meanwhile");
  EXPECT_EQ(Find(plan, ActionKind::kWait, l)->reason,
            "waiting: behind heavier j, which cannot start even with scale-in (KOD2 starts no "
            "lighter job meanwhile)");
  EXPECT_EQ(plan.ChangesState(), false);
}

// ---------------------------------------------------------------------------
// Kod2ScaleIn

// Three nodes of 8 cpu, 32 GiB, 4 GPUs (capacity 24 cpu, 96 GiB, 12 GPUs,
// N = 3). Every GPU is taken:
//   h: 1 PS + 4 workers of 1 cpu / 2 GiB / 1 GPU, min 3, submitted at 0
//      min request 4 cpu, 8 GiB, 3 GPUs: (4/24 + 8/96 + 3/12) x 3 = 1.5
//      w' = 0.5 * 3 / 1.5 = 1.0. PS node-1; w0, w1 node-0, w2 node-1, w3 node-2
//   l: 2 workers of 1 cpu / 16 GiB / 1 GPU, min 1, submitted at 5
//      (1/24 + 16/96 + 1/12) x 3 = 0.875, w' = 0.5714. w0 node-1, w1 node-2
//   v: 1 PS + 6 workers of 2 cpu / 4 GiB / 1 GPU, min 1, submitted at 10
//      (3/24 + 6/96 + 1/12) x 3 = 0.8125, w' = 0.6154. PS node-0;
//      w0, w1 node-0; w2, w3 node-1; w4, w5 node-2
// Free: node-0 1 cpu, 18 GiB; node-1 1 cpu, 4 GiB; node-2 2 cpu, 6 GiB; no GPU.
// j (pending, submitted at 20) has h's shape: w' = 1.0, and needs 4 cpu,
// 8 GiB, 3 GPUs.
// Victims: h is as heavy as j and submitted earlier: skipped. l (0.5714)
// before v (0.6154).
//   l has no PS: node-1 first. Remove l.w0 -> node-1 has 1 GPU; l is at its
//     minimum 1: next victim.
//   v's PS is on node-0, so node-1, node-2, then node-0; highest slot first.
//     Remove v.w3 -> node-1 2 GPUs; v.w2 -> node-1 3 GPUs, 6 cpu, 28 GiB:
//     j fits whole on node-1.
// v keeps its workers on node-2 and on its PS's node-0.
TEST_F(Kod2Test, ScaleInTakesLightestFirstPsNodeLastAndStopsAtMinimum) {
  Cluster(3, 8, 32, 4);
  const JobIndex h = AddRunning(Spec("h", 0, 1, 3, 6, 1000, 2, 1), {1}, {0, 0, 1, 2});
  const JobIndex l = AddRunning(Spec("l", 5, 0, 1, 4, 1000, 16, 1), {}, {1, 2});
  const JobIndex v = AddRunning(Spec("v", 10, 1, 1, 6, 2000, 4, 1), {0}, {0, 0, 1, 1, 2, 2});
  const JobIndex j = Add(Spec("j", 20, 1, 3, 6, 1000, 2, 1));
  ASSERT_EQ(state_->TotalFree()[core::kGpu], 0);

  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 30};
  std::string reason;
  ASSERT_TRUE(profile.preemptor->Preempt(ctx, j, 3, *profile.packer, &reason)) << reason;
  // Evictions in order, then j's placement.
  EXPECT_EQ(Steps(session), (std::vector<std::string>{
                                "- l Worker[0] node-1", "- v Worker[3] node-1",
                                "- v Worker[2] node-1", "+ j PS[0] node-1", "+ j Worker[0] node-1",
                                "+ j Worker[1] node-1", "+ j Worker[2] node-1"}));
  EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"resize l 1", "resize v 4"}));
  EXPECT_EQ(Find(plan, ActionKind::kResize, l)->reason, "scaled in 1 worker of l for j");
  EXPECT_EQ(Find(plan, ActionKind::kResize, v)->reason, "scaled in 2 workers of v for j");
  EXPECT_EQ(state_->Job(h).placed_workers, 4);
}

// The same cluster, with l sized earlier at this instant (t = 30): l is no
// victim for the rest of it, so v gives all three GPUs: node-1 first (no PS
// there), w3 and w2, then node-2, w5; j then fits on node-1 (PS, w0, w1) and
// node-2 (w2).
TEST_F(Kod2Test, ScaleInLeavesAJobSizedAtThisInstant) {
  Cluster(3, 8, 32, 4);
  AddRunning(Spec("h", 0, 1, 3, 6, 1000, 2, 1), {1}, {0, 0, 1, 2});
  const JobIndex l = AddRunning(Spec("l", 5, 0, 1, 4, 1000, 16, 1), {}, {1, 2});
  AddRunning(Spec("v", 10, 1, 1, 6, 2000, 4, 1), {0}, {0, 0, 1, 1, 2, 2});
  const JobIndex j = Add(Spec("j", 20, 1, 3, 6, 1000, 2, 1));
  state_->MutableJob(l).sized_at = 30;
  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 30};
  std::string reason;
  ASSERT_TRUE(profile.preemptor->Preempt(ctx, j, 3, *profile.packer, &reason)) << reason;
  EXPECT_EQ(Steps(session), (std::vector<std::string>{
                                "- v Worker[3] node-1", "- v Worker[2] node-1",
                                "- v Worker[5] node-2", "+ j PS[0] node-1", "+ j Worker[0] node-1",
                                "+ j Worker[1] node-1", "+ j Worker[2] node-2"}));
  EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"resize v 3"}));
}

// Three nodes of 8 cpu, 32 GiB, 4 GPUs.
//   v: 1 PS + 4 workers of 4 cpu / 16 GiB / 1 GPU, min 3
//      (13/24 + 50/96 + 3/12) x 3 = 3.9375, w' = 0.5 * 3 / 3.9375 = 0.381.
//      PS node-1; w0, w1 node-0 (full: 8 cpu, 32 GiB); w2 node-1; w3 node-2
//   g: 5 workers of 1 GPU only, min = max 5 (w' = 0.5 * 5 / (5/12 x 3) = 2):
//      w0 node-0, w1, w2 node-1, w3, w4 node-2
// One GPU is free on each node. j: 1 worker of 1 cpu / 2 GiB / 3 GPUs
// (w' = 0.5 / ((1/24 + 2/96 + 3/12) x 3) = 0.5333), heavier than v.
// The freed total could hold j (3 free GPUs + v's one spare), so scale-in
// tries: v's PS is on node-1, so node-0 goes first: remove v.w1 -> node-0 has
// 2 GPUs, still no node with 3. v is at its minimum 3: stop. g is at its
// minimum too. Scale-in fails and the session and plan are as before.
TEST_F(Kod2Test, FailedScaleInLeavesSessionAndPlanUnchanged) {
  Cluster(3, 8, 32, 4);
  AddRunning(Spec("v", 0, 1, 3, 4, 4000, 16, 1), {1}, {0, 0, 1, 2});
  AddRunning(Spec("g", 0, 0, 5, 5, 0, 0, 1), {}, {0, 1, 1, 2, 2});
  const JobIndex j = Add(Spec("j", 10, 0, 1, 1, 1000, 2, 3));
  const auto before = engine::testing::Take(*state_);

  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 20};
  std::string reason;
  EXPECT_FALSE(profile.preemptor->Preempt(ctx, j, 1, *profile.packer, &reason));
  EXPECT_EQ(
      reason,
      "scale-in of every lighter running job to its minReplicas leaves no place for j's gang");
  EXPECT_EQ(engine::testing::Take(*state_), before);
  EXPECT_TRUE(session.Steps().empty());
  EXPECT_TRUE(plan.actions().empty());
}

// One node of 8 cpu, 32 GiB, 4 GPUs. f (4 workers of 1 GPU, min 1, max 6)
// is in RunningProtected, i.e. frozen: it is neither shrunk for the heavier
// j nor grown into idle room, although it is below its maximum.
TEST_F(Kod2Test, FrozenJobsAreNeitherShrunkNorGrown) {
  Cluster(1, 8, 32, 4);
  const JobIndex f =
      AddRunning(Spec("f", 0, 0, 1, 6, 1000, 2, 1), {}, {0, 0, 0}, JobPhase::kRunningProtected);
  const JobIndex j = Add(Spec("j", 10, 0, 2, 2, 500, 1, 1));
  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 20};
  std::string reason;
  EXPECT_FALSE(profile.preemptor->Preempt(ctx, j, 2, *profile.packer, &reason));
  EXPECT_EQ(reason,
            "scale-in found no running job lighter than j with workers above its minReplicas");
  profile.sizer->Resize(ctx, *profile.packer);
  EXPECT_TRUE(plan.actions().empty());
  EXPECT_EQ(state_->Job(f).placed_workers, 3);
}

// The restartOnResize argument is carried into the kResize actions.
TEST_F(Kod2Test, RestartOnResizeIsCarried) {
  Cluster(1, 8, 32, 4);
  AddRunning(Spec("v", 0, 0, 1, 4, 1000, 8, 1), {}, {0, 0, 0, 0});
  const JobIndex j = Add(Spec("j", 10, 0, 1, 1, 500, 1, 1));
  engine::Profile profile = Kod2Profile();
  profile.preemptor = std::move(*MakeKod2ScaleIn(YAML::Load("{restartOnResize: true}"), "p"));
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 20};
  ASSERT_TRUE(profile.preemptor->Preempt(ctx, j, 1, *profile.packer, nullptr));
  ASSERT_EQ(plan.actions().size(), 1u);
  EXPECT_TRUE(plan.actions()[0].restart);
  EXPECT_EQ(plan.actions()[0].workers, 3);
}

// ---------------------------------------------------------------------------
// Kod2ScaleOut

// Three nodes of 8 cpu, 32 GiB, 4 GPUs. Running:
//   x: 1 PS + 2 workers of 1 cpu / 2 GiB / 1 GPU, min 1, max 6
//      (2/24 + 4/96 + 1/12) x 3 = 0.625, w' = 0.8. PS, w0 node-2; w1 node-0
//   z: 3 workers of the same, min = max 3 (at its maximum): w0, w1 node-2,
//      w2 node-0
//   w: 1 worker of 2 cpu / 8 GiB / 1 GPU, min 1, max 3
//      (2/24 + 8/96 + 1/12) x 3 = 0.75, w' = 0.6667. w0 node-1
// Free GPUs: node-0 2, node-1 3, node-2 1.
// Heaviest first: x. Its own nodes, PS node first: node-2 takes w2 (full);
// node-0 takes w3, w4 (full); then the most idle other node, node-1, takes
// w5: x reaches 6. Then w: its own node-1 takes w1, w2 (full): w reaches 3.
// (Most idle first alone would have put x's first 3 workers on node-1.)
TEST_F(Kod2Test, ScaleOutHeaviestFirstOnOwnNodesUpToMax) {
  Cluster(3, 8, 32, 4);
  const JobIndex x = AddRunning(Spec("x", 0, 1, 1, 6, 1000, 2, 1), {2}, {2, 0});
  AddRunning(Spec("z", 0, 0, 3, 3, 1000, 2, 1), {}, {2, 2, 0});
  const JobIndex w = AddRunning(Spec("w", 0, 0, 1, 3, 2000, 8, 1), {}, {1});
  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 10};
  profile.sizer->Resize(ctx, *profile.packer);
  EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"resize x 6", "resize w 3"}));
  EXPECT_EQ(Find(plan, ActionKind::kResize, x)->reason, "scaled out 4 workers into idle room");
  EXPECT_EQ(Find(plan, ActionKind::kResize, w)->reason, "scaled out 2 workers into idle room");
  EXPECT_EQ(NodeOf(x, Role::kWorker, 2), 2);
  EXPECT_EQ(NodeOf(x, Role::kWorker, 3), 0);
  EXPECT_EQ(NodeOf(x, Role::kWorker, 4), 0);
  EXPECT_EQ(NodeOf(x, Role::kWorker, 5), 1);
  EXPECT_EQ(NodeOf(w, Role::kWorker, 1), 1);
  EXPECT_EQ(NodeOf(w, Role::kWorker, 2), 1);
  EXPECT_EQ(state_->TotalFree()[core::kGpu], 0);
  EXPECT_EQ(profile.sizer->StartWorkers(*state_, w), 1);
}

// The same cluster at t = 10, where x was sized (started or resized) earlier
// in this instant: x keeps its 2 workers for the rest of it, and w, next by
// weight, takes the room x would have: node-1's 3 free GPUs, but w stops at
// its max 3 (2 new workers on its own node-1). At t = 11 x grows again.
TEST_F(Kod2Test, ScaleOutLeavesAJobSizedAtThisInstant) {
  Cluster(3, 8, 32, 4);
  const JobIndex x = AddRunning(Spec("x", 0, 1, 1, 6, 1000, 2, 1), {2}, {2, 0});
  AddRunning(Spec("z", 0, 0, 3, 3, 1000, 2, 1), {}, {2, 2, 0});
  AddRunning(Spec("w", 0, 0, 1, 3, 2000, 8, 1), {}, {1});
  state_->MutableJob(x).sized_at = 10;
  const engine::Profile profile = Kod2Profile();
  for (const core::Time now : {10.0, 11.0}) {
    engine::CycleState plan;
    engine::Session session(*state_);
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, now};
    profile.sizer->Resize(ctx, *profile.packer);
    const std::vector<std::string> expected =
        now == 10 ? std::vector<std::string>{"resize w 3"}
                  : std::vector<std::string>{"resize x 6", "resize w 3"};
    EXPECT_EQ(JobActions(plan), expected) << now;
    session.RollbackTo(0);
  }
}

// Heterogeneity-aware scale-out (heterogeneity: aware). Two nodes of 8 cpu,
// 32 GiB, 4 GPUs: node-0 of type k80, node-1 of type v100. Running:
//   x: 1 worker of 1 cpu / 2 GiB / 1 GPU on node-1, min 1, max 4; steps/s
//      on v100 4 per worker (4, 8, 12, 16), on k80 1 per worker (1 .. 4).
//   z: 2 workers of the same on node-1, min = max 2.
// Free GPUs: node-0 4, node-1 1. x's rate now: 4 (1 worker, v100).
// Agnostic: x's own node-1 takes w1, then the most idle node-0 w2, w3: x
// reaches 4 workers across both types and runs at the slowest, k80's
// 4 steps/s - no faster than with 1 worker.
// Aware: w1 on node-1 raises x to 8 (2 workers on v100). Idle nodes by x's
// rate there with 3 workers: only node-0 (k80, 3). w2 on node-0 would run x
// at min(v100 12, k80 3) = 3 < 8: rolled back, k80 is not tried again. x
// reaches 2 workers, node-0 stays idle.
TEST_F(Kod2Test, ScaleOutAwareAddsOnlyWorkersThatRaiseTheJobsSpeed) {
  Cluster(2, 8, 32, 4);
  cluster_.nodes[0].labels[std::string(core::kGpuTypeLabel)] = "k80";
  cluster_.nodes[1].labels[std::string(core::kGpuTypeLabel)] = "v100";
  state_.emplace(cluster_);
  core::JobSpec spec = Spec("x", 0, 0, 1, 4, 1000, 2, 1);
  spec.throughput.SetGpuTypes({{"v100", {{1, 4.0}, {2, 8.0}, {3, 12.0}, {4, 16.0}}},
                               {"k80", {{1, 1.0}, {2, 2.0}, {3, 3.0}, {4, 4.0}}}});
  const JobIndex x = AddRunning(std::move(spec), {}, {1});
  AddRunning(Spec("z", 0, 0, 2, 2, 1000, 2, 1), {}, {1, 1});
  for (const bool aware : {false, true}) {
    const engine::Profile profile =
        dlsched::testing::BuiltinProfile("kod2", [&](config::ProfileSpec& p) {
          p.sizer.args = YAML::Load(aware ? "{heterogeneity: aware}" : "{}");
        });
    engine::CycleState plan;
    engine::Session session(*state_);
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 10};
    profile.sizer->Resize(ctx, *profile.packer);
    if (aware) {
      EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"resize x 2"}));
      EXPECT_EQ(Find(plan, ActionKind::kResize, x)->reason, "scaled out 1 worker into idle room");
      EXPECT_EQ(NodeOf(x, Role::kWorker, 1), 1);
      EXPECT_EQ(state_->PlacedRate(x), 8);
      EXPECT_EQ(state_->FreeOf(0, core::kGpu), 4);
    } else {
      EXPECT_EQ(JobActions(plan), (std::vector<std::string>{"resize x 4"}));
      EXPECT_EQ(NodeOf(x, Role::kWorker, 1), 1);
      EXPECT_EQ(NodeOf(x, Role::kWorker, 2), 0);
      EXPECT_EQ(state_->PlacedRate(x), 4);
    }
    session.RollbackTo(0);
  }
}

// ---------------------------------------------------------------------------
// FewestNodes

// Four nodes of 8 cpu / 32 GiB; GPUs 2, 4, 4, 4. o1 (2 cpu, no GPU) runs on
// node-1, o2 (1 cpu, 1 GPU) on node-2. Free: node-0 8 cpu / 2 GPUs, node-1
// 6 cpu / 4, node-2 7 cpu / 3, node-3 8 cpu / 4.
//   g (1 PS + 6 workers of 1 cpu / 2 GiB / 1 GPU): no node has 6 GPUs. Most
//     idle first: node-3 (4 GPUs, 8 cpu) before node-1 (4 GPUs, 6 cpu). node-3
//     takes the PS and w0..w3, node-1 w4, w5: two nodes.
//   g2 (1 PS + 2 such workers, 3 cpu / 6 GiB / 2 GPUs) fits on every node;
//     MostAllocated (gpu, cpu, memory) judged for its PS (no GPU: cpu and
//     memory only) after placing it: node-0 (1/8 cpu -> 12, 2/32 GiB -> 6)
//     9, node-1 (3/8 -> 37, 4/32 -> 12) 24, node-2 (2/8 -> 25, 12) 18,
//     node-3 9: the fullest, node-1, takes the whole job.
TEST_F(Kod2Test, FewestNodesPrefersOneNodeThenMostIdleFirst) {
  Cluster(4, 8, 32, 4);
  cluster_.nodes[0].allocatable[core::kGpu] = 2;
  state_.emplace(cluster_);
  AddRunning(Spec("o1", 0, 0, 1, 1, 2000, 2, 0), {}, {1});
  AddRunning(Spec("o2", 0, 0, 1, 1, 1000, 2, 1), {}, {2});
  const JobIndex g = Add(Spec("g", 10, 1, 6, 6, 1000, 2, 1));
  const JobIndex g2 = Add(Spec("g2", 10, 1, 2, 2, 1000, 2, 1));
  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 20};
  const FewestNodesPacker packer;
  std::string reason;
  ASSERT_TRUE(packer.PlaceGang(ctx, g, 6, &reason)) << reason;
  EXPECT_EQ(NodeOf(g, Role::kPS, 0), 3);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(NodeOf(g, Role::kWorker, i), 3) << i;
  EXPECT_EQ(NodeOf(g, Role::kWorker, 4), 1);
  EXPECT_EQ(NodeOf(g, Role::kWorker, 5), 1);
  session.RollbackTo(0);
  ASSERT_TRUE(packer.PlaceGang(ctx, g2, 2, &reason)) << reason;
  EXPECT_EQ(NodeOf(g2, Role::kPS, 0), 1);
  EXPECT_EQ(NodeOf(g2, Role::kWorker, 0), 1);
  EXPECT_EQ(NodeOf(g2, Role::kWorker, 1), 1);
}

// Two nodes of 4 cpu, 16 GiB, 4 GPUs. a (3 cpu, no GPU) runs on node-0, b (4
// GPUs, no cpu) on node-1: free node-0 1 cpu / 4 GPUs, node-1 4 cpu / 0 GPU.
// g: 2 workers of 1 cpu / 1 GiB / 1 GPU. The cluster's free total has room
// (5 cpu, 4 GPUs) but no node does: node-0 takes w0 and has no cpu left for
// w1; node-1 has no GPU. All or nothing: w0 is rolled back.
TEST_F(Kod2Test, FewestNodesIsAllOrNothing) {
  Cluster(2, 4, 16, 4);
  AddRunning(Spec("a", 0, 0, 1, 1, 3000, 1, 0), {}, {0});
  AddRunning(Spec("b", 0, 0, 1, 1, 0, 1, 4), {}, {1});
  const JobIndex g = Add(Spec("g", 10, 0, 2, 2, 1000, 1, 1));
  const auto before = engine::testing::Take(*state_);
  const engine::Profile profile = Kod2Profile();
  engine::CycleState plan;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, 20};
  std::string reason;
  EXPECT_FALSE(FewestNodesPacker().PlaceGang(ctx, g, 2, &reason));
  EXPECT_EQ(reason,
            "no single node has room for the whole job (cpu=2, memory=2Gi, nvidia.com/gpu=2); "
            "filling the most idle nodes first, 1 of 2 tasks fit and Worker (cpu=1, "
            "memory=1Gi, nvidia.com/gpu=1) found no room");
  EXPECT_EQ(engine::testing::Take(*state_), before);
  EXPECT_TRUE(session.Steps().empty());
}

}  // namespace
}  // namespace dlsched::policy
