// Node filters: nodeSelector, required node affinity, taints and
// tolerations, the per-node failure summary, and the one "never fits" path
// that every admission uses.
#include "dlsched/policy/shared/filters.h"

#include <deque>
#include <string>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/placement.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/policy/framework/test_util.h"

namespace dlsched::policy {
namespace {

using core::Role;
using engine::ActionKind;
using engine::WaitStatus;

using testing::MakeProfile;

// Four nodes of 8 cpu and 4 GPUs:
//   n0  zone z1, taint dedicated=infra:NoSchedule
//   n1  zone z2
//   n2  zone z1, unschedulable
//   n3  zone z1, its 4 GPUs taken by a running job
//   n4  zone z1, a PreferNoSchedule taint only (no filter rejects it)
class FiltersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 5; ++i) {
      core::NodeSpec n;
      n.name = "n" + std::to_string(i);
      n.allocatable[core::kCpu] = 8000;
      n.allocatable[core::kGpu] = 4;
      n.labels["zone"] = i == 1 ? "z2" : "z1";
      cluster_.nodes.push_back(n);
    }
    cluster_.nodes[0].taints = {{"dedicated", "infra", core::TaintEffect::kNoSchedule}};
    cluster_.nodes[2].schedulable = false;
    cluster_.nodes[4].taints = {{"soft", "", core::TaintEffect::kPreferNoSchedule}};
    state_.emplace(cluster_);
    const engine::JobIndex busy = Add("busy", 4, {});
    for (int w = 0; w < 4; ++w) state_->PlaceTask({busy, Role::kWorker, w}, 3);
  }

  engine::JobIndex Add(const std::string& name, int workers, core::NodeConstraints c) {
    core::JobSpec j;
    j.name = name;
    auto& w = j.role(Role::kWorker);
    w.replicas = w.min_replicas = w.max_replicas = workers;
    w.resources[core::kCpu] = 1000;
    w.resources[core::kGpu] = 1;
    w.constraints = std::move(c);
    j.total_steps = 1;
    j.throughput.steps_per_s = {{1, 1.0}};
    specs_.push_back(j);
    const engine::JobIndex idx = state_->AddJob(&specs_.back(), 0);
    state_->SetPhase(idx, core::JobPhase::kWaiting, 0);
    return idx;
  }

  core::ClusterSpec cluster_;
  std::deque<core::JobSpec> specs_;
  std::optional<engine::ClusterState> state_;
};

// A worker needing zone z1: n0 has an untolerated taint, n1 is in z2, n2 is
// unschedulable, n3 has no free GPU; n4 fits (its PreferNoSchedule taint is
// no rule). With n4 busy too, the summary counts every reason.
TEST_F(FiltersTest, EachFilterRejectsWithItsReason) {
  core::NodeConstraints z1;
  z1.node_selector = {{"zone", "z1"}};
  const engine::JobIndex j = Add("j", 1, z1);
  const engine::Profile profile = MakeProfile("name: p\n");  // default filters
  engine::CycleState decisions;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, decisions, pods_ctx, memos_ctx, profile, 0};
  const engine::TaskRef t{j, Role::kWorker, 0};
  NodeAffinityFilter affinity;
  TaintTolerationFilter taints;
  EXPECT_EQ(taints.Filter(*state_, t, 0), "untolerated taint dedicated=infra:NoSchedule");
  EXPECT_EQ(affinity.Filter(*state_, t, 0), "");
  EXPECT_EQ(affinity.Filter(*state_, t, 1), "didn't match node selector or affinity");
  EXPECT_EQ(taints.Filter(*state_, t, 4), "");
  EXPECT_EQ(engine::StaticFailure(ctx, t, 2), "unschedulable");
  EXPECT_EQ(engine::SelectNode(ctx, t, nullptr), 4);

  // Fill n4: nothing fits, and the summary says why, node by node.
  const engine::JobIndex other = Add("other", 4, {});
  for (int w = 0; w < 4; ++w) state_->PlaceTask({other, Role::kWorker, w}, 4);
  std::string reason;
  EXPECT_FALSE(engine::PlaceTaskByScore(ctx, t, &reason));
  EXPECT_EQ(reason,
            "0/5 nodes fit Worker: 2 insufficient nvidia.com/gpu (needs 1, at most 0 free), 1 "
            "didn't match node selector or affinity, 1 unschedulable, 1 untolerated taint "
            "dedicated=infra:NoSchedule");
  // Not now, but not never: n3 and n4 could take it once they free GPUs.
  EXPECT_EQ(engine::TaskNeverFits(ctx, t), std::nullopt);
}

// A filter that cannot reject a node for a task says so once per task, so
// the node scan skips it: NodeAffinity for a task without label rules,
// TaintToleration on a cluster without taints.
TEST_F(FiltersTest, AppliesToOnlyWhereAFilterCanReject) {
  core::NodeConstraints z1;
  z1.node_selector = {{"zone", "z1"}};
  const engine::TaskRef ruled{Add("ruled", 1, z1), Role::kWorker, 0};
  const engine::TaskRef plain{Add("plain", 1, {}), Role::kWorker, 0};
  NodeAffinityFilter affinity;
  TaintTolerationFilter taints;
  EXPECT_TRUE(affinity.AppliesTo(*state_, ruled));
  EXPECT_FALSE(affinity.AppliesTo(*state_, plain));
  EXPECT_EQ(state_->NumTaintedNodes(), 2);  // n0 and n4
  EXPECT_TRUE(taints.AppliesTo(*state_, plain));
  for (engine::NodeIndex n : {0, 4}) {
    core::NodeSpec spec = state_->NodeSpecOf(n);
    spec.taints.clear();
    state_->UpdateNode(n, spec);
  }
  EXPECT_EQ(state_->NumTaintedNodes(), 0);
  EXPECT_FALSE(taints.AppliesTo(*state_, plain));
}

// A worker whose selector no node can satisfy can never be placed; gang
// admission says so with UnschedulableAndUnresolvable and, with backfill
// off, does not let it block the jobs behind it.
TEST_F(FiltersTest, NeverFitsIsUnresolvableAndDoesNotBlockAStrictQueue) {
  core::NodeConstraints a100;
  a100.node_selector = {{"gpu-model", "a100"}};
  const engine::JobIndex never = Add("never", 1, a100);
  const engine::JobIndex later = Add("later", 1, {});
  const engine::Engine engine(
      MakeProfile("name: strict\nadmission: {name: Gang, args: {backfill: false}}\n"));
  engine::PodQueue pods;
  engine::Memos memos;
  const engine::Plan plan = engine.Cycle(*state_, pods, memos, 0);
  const engine::Action* wait = nullptr;
  const engine::Action* start = nullptr;
  for (const auto& a : plan.actions) {
    if (a.kind == ActionKind::kWait && a.task.job == never) wait = &a;
    if (a.kind == ActionKind::kStart && a.task.job == later) start = &a;
  }
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->status, WaitStatus::kUnschedulableUnresolvable);
  EXPECT_EQ(wait->reason,
            "waiting: can never fit in this cluster: 0/5 nodes fit Worker: 3 didn't match node "
            "selector or affinity, 1 unschedulable, 1 untolerated taint dedicated=infra:NoSchedule "
            "(cpu=1, nvidia.com/gpu=1) even on an empty cluster");
  EXPECT_NE(start, nullptr) << "the strict queue was blocked";
}

// Tolerating the taint opens n0; with `filters: []` taints and labels are
// ignored altogether.
TEST_F(FiltersTest, TolerationsAndAnEmptyFilterList) {
  core::NodeConstraints tolerant;
  tolerant.tolerations = {{"dedicated", core::Toleration::Op::kEqual, "infra", true, {}}};
  const engine::JobIndex j = Add("tolerant", 1, tolerant);
  const engine::Profile profile = MakeProfile("name: p\n");
  engine::CycleState decisions;
  engine::Session session(*state_);
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, decisions, pods_ctx, memos_ctx, profile, 0};
  EXPECT_TRUE(engine::Fits(ctx, {j, Role::kWorker, 0}, 0));

  const engine::JobIndex k = Add("plain", 1, {});
  EXPECT_FALSE(engine::Fits(ctx, {k, Role::kWorker, 0}, 0));
  const engine::Profile none = MakeProfile("name: p\nfilters: []\n");
  engine::PodQueue pods_bare;
  engine::Memos memos_bare;
  engine::CycleContext bare{session, decisions, pods_bare, memos_bare, none, 0};
  EXPECT_TRUE(engine::Fits(bare, {k, Role::kWorker, 0}, 0));
  EXPECT_FALSE(engine::Fits(bare, {k, Role::kWorker, 0}, 2));  // unschedulable stays a rule
}

}  // namespace
}  // namespace dlsched::policy
