#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/core/queue.h"
#include "dlsched/core/resources.h"

namespace dlsched::config {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

std::string ClusterError(const std::string& text) {
  auto c = ParseCluster(text, "cluster.yaml");
  EXPECT_FALSE(c.has_value()) << "parsed: " << text;
  return c ? std::string() : c.error().message;
}

TEST(ParseClusterTest, ParsesNodeFields) {
  auto c = ParseCluster(R"(
nodes:
  - name: n1
    resources: {cpu: "10", memory: 32Gi, nvidia.com/gpu: 1}
    labels: {zone: z1, rack: 7, gpu-model: v100}
    schedulable: false
  - name: n2
    resources: {cpu: 500m, example.com/fpga: 2}
)",
                        "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 2u);
  const auto& n1 = c->nodes[0];
  EXPECT_EQ(n1.name, "n1");
  EXPECT_EQ(n1.allocatable[core::kCpu], 10000);  // millicores
  EXPECT_EQ(n1.allocatable[core::kMemory], 32 * kGi);
  EXPECT_EQ(n1.allocatable[core::kGpu], 1);
  EXPECT_EQ(n1.labels.at("zone"), "z1");
  EXPECT_EQ(n1.labels.at("rack"), "7");  // a YAML number is kept as its text
  EXPECT_EQ(n1.labels.at("gpu-model"), "v100");
  EXPECT_FALSE(n1.schedulable);

  const auto& n2 = c->nodes[1];
  EXPECT_EQ(n2.allocatable[core::kCpu], 500);
  EXPECT_TRUE(n2.schedulable);  // default
  EXPECT_TRUE(n2.labels.empty());
  int fpga = core::FindResource("example.com/fpga");
  ASSERT_GE(fpga, 0);
  EXPECT_EQ(n2.allocatable[static_cast<core::ResourceId>(fpga)], 2);
}

TEST(ParseClusterTest, CountExpandsNames) {
  auto c = ParseCluster(R"(
nodes:
  - {name: gpu, count: 3, resources: {nvidia.com/gpu: 4}, labels: {zone: z1}}
  - {name: cpu, count: 1, resources: {cpu: 8}}
)",
                        "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 4u);
  EXPECT_EQ(c->nodes[0].name, "gpu-0");
  EXPECT_EQ(c->nodes[1].name, "gpu-1");
  EXPECT_EQ(c->nodes[2].name, "gpu-2");
  EXPECT_EQ(c->nodes[3].name, "cpu");  // count 1 keeps the name as written
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c->nodes[i].allocatable[core::kGpu], 4);
    EXPECT_EQ(c->nodes[i].labels.at("zone"), "z1");
  }
  EXPECT_EQ(c->Capacity()[core::kGpu], 12);
}

TEST(ParseClusterTest, DuplicateNameAfterExpansion) {
  EXPECT_EQ(ClusterError(R"(
nodes:
  - {name: gpu, count: 2, resources: {cpu: 1}}
  - {name: gpu-1, resources: {cpu: 1}}
)"),
            "cluster.yaml: nodes[1].name: node name 'gpu-1' is already used by nodes[0]");
}

TEST(ParseClusterTest, UnknownKeyListsAllowedKeys) {
  EXPECT_EQ(
      ClusterError("nodes:\n  - {name: a, resources: {cpu: 1}, lables: {zone: z}}\n"),
      "cluster.yaml: nodes[0].lables: unknown key (allowed: name, count, resources, reserved, "
      "labels, gpuType, switch, rack, taints, schedulable); did you mean 'labels'?");
  EXPECT_EQ(ClusterError("node: []\n"),
            "cluster.yaml: node: unknown key (allowed: nodes, events, queues, cohorts); did you "
            "mean 'nodes'?");
}

// `gpuType` is the node's nvidia.com/gpu.product label, as a cluster's GPU
// feature discovery sets it.
// Shared GPUs: a node lists dlsched.io/gpu-milli as 1000 per GPU (or 0);
// anything else names the field, in the nodes and in a node event.
TEST(ParseClusterTest, GpuSharesAreAThousandPerGpu) {
  auto c = ParseCluster(
      "nodes:\n  - {name: a, resources: {nvidia.com/gpu: 2, dlsched.io/gpu-milli: 2000}}\n",
      "c.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->nodes[0].allocatable[core::kGpuMilli], 2000);
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, resources: {nvidia.com/gpu: 2, "
                         "dlsched.io/gpu-milli: 1500}}\n"),
            "cluster.yaml: nodes[0].resources.dlsched.io/gpu-milli: expected 0 or 1000 per "
            "nvidia.com/gpu (2000), got 1500");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, resources: {nvidia.com/gpu: 2}}\nevents:\n  - "
                         "{time: 5, update: {name: a, resources: {dlsched.io/gpu-milli: 8}}}\n"),
            "cluster.yaml: events[0].update.resources.dlsched.io/gpu-milli: expected 0 or 1000 per "
            "nvidia.com/gpu (0), got 8");
}

TEST(ParseClusterTest, GpuTypeIsTheGpuProductLabel) {
  auto c = ParseCluster(
      "nodes:\n  - {name: a, count: 2, gpuType: v100, resources: {nvidia.com/gpu: 8}}\n"
      "  - {name: b, gpuType: k80, labels: {nvidia.com/gpu.product: k80}, resources: {cpu: 1}}\n"
      "  - {name: c, resources: {cpu: 1}}\n",
      "cluster.yaml");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 4u);
  EXPECT_EQ(c->nodes[0].labels.at("nvidia.com/gpu.product"), "v100");
  EXPECT_EQ(c->nodes[1].labels.at("nvidia.com/gpu.product"), "v100");
  EXPECT_EQ(c->nodes[2].labels.at("nvidia.com/gpu.product"), "k80");
  EXPECT_FALSE(c->nodes[3].labels.contains("nvidia.com/gpu.product"));
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, gpuType: v100, labels: {nvidia.com/gpu.product: "
                         "k80}, resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].gpuType: v100 differs from labels.nvidia.com/gpu.product: k80");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, gpuType: [v100], resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].gpuType: expected a name, got a list");
}

// `switch` and `rack` are the node's dlsched.io/switch and dlsched.io/rack
// labels (a YAML number kept as its text).
TEST(ParseClusterTest, SwitchAndRackAreLabels) {
  auto c = ParseCluster(
      "nodes:\n  - {name: a, count: 2, switch: s0, rack: 7, resources: {cpu: 1}}\n"
      "  - {name: b, switch: s1, labels: {dlsched.io/switch: s1}, resources: {cpu: 1}}\n"
      "  - {name: c, resources: {cpu: 1}}\n",
      "cluster.yaml");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 4u);
  EXPECT_EQ(c->nodes[1].labels.at("dlsched.io/switch"), "s0");
  EXPECT_EQ(c->nodes[1].labels.at("dlsched.io/rack"), "7");
  EXPECT_EQ(c->nodes[2].labels.at("dlsched.io/switch"), "s1");
  EXPECT_FALSE(c->nodes[2].labels.contains("dlsched.io/rack"));
  EXPECT_TRUE(c->nodes[3].labels.empty());
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, switch: s0, labels: {dlsched.io/switch: s1}, "
                         "resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].switch: s0 differs from labels.dlsched.io/switch: s1");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, rack: {x: 1}, resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].rack: expected a name, got a map");
}

TEST(ParseClusterTest, StructuralErrors) {
  EXPECT_EQ(ClusterError(""), "cluster.yaml: expected a map with 'nodes', got nothing");
  EXPECT_EQ(ClusterError("nodes: []\n"),
            "cluster.yaml: nodes: expected a non-empty list of nodes, got a list");
  EXPECT_EQ(ClusterError("nodes: {a: 1}\n"),
            "cluster.yaml: nodes: expected a non-empty list of nodes, got a map");
  EXPECT_EQ(ClusterError("nodes:\n  - {resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].name: missing, expected a non-empty string");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a}\n"),
            "cluster.yaml: nodes[0].resources: missing, expected a map of resource name to "
            "quantity");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, resources: [cpu]}\n"),
            "cluster.yaml: nodes[0].resources: expected a map of resource name to quantity, got a "
            "list");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, resources: {cpu: 1, cpu: 2}}\n"),
            "cluster.yaml: nodes[0].resources.cpu: duplicate key");
}

TEST(ParseClusterTest, FieldTypeErrors) {
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, count: 0, resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].count: expected an integer between 1 and 200000, got '0'");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, count: two, resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].count: expected an integer between 1 and 200000, got 'two'");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, schedulable: maybe, resources: {cpu: 1}}\n"),
            "cluster.yaml: nodes[0].schedulable: expected true or false, got 'maybe'");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, resources: {cpu: 1}, labels: {zone: [z]}}\n"),
            "cluster.yaml: nodes[0].labels.zone: expected a string, got a list");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, resources: {cpu: {n: 1}}}\n"),
            "cluster.yaml: nodes[0].resources.cpu: expected a quantity, got a map");
}

TEST(ParseClusterTest, BadQuantityNamesTheField) {
  // The reason comes from core; config adds the file and field path.
  auto reason = [](core::ResourceId id, const char* text) {
    auto r = core::ParseResourceAmount(id, text);
    EXPECT_FALSE(r.has_value());
    return r ? std::string() : r.error().message;
  };
  std::string bad = ClusterError("nodes:\n  - {name: a, resources: {memory: 32GB}}\n");
  EXPECT_EQ(bad, "cluster.yaml: nodes[0].resources.memory: " + reason(core::kMemory, "32GB"));
  EXPECT_NE(bad.find("'32GB'"), std::string::npos) << bad;
  std::string negative = ClusterError("nodes:\n  - {name: a, resources: {cpu: \"-2\"}}\n");
  EXPECT_EQ(negative, "cluster.yaml: nodes[0].resources.cpu: " + reason(core::kCpu, "-2"));
  EXPECT_NE(negative.find("negative"), std::string::npos) << negative;
}

TEST(ParseClusterTest, SyntaxErrorHasLineAndColumn) {
  // yaml-cpp reports an unclosed flow map where the input ends.
  EXPECT_EQ(ClusterError("nodes:\n  - name: a\n    resources: {cpu: 1\n"),
            "cluster.yaml:4:1: end of map flow not found");
}

}  // namespace
}  // namespace dlsched::config

namespace dlsched::config {
namespace {

TEST(ParseClusterTest, Taints) {
  auto c = ParseCluster(R"(
nodes:
  - name: n
    resources: {cpu: 1}
    taints:
      - {key: dedicated, value: infra, effect: NoSchedule}
      - {key: maintenance, effect: NoExecute}
      - {key: dedicated, value: infra, effect: PreferNoSchedule}
)",
                        "c.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const auto& t = c->nodes[0].taints;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(core::FormatTaint(t[0]), "dedicated=infra:NoSchedule");
  EXPECT_EQ(core::FormatTaint(t[1]), "maintenance:NoExecute");
  EXPECT_EQ(t[2].effect, core::TaintEffect::kPreferNoSchedule);
}

TEST(ParseClusterTest, TaintErrors) {
  auto err = [](const std::string& taints) {
    return ClusterError("nodes:\n  - {name: n, resources: {cpu: 1}, taints: " + taints + "}\n");
  };
  EXPECT_EQ(err("[{key: a}]"),
            "cluster.yaml: nodes[0].taints[0].effect: missing, expected NoSchedule, "
            "PreferNoSchedule or NoExecute");
  EXPECT_EQ(err("[{key: a, effect: Evict}]"),
            "cluster.yaml: nodes[0].taints[0].effect: expected NoSchedule, PreferNoSchedule or "
            "NoExecute, got 'Evict'");
  EXPECT_EQ(err("[{effect: NoSchedule}]"),
            "cluster.yaml: nodes[0].taints[0].key: missing, expected a label key");
  EXPECT_EQ(err("[{key: a, effect: NoSchedule}, {key: a, value: b, effect: NoSchedule}]"),
            "cluster.yaml: nodes[0].taints[1]: a taint with key 'a' and effect NoSchedule is "
            "already given");
  EXPECT_EQ(err("{a: b}"),
            "cluster.yaml: nodes[0].taints: expected a list of taints ({key, value, effect}), got "
            "a map");
}

TEST(ParseClusterTest, NodeEvents) {
  auto c = ParseCluster(R"(
nodes:
  - {name: gpu, count: 2, resources: {cpu: "8", nvidia.com/gpu: 4}}
events:
  - {time: 100, fail: gpu-1}
  - {time: 150, update: {name: gpu-0, schedulable: false, taints: [{key: k, effect: NoExecute}]}}
  - {time: 200, add: {name: gpu-1, resources: {cpu: "8", nvidia.com/gpu: 8}, labels: {zone: z2}}}
  - {time: 200, remove: gpu-0}
)",
                        "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->events.size(), 4u);
  const auto& e = c->events;
  EXPECT_EQ(e[0].kind, core::NodeEvent::Kind::kFail);
  EXPECT_EQ(e[0].time, 100);
  EXPECT_EQ(e[0].node.name, "gpu-1");
  EXPECT_EQ(e[1].kind, core::NodeEvent::Kind::kUpdate);
  EXPECT_EQ(e[1].schedulable, false);
  ASSERT_TRUE(e[1].taints.has_value());
  EXPECT_EQ(e[1].taints->front().effect, core::TaintEffect::kNoExecute);
  EXPECT_FALSE(e[1].allocatable.has_value());  // not given: unchanged
  EXPECT_FALSE(e[1].labels.has_value());
  EXPECT_EQ(e[2].kind, core::NodeEvent::Kind::kAdd);  // a failed name may come back
  EXPECT_EQ(e[2].node.allocatable[core::kGpu], 8);
  EXPECT_EQ(e[2].node.labels.at("zone"), "z2");
  EXPECT_EQ(e[3].kind, core::NodeEvent::Kind::kRemove);
  // Capacity is that of the initial nodes.
  EXPECT_EQ(c->Capacity()[core::kGpu], 8);
}

TEST(ParseClusterTest, NodeEventErrors) {
  const std::string nodes = "nodes: [{name: a, resources: {cpu: 1}}]\n";
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5, fail: b}]"),
            "cluster.yaml: events[0].fail: no node 'b' is present at 5s");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5, fail: a}, {time: 6, remove: a}]"),
            "cluster.yaml: events[1].remove: no node 'a' is present at 6s");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5, add: {name: a, resources: {}}}]"),
            "cluster.yaml: events[0].add.name: node name 'a' is already used by nodes[0]");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5, fail: a, remove: a}]"),
            "cluster.yaml: events[0]: give exactly one of add, remove, fail, update");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5}]"),
            "cluster.yaml: events[0]: give exactly one of add, remove, fail, update");
  EXPECT_EQ(ClusterError(nodes + "events: [{fail: a}]"),
            "cluster.yaml: events[0].time: missing, expected a time in seconds");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 9, fail: a}, {time: 5, add: {name: b, "
                                 "resources: {}}}]"),
            "cluster.yaml: events[1].time: 5 is before the previous event's time 9 (list events "
            "in time order)");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5, add: {name: b, count: 2, resources: {}}}]"),
            "cluster.yaml: events[0].add.count: an added node is one node (no count)");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: 5, update: {name: a, zone: z}}]"),
            "cluster.yaml: events[0].update.zone: unknown key (allowed: name, resources, labels, "
            "taints, schedulable)");
  EXPECT_EQ(ClusterError(nodes + "events: [{time: -1, fail: a}]"),
            "cluster.yaml: events[0].time: expected a number in [0, 1000000000], got '-1'");
  EXPECT_EQ(ClusterError(nodes + "events: {time: 1}"),
            "cluster.yaml: events: expected a list of node events, got a map");
}

TEST(ParseClusterTest, Queues) {
  auto c = ParseCluster(
      "nodes:\n  - {name: n, resources: {cpu: 8, nvidia.com/gpu: 8}}\n"
      "queues:\n"
      "  - name: team-a\n"
      "    cohort: research\n"
      "    weight: 2.5\n"
      "    quota: {nvidia.com/gpu: {nominal: 4, borrowingLimit: 2, lendingLimit: 1}, cpu: 500m}\n"
      "  - {name: team-b, quota: {}}\n",
      "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->queues.size(), 2u);
  const core::QueueSpec& a = c->queues[0];
  EXPECT_EQ(a.name, "team-a");
  EXPECT_EQ(a.cohort, "research");
  EXPECT_DOUBLE_EQ(a.weight, 2.5);
  ASSERT_EQ(a.quota.size(), 2u);  // ascending by id: cpu first
  EXPECT_EQ(a.quota[0].id, core::kCpu);
  EXPECT_EQ(a.quota[0].nominal, 500);
  EXPECT_FALSE(a.quota[0].borrowing_limit.has_value());
  EXPECT_EQ(a.quota[1].id, core::kGpu);
  EXPECT_EQ(a.quota[1].nominal, 4);
  EXPECT_EQ(a.quota[1].borrowing_limit, 2);
  EXPECT_EQ(a.quota[1].lending_limit, 1);
  EXPECT_EQ(c->queues[1].cohort, "");
  EXPECT_DOUBLE_EQ(c->queues[1].weight, 1);
  EXPECT_TRUE(c->queues[1].quota.empty());
}

// A quota line per GPU type (Kueue's resource flavors): the key R@T, a
// resource of its own, with the GPU resource interned too.
TEST(ParseClusterTest, QuotaPerGpuType) {
  auto c = ParseCluster(
      "nodes:\n  - {name: n, gpuType: v100, resources: {nvidia.com/gpu: 8}}\n"
      "queues:\n"
      "  - name: a\n"
      "    cohort: c\n"
      "    quota: {nvidia.com/gpu@v100: {nominal: 4, borrowingLimit: 2}, nvidia.com/gpu@k80: 8}\n",
      "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->queues[0].quota.size(), 2u);
  const core::QuotaLine* v100 = c->queues[0].Line(*core::InternResource("nvidia.com/gpu@v100"));
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->nominal, 4);
  EXPECT_EQ(v100->borrowing_limit, 2);
  EXPECT_EQ(c->queues[0].Line(*core::InternResource("nvidia.com/gpu@k80"))->nominal, 8);
  EXPECT_EQ(c->queues[0].Line(core::kGpu), nullptr);
  const std::optional<core::FlavorKey> key = core::SplitFlavor("nvidia.com/gpu@v100");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->resource, "nvidia.com/gpu");
  EXPECT_EQ(key->gpu_type, "v100");

  const std::string expected =
      ": expected a resource name, or RESOURCE@GPU_TYPE for one GPU type's quota (e.g. "
      "nvidia.com/gpu@v100)";
  for (const char* bad : {"nvidia.com/gpu@", "\"@v100\"", "a@b@c"}) {
    const std::string err = ClusterError(std::string("nodes:\n  - {name: n, resources: {cpu: 1}}\n"
                                                     "queues: [{name: a, quota: {") +
                                         bad + ": 1}}]\n");
    EXPECT_TRUE(err.starts_with("cluster.yaml: queues[0].quota.")) << err;
    EXPECT_TRUE(err.ends_with(expected)) << err;
  }
}

TEST(ParseClusterTest, QueueErrors) {
  auto err = [](const std::string& queues) {
    return ClusterError("nodes:\n  - {name: n, resources: {cpu: 1}}\nqueues: " + queues + "\n");
  };
  EXPECT_EQ(err("{a: b}"), "cluster.yaml: queues: expected a list of queues, got a map");
  EXPECT_EQ(err("[{quota: {cpu: 1}}]"),
            "cluster.yaml: queues[0].name: missing, expected a queue name");
  EXPECT_EQ(err("[{name: a}, {name: a}]"),
            "cluster.yaml: queues[1].name: queue name 'a' is already used by queues[0]");
  EXPECT_EQ(err("[{name: a, quotas: {}}]"),
            "cluster.yaml: queues[0].quotas: unknown key (allowed: name, cohort, weight, quota, "
            "priority, capability, guarantee, deserved, preemption); did you mean 'quota'?");
  EXPECT_EQ(err("[{name: a, weight: -1}]"),
            "cluster.yaml: queues[0].weight: expected a number in [0, 1000000], got '-1'");
  EXPECT_EQ(err("[{name: a, quota: {cpu: lots}}]").substr(0, 35),
            "cluster.yaml: queues[0].quota.cpu: ");
  EXPECT_EQ(err("[{name: a, quota: {cpu: {borrowingLimit: 1}}}]"),
            "cluster.yaml: queues[0].quota.cpu.nominal: missing, expected a quantity");
  EXPECT_EQ(err("[{name: a, quota: {cpu: {nominal: 1, borrowingLimit: 1}}}]"),
            "cluster.yaml: queues[0].quota.cpu.borrowingLimit: only allowed for a queue with a "
            "cohort");
  EXPECT_EQ(err("[{name: a, cohort: c, quota: {nvidia.com/gpu: {nominal: 1, lendingLimit: 2}}}]"),
            "cluster.yaml: queues[0].quota.nvidia.com/gpu.lendingLimit: 2 is more than the "
            "nominal quota 1");
  EXPECT_EQ(err("[{name: a, cohort: c, quota: {cpu: {nominal: 1, limit: 2}}}]"),
            "cluster.yaml: queues[0].quota.cpu.limit: unknown key (allowed: nominal, "
            "borrowingLimit, lendingLimit)");
  EXPECT_EQ(err("[{name: a, preemption: {withinQueue: Any}}]"),
            "cluster.yaml: queues[0].preemption.withinQueue: expected Never, LowerPriority or "
            "LowerOrNewerEqualPriority, got 'Any'");
  EXPECT_EQ(err("[{name: a, preemption: {borrowWithinCohort: Any}}]"),
            "cluster.yaml: queues[0].preemption.borrowWithinCohort: expected Never or "
            "LowerPriority, got 'Any'");
  EXPECT_EQ(err("[{name: a, preemption: {maxPriorityThreshold: 3}}]"),
            "cluster.yaml: queues[0].preemption.maxPriorityThreshold: expected low, normal or "
            "high, got '3'");
  EXPECT_EQ(err("[{name: a, preemption: {within: Never}}]"),
            "cluster.yaml: queues[0].preemption.within: unknown key (allowed: withinQueue, "
            "reclaimWithinCohort, borrowWithinCohort, maxPriorityThreshold)");
}

TEST(ParseClusterTest, QueuePreemption) {
  auto c = ParseCluster(
      "nodes:\n  - {name: n, resources: {cpu: 1}}\nqueues:\n"
      "  - {name: a, preemption: {withinQueue: LowerOrNewerEqualPriority, "
      "reclaimWithinCohort: Never, borrowWithinCohort: LowerPriority, maxPriorityThreshold: "
      "normal}}\n  - {name: b}\n",
      "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const core::QueuePreemption& p = c->queues[0].preemption;
  EXPECT_EQ(p.within_queue, core::PreemptionPolicy::kLowerOrNewerEqualPriority);
  EXPECT_EQ(p.reclaim_within_cohort, core::PreemptionPolicy::kNever);
  EXPECT_EQ(p.borrow_within_cohort, core::PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(p.max_priority_threshold, core::PriorityClass::kNormal);
  EXPECT_TRUE(c->queues[1].preemption.Empty());
}

// Cohorts: a tree with quotas of their own; each mistake named.
TEST(ParseClusterTest, Cohorts) {
  const std::string nodes = "nodes:\n  - {name: a, resources: {nvidia.com/gpu: 8}}\n";
  const std::string queues = "queues:\n  - {name: q, cohort: team, quota: {nvidia.com/gpu: 2}}\n";
  auto c = ParseCluster(nodes + queues + R"(cohorts:
  - {name: team, parent: org, weight: 2, quota: {nvidia.com/gpu: {nominal: 1, borrowingLimit: 3}}}
  - {name: org, quota: {nvidia.com/gpu: 4}}
)",
                        "cluster.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->cohorts.size(), 2u);
  EXPECT_EQ(c->cohorts[0].parent, "org");
  EXPECT_EQ(c->cohorts[0].weight, 2);
  EXPECT_EQ(c->cohorts[0].quota[0].nominal, 1);
  EXPECT_EQ(*c->cohorts[0].quota[0].borrowing_limit, 3);
  EXPECT_EQ(ClusterError(nodes + "cohorts:\n  - {name: a, parent: b}\n  - {name: b, parent: a}\n"),
            "cluster.yaml: cohorts[0].parent: the cohorts' parents form a cycle: a -> b -> a");
  EXPECT_EQ(ClusterError(nodes + "cohorts:\n  - {name: a, parent: a}\n"),
            "cluster.yaml: cohorts[0].parent: a cohort cannot be its own parent");
  EXPECT_EQ(ClusterError(nodes + "cohorts:\n  - {name: a}\n  - {name: a}\n"),
            "cluster.yaml: cohorts[1].name: cohort name 'a' is already used by cohorts[0]");
  EXPECT_EQ(ClusterError(nodes + "cohorts:\n  - {name: a, quota: {nvidia.com/gpu: {nominal: 1, "
                                 "lendingLimit: 1}}}\n"),
            "cluster.yaml: cohorts[0].quota.nvidia.com/gpu.lendingLimit: only allowed for a "
            "cohort with a parent");
  EXPECT_EQ(ClusterError(nodes + "cohorts:\n  - {name: a, parant: b}\n"),
            "cluster.yaml: cohorts[0].parant: unknown key (allowed: name, parent, weight, quota); "
            "did you mean 'parent'?");
}

}  // namespace
}  // namespace dlsched::config
