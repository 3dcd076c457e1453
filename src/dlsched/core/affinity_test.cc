#include "dlsched/core/affinity.h"

#include <gtest/gtest.h>

namespace dlsched::core {
namespace {

using Op = NodeSelectorRequirement::Op;

NodeSelectorRequirement Req(std::string key, Op op, std::vector<std::string> values = {}) {
  return NodeSelectorRequirement{std::move(key), op, std::move(values)};
}

// A v100 node in zone z1 with 8 GPUs, no "spot" label.
const Labels kNode = {{"zone", "z1"}, {"gpu-model", "v100"}, {"gpus", "8"}};

TEST(NodeSelectorRequirementTest, EveryOperatorAsKubernetes) {
  EXPECT_TRUE(Matches(Req("zone", Op::kIn, {"z1", "z2"}), kNode));
  EXPECT_FALSE(Matches(Req("zone", Op::kIn, {"z2"}), kNode));
  EXPECT_FALSE(Matches(Req("spot", Op::kIn, {"true"}), kNode));  // absent label: no match
  EXPECT_TRUE(Matches(Req("zone", Op::kNotIn, {"z2"}), kNode));
  EXPECT_FALSE(Matches(Req("zone", Op::kNotIn, {"z1"}), kNode));
  EXPECT_TRUE(Matches(Req("spot", Op::kNotIn, {"true"}), kNode));  // absent label: matches
  EXPECT_TRUE(Matches(Req("gpu-model", Op::kExists), kNode));
  EXPECT_FALSE(Matches(Req("spot", Op::kExists), kNode));
  EXPECT_TRUE(Matches(Req("spot", Op::kDoesNotExist), kNode));
  EXPECT_FALSE(Matches(Req("zone", Op::kDoesNotExist), kNode));
  // Gt / Lt compare integers; a label that is not one never matches.
  EXPECT_TRUE(Matches(Req("gpus", Op::kGt, {"4"}), kNode));
  EXPECT_FALSE(Matches(Req("gpus", Op::kGt, {"8"}), kNode));
  EXPECT_TRUE(Matches(Req("gpus", Op::kLt, {"9"}), kNode));
  EXPECT_FALSE(Matches(Req("zone", Op::kGt, {"0"}), kNode));
  EXPECT_FALSE(Matches(Req("spot", Op::kLt, {"100"}), kNode));
}

// Terms are ORed, requirements in a term ANDed; an empty term matches
// nothing; the nodeSelector must hold as well.
TEST(NodeConstraintsTest, TermsAndSelector) {
  NodeConstraints c;
  EXPECT_TRUE(MatchesLabels(c, kNode));  // no rules
  c.required_terms = {
      NodeSelectorTerm{{Req("zone", Op::kIn, {"z2"})}},
      NodeSelectorTerm{{Req("gpu-model", Op::kIn, {"v100"}), Req("gpus", Op::kGt, {"4"})}}};
  EXPECT_TRUE(MatchesLabels(c, kNode));  // the second term matches
  c.required_terms[1].match_expressions.push_back(Req("spot", Op::kExists));
  EXPECT_FALSE(MatchesLabels(c, kNode));  // neither term now
  c.required_terms = {NodeSelectorTerm{}};
  EXPECT_FALSE(MatchesLabels(c, kNode));  // an empty term matches nothing
  c.required_terms.clear();
  c.node_selector = {{"zone", "z1"}};
  EXPECT_TRUE(MatchesLabels(c, kNode));
  c.node_selector["gpu-model"] = "a100";
  EXPECT_FALSE(MatchesLabels(c, kNode));
}

TEST(TolerationTest, KeysValuesEffectsAsKubernetes) {
  const Taint infra{"dedicated", "infra", TaintEffect::kNoSchedule};
  Toleration equal{"dedicated", Toleration::Op::kEqual, "infra", true, TaintEffect::kNoSchedule};
  EXPECT_TRUE(Tolerates(equal, infra));
  equal.value = "batch";
  EXPECT_FALSE(Tolerates(equal, infra));
  const Toleration exists{"dedicated", Toleration::Op::kExists, "", true, {}};
  EXPECT_TRUE(Tolerates(exists, infra));
  // An empty key with Exists tolerates every taint.
  const Toleration all{"", Toleration::Op::kExists, "", true, {}};
  EXPECT_TRUE(Tolerates(all, infra));
  // With an effect, only taints of that effect.
  const Toleration no_exec{"dedicated", Toleration::Op::kExists, "", false,
                           TaintEffect::kNoExecute};
  EXPECT_FALSE(Tolerates(no_exec, infra));
  EXPECT_TRUE(Tolerates(no_exec, Taint{"dedicated", "x", TaintEffect::kNoExecute}));
}

// PreferNoSchedule never keeps a task off a node; the first untolerated
// NoSchedule or NoExecute taint does.
TEST(TolerationTest, FirstUntoleratedTaint) {
  const std::vector<Taint> taints = {{"soft", "", TaintEffect::kPreferNoSchedule},
                                     {"gpu", "only", TaintEffect::kNoSchedule},
                                     {"maintenance", "", TaintEffect::kNoExecute}};
  const Taint* first = FirstUntoleratedTaint(taints, {});
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(FormatTaint(*first), "gpu=only:NoSchedule");
  const std::vector<Toleration> gpu = {{"gpu", Toleration::Op::kEqual, "only", true, {}}};
  first = FirstUntoleratedTaint(taints, gpu);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(FormatTaint(*first), "maintenance:NoExecute");
  EXPECT_EQ(FirstUntoleratedNoExecute(taints, gpu), first);
  const std::vector<Toleration> both = {gpu[0],
                                        {"maintenance", Toleration::Op::kExists, "", true, {}}};
  EXPECT_EQ(FirstUntoleratedTaint(taints, both), nullptr);
}

// How long a running task stays under a NoExecute taint (Kubernetes'
// taint eviction with the DefaultTolerationSeconds admission).
TEST(AffinityTest, NoExecuteGrace) {
  const Taint maint{"maintenance", "", TaintEffect::kNoExecute};
  const Taint unreachable{std::string(kUnreachableTaint), "", TaintEffect::kNoExecute};
  const Taint not_ready{std::string(kNotReadyTaint), "", TaintEffect::kNoExecute};
  auto exists = [](std::string key, std::optional<double> seconds) {
    Toleration t{std::move(key), Toleration::Op::kExists, "", false, TaintEffect::kNoExecute};
    t.seconds = seconds;
    return t;
  };
  EXPECT_EQ(NoExecuteGrace(maint, {}), 0.0);          // not tolerated: at once
  EXPECT_EQ(NoExecuteGrace(unreachable, {}), 300.0);  // the admission's default
  EXPECT_EQ(NoExecuteGrace(not_ready, {}), 300.0);
  EXPECT_EQ(NoExecuteGrace(unreachable, {exists("node.kubernetes.io/unreachable", 30)}), 30.0);
  EXPECT_EQ(NoExecuteGrace(maint, {exists("maintenance", std::nullopt)}), std::nullopt);
  // The least of those that tolerate it; a negative one is 0; one without
  // seconds does not lift the others' limit.
  EXPECT_EQ(NoExecuteGrace(maint, {exists("maintenance", 60), exists("", 20),
                                   exists("maintenance", std::nullopt)}),
            20.0);
  EXPECT_EQ(NoExecuteGrace(maint, {exists("maintenance", -5)}), 0.0);
  // A toleration of another key leaves the default in place.
  EXPECT_EQ(NoExecuteGrace(unreachable, {exists("maintenance", 10)}), 300.0);
}

}  // namespace
}  // namespace dlsched::core
