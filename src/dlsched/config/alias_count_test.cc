// How ParseYaml counts what aliases stand for (config/cost_test.cc has
// the inputs it refuses): every alias as the nodes it repeats, and the
// share of a document that may come from aliases.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"

namespace dlsched::config {
namespace {

// A workload whose jobs all reuse one affinity of 100 terms through an
// alias: 18 KB that read as a million nodes. The same shape at 1.6 MB (400
// jobs of 1,000 terms) took minutes to simulate.
std::string AliasedAffinity(int jobs, int terms) {
  std::string list = "[&t {matchExpressions: [{key: zone, operator: In, values: [a, b]}]}";
  for (int i = 1; i < terms; ++i) list += ", *t";
  list += "]";
  std::string text = fmt::format(
      "jobs:\n  - {{name: j0, arrival: 0, duration: 10, worker: {{replicas: 1, resources: "
      "{{nvidia.com/gpu: 1}}, affinity: &a {{nodeAffinity: "
      "{{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: {}}}}}}}}}}}\n",
      list);
  for (int j = 1; j < jobs; ++j) {
    text += fmt::format(
        "  - {{name: j{}, arrival: 0, duration: 10, worker: {{replicas: 1, resources: "
        "{{nvidia.com/gpu: 1}}, affinity: *a}}}}\n",
        j);
  }
  return text;
}

// An alias counts as every node it repeats: what reads the tree (the
// loaders, then the simulator, per task and node) meets each of them.
TEST(AliasCountTest, AliasesCountTheNodesTheyRepeat) {
  // The root map, keys a, b, c; a list of 3; an alias of it under b and
  // two in c's list: 12 nodes built, 21 read, 12 of those through aliases.
  const internal::YamlCount c =
      internal::CountYamlExpansion("a: &x [1, 2, 3]\nb: *x\nc: [*x, *x]\n", 100, 100);
  EXPECT_EQ(c.nodes, 12);
  EXPECT_EQ(c.expanded, 21);
  EXPECT_EQ(c.aliased, 12);
  // An alias inside what it names (a cycle) counts as one.
  const internal::YamlCount loop = internal::CountYamlExpansion("a: &x [*x]\n", 100, 100);
  EXPECT_EQ(loop.expanded, 4);
}

// How the workloads of cost_test.cc are refused: the counts the scan sees.
TEST(AliasCountTest, AliasedDocumentsAsTheScanCountsThem) {
  std::string laughs = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 8; ++level) {
    laughs += fmt::format("l{}: &l{} [*l{}", level, level, level - 1);
    for (int i = 1; i < 10; ++i) laughs += fmt::format(", *l{}", level - 1);
    laughs += "]\n";
  }
  const internal::YamlCount c = internal::CountYamlExpansion(laughs, 1000, core::kMaxYamlNodes);
  EXPECT_LT(c.nodes, 100);
  EXPECT_GT(c.expanded, core::kMaxYamlNodes);
  const internal::YamlCount w = internal::CountYamlExpansion(
      AliasedAffinity(1000, 100), core::kMaxYamlNodes, core::kMaxYamlNodes);
  EXPECT_LT(w.nodes, 20'000);
  EXPECT_GT(w.expanded, 900'000);
  EXPECT_TRUE(internal::ExcessiveAliasing(w));
}

// Kubernetes' decoder's shares, at and between its bounds.
TEST(AliasCountTest, AllowedAliasShare) {
  EXPECT_EQ(internal::AllowedAliasShare(1000), 0.99);
  EXPECT_EQ(internal::AllowedAliasShare(400'000), 0.99);
  EXPECT_NEAR(internal::AllowedAliasShare(2'200'000), 0.545, 1e-9);
  EXPECT_EQ(internal::AllowedAliasShare(4'000'000), 0.10);
  EXPECT_FALSE(internal::ExcessiveAliasing({.nodes = 10, .expanded = 1000, .aliased = 990}));
  EXPECT_TRUE(internal::ExcessiveAliasing({.nodes = 10, .expanded = 1001, .aliased = 998}));
}

}  // namespace
}  // namespace dlsched::config
