// What an input may cost: the memory a parsed file holds grows with the
// file, not with its square or with the numbers in it, and YAML aliases
// cannot make a small file stand for a huge one. Memory is measured as the
// bytes the allocator holds (glibc's mallinfo2, or AddressSanitizer's own
// count under the sanitize preset), never as time.
#include <malloc.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer's count of the bytes its allocator holds (GCC ships no
// header for it).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace dlsched::config {
namespace {

// Bytes currently allocated by this process.
int64_t AllocatedBytes() {
#if defined(__SANITIZE_ADDRESS__)
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  return static_cast<int64_t>(mallinfo2().uordblks + mallinfo2().hblkhd);
#endif
}

// The bytes `make()`'s result holds while it lives.
template <typename Make>
int64_t HeldBytes(Make make) {
  const int64_t before = AllocatedBytes();
  auto kept = make();
  const int64_t after = AllocatedBytes();
  EXPECT_TRUE(kept.has_value()) << kept.error().message;
  return after - before;
}

// A profile of `n` scorers, each with args. yaml-cpp merged the whole
// document's node set into each plugin's `args` when it was assigned to a
// map made apart (DefaultPlugin's), so every scorer held a copy of the set
// of all nodes: 2,000 scorers (144 KB) took 3.1 GB.
std::string Scorers(int n) {
  std::string text = "name: many\nscorers:\n";
  for (int i = 0; i < n; ++i) {
    text +=
        "  - {name: LeastAllocated, weight: 1, args: {resources: [{name: cpu, weight: 1}, "
        "{name: memory, weight: 1}]}}\n";
  }
  return text;
}

TEST(CostTest, ProfileArgsHoldTheirOwnNodesOnly) {
  const int64_t small = HeldBytes([] { return ParseProfile(Scorers(100), "p.yaml"); });
  const int64_t large = HeldBytes([] { return ParseProfile(Scorers(400), "p.yaml"); });
  // Linear: 4 times the scorers, about 4 times the bytes (quadratic: 16).
  EXPECT_LT(large, 6 * small) << small << " bytes for 100 scorers, " << large << " for 400";
  EXPECT_LT(large / 400, 64 << 10) << large << " bytes for 400 scorers";
}

// A job given by its `duration` kept a throughput table with an entry per
// size up to maxReplicas (64 bytes each): 300 jobs of maxReplicas 100,000
// took 1.9 GB, while the workload limit of 10^8 tasks was documented as
// 400 MB. The rate at each size now follows from the scaling curve.
TEST(CostTest, DurationJobsHoldNoTablePerSize) {
  std::string text = "jobs:\n";
  for (int i = 0; i < 3; ++i) {
    text += fmt::format(
        "  - {{name: j{}, arrival: 0, duration: 100, scaling: sqrt, worker: {{replicas: 4, "
        "minReplicas: 2, maxReplicas: 100000, resources: {{nvidia.com/gpu: 1}}}}}}\n",
        i);
  }
  EXPECT_LT(HeldBytes([&] { return ParseWorkload(text, "w.yaml"); }), 256 << 10);
  auto w = ParseWorkload(text, "w.yaml");
  ASSERT_TRUE(w) << w.error().message;
  const core::ThroughputProfile& tp = w->jobs[0].throughput;
  EXPECT_TRUE(tp.steps_per_s.empty());
  // The rates the table held: 0 below minReplicas, Speedup(m) / Speedup(4)
  // up to maxReplicas, flat above.
  EXPECT_EQ(tp.Rate(1), 0);
  EXPECT_EQ(tp.Rate(4), 1.0);
  for (int m : {2, 3, 5, 99, 100000}) {
    EXPECT_EQ(tp.Rate(m), std::sqrt(double(m)) / std::sqrt(4.0)) << m;
  }
  EXPECT_EQ(tp.Rate(100001), tp.Rate(100000));
}

// Ten aliases of ten aliases of ... ("billion laughs"): 8 levels stand for
// 10^8 nodes in 300 bytes.
std::string Laughs() {
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 8; ++level) {
    text += fmt::format("l{}: &l{} [", level, level);
    for (int i = 0; i < 10; ++i) text += fmt::format("{}*l{}", i ? ", " : "", level - 1);
    text += "]\n";
  }
  return text;
}

// The scan stops past the limit, after a few hundred events.
TEST(CostTest, AliasesCannotStandForMoreNodesThanTheLimit) {
  auto parsed = internal::ParseYaml(Laughs(), "laughs.yaml");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message,
            "laughs.yaml: its aliases (*name) repeat nodes to more than 5000000 in all; YAML "
            "inputs are limited to that many, counting each alias as the nodes it repeats");
}

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

TEST(CostTest, AliasesMayNotMultiplyAWorkload) {
  const std::string text = AliasedAffinity(1000, 100);
  auto w = ParseWorkload(text, "w.yaml");
  ASSERT_FALSE(w.has_value());
  EXPECT_TRUE(w.error().message.starts_with("w.yaml: its aliases (*name) repeat nodes to "))
      << w.error().message;
  EXPECT_TRUE(w.error().message.ends_with(" may not come from aliases")) << w.error().message;
  // Reuse is fine: a few jobs sharing one block.
  auto few = ParseWorkload(AliasedAffinity(5, 3), "w.yaml");
  ASSERT_TRUE(few.has_value()) << few.error().message;
  EXPECT_EQ(few->jobs[4].role(core::Role::kWorker).constraints.required_terms.size(), 3u);
}

// An alias counts as every node it repeats: what reads the tree (the
// loaders, then the simulator, per task and node) meets each of them.
TEST(CostTest, AliasesCountTheNodesTheyRepeat) {
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
  // The refused documents above, as the scan counts them.
  const internal::YamlCount laughs =
      internal::CountYamlExpansion(Laughs(), 1000, core::kMaxYamlNodes);
  EXPECT_LT(laughs.nodes, 100);
  EXPECT_GT(laughs.expanded, core::kMaxYamlNodes);
  const internal::YamlCount w = internal::CountYamlExpansion(
      AliasedAffinity(1000, 100), core::kMaxYamlNodes, core::kMaxYamlNodes);
  EXPECT_LT(w.nodes, 20'000);
  EXPECT_GT(w.expanded, 900'000);
  EXPECT_TRUE(internal::ExcessiveAliasing(w));
}

// Kubernetes' decoder's shares, at and between its bounds.
TEST(CostTest, AllowedAliasShare) {
  EXPECT_EQ(internal::AllowedAliasShare(1000), 0.99);
  EXPECT_EQ(internal::AllowedAliasShare(400'000), 0.99);
  EXPECT_NEAR(internal::AllowedAliasShare(2'200'000), 0.545, 1e-9);
  EXPECT_EQ(internal::AllowedAliasShare(4'000'000), 0.10);
  EXPECT_FALSE(internal::ExcessiveAliasing({.nodes = 10, .expanded = 1000, .aliased = 990}));
  EXPECT_TRUE(internal::ExcessiveAliasing({.nodes = 10, .expanded = 1001, .aliased = 998}));
}

}  // namespace
}  // namespace dlsched::config
