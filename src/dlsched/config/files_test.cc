// Loading from files: the shipped examples, read errors and DetectKind.

#include <cstring>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "dlsched/config/specs.h"
#include "dlsched/core/resources.h"

namespace dlsched::config {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

std::string Example(const std::string& name) {
  return std::string(DLSCHED_SOURCE_DIR) + "/examples/" + name;
}

using dlsched::testing::WriteTemp;

TEST(ExamplesTest, Cluster3Node) {
  auto c = LoadCluster(Example("cluster-3node.yaml"));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 3u);
  for (const auto& n : c->nodes) {
    EXPECT_EQ(n.allocatable[core::kCpu], 10000) << n.name;
    EXPECT_EQ(n.allocatable[core::kMemory], 32 * kGi) << n.name;
    EXPECT_EQ(n.allocatable[core::kGpu], 1) << n.name;
    EXPECT_TRUE(n.labels.contains("zone")) << n.name;
    EXPECT_TRUE(n.labels.contains("rack")) << n.name;
    EXPECT_TRUE(n.labels.contains("gpu-model")) << n.name;
    EXPECT_TRUE(n.schedulable);
  }
}

TEST(ExamplesTest, Cluster2x4Gpu) {
  auto c = LoadCluster(Example("cluster-2x4gpu.yaml"));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 2u);
  EXPECT_EQ(c->nodes[0].name, "gpu-0");
  EXPECT_EQ(c->nodes[1].name, "gpu-1");
  EXPECT_EQ(c->Capacity()[core::kGpu], 8);
  EXPECT_EQ(c->Capacity()[core::kCpu], 64000);
  EXPECT_EQ(c->Capacity()[core::kMemory], 256 * kGi);
}

TEST(ExamplesTest, WorkloadFailures) {
  auto w = LoadWorkload(Example("workload-failures.yaml"));
  ASSERT_TRUE(w.has_value()) << w.error().message;
  ASSERT_EQ(w->jobs.size(), 3u);
  EXPECT_EQ(w->jobs[0].role(core::Role::kWorker).restart_policy, core::RestartPolicy::kOnFailure);
  EXPECT_EQ(w->jobs[0].backoff_limit, 2);
  EXPECT_EQ(w->jobs[0].failures.size(), 2u);
  EXPECT_EQ(w->jobs[1].role(core::Role::kWorker).restart_policy, core::RestartPolicy::kNever);
  EXPECT_TRUE(w->jobs[2].failures[0].failure.disruption);
}

TEST(ExamplesTest, ClusterNodeFailure) {
  auto c = LoadCluster(Example("cluster-node-failure.yaml"));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 2u);
  ASSERT_EQ(c->events.size(), 2u);
  EXPECT_EQ(c->events[0].kind, core::NodeEvent::Kind::kFail);
  EXPECT_EQ(c->events[0].node.name, "gpu-1");
  EXPECT_EQ(c->events[1].kind, core::NodeEvent::Kind::kAdd);
  EXPECT_EQ(c->events[1].node.allocatable[core::kGpu], 3);
}

TEST(ExamplesTest, WorkloadSmall) {
  std::string path = Example("workload-small.yaml");
  auto w = LoadWorkload(path);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->source, path);
  ASSERT_GE(w->jobs.size(), 6u);
  ASSERT_LE(w->jobs.size(), 8u);
  int tables = 0;
  int elastic = 0;
  std::set<std::string> models;
  for (size_t i = 0; i < w->jobs.size(); ++i) {
    const auto& j = w->jobs[i];
    if (i > 0) {
      EXPECT_LE(w->jobs[i - 1].submit_time, j.submit_time);
    }
    if (j.throughput.model.empty()) {
      ++tables;
      EXPECT_FALSE(j.throughput.steps_per_s.empty());
    } else {
      models.insert(j.throughput.model);
    }
    const auto& worker = j.role(core::Role::kWorker);
    if (worker.min_replicas < worker.max_replicas) ++elastic;
    EXPECT_GE(j.role(core::Role::kPS).replicas, 1) << j.name;
  }
  EXPECT_EQ(tables, 1);
  EXPECT_GE(elastic, 1);
  EXPECT_EQ(models, (std::set<std::string>{"resnet18", "resnet50", "transformer"}));
}

TEST(ExamplesTest, BrokenWorkload) {
  std::string path = Example("broken-workload.yaml");
  auto w = LoadWorkload(path);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message,
            path + ": jobs[1].worker.minReplicas: 4 is greater than maxReplicas 2");
}

TEST(LoadTest, MissingFile) {
  std::string path = ::testing::TempDir() + "dlsched_config_no_such_file.yaml";
  std::string expected = path + ": cannot read file: " + std::strerror(ENOENT);
  auto c = LoadCluster(path);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message, expected);
  auto w = LoadWorkload(path);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message, expected);
  auto p = LoadProfile(path);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message, expected);
  auto k = DetectKind(path);
  ASSERT_FALSE(k.has_value());
  EXPECT_EQ(k.error().message, expected);
}

TEST(LoadTest, DirectoryIsNotAFile) {
  std::string dir = std::string(DLSCHED_SOURCE_DIR) + "/examples";
  auto c = LoadCluster(dir);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message,
            dir + ": cannot read file: it is a directory; dlsched reads regular files only");
}

TEST(LoadTest, ProfileFromFileUsesPathInWhere) {
  std::string path = WriteTemp("prof.yaml", "name: p\nscorers: [{name: MostAllocated}]\n");
  auto p = LoadProfile(path);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->source, path);
  EXPECT_EQ(p->scorers[0].where, path + ": scorers[0].args");
}

TEST(DetectKindTest, Examples) {
  EXPECT_EQ(DetectKind(Example("cluster-3node.yaml")), FileKind::kCluster);
  EXPECT_EQ(DetectKind(Example("cluster-2x4gpu.yaml")), FileKind::kCluster);
  EXPECT_EQ(DetectKind(Example("workload-small.yaml")), FileKind::kWorkload);
  // Detection looks only at the top-level keys, not at validity.
  EXPECT_EQ(DetectKind(Example("broken-workload.yaml")), FileKind::kWorkload);
}

TEST(DetectKindTest, Profiles) {
  EXPECT_EQ(DetectKind(WriteTemp("p1.yaml", "name: a\norder: FIFO\n")), FileKind::kProfile);
  EXPECT_EQ(DetectKind(WriteTemp("p2.yaml", "name: a\nscorers: []\n")), FileKind::kProfile);
  EXPECT_EQ(DetectKind(WriteTemp("p3.yaml", "name: a\nsizer: {name: Fixed}\n")),
            FileKind::kProfile);
}

TEST(DetectKindTest, Unknown) {
  auto expect_unknown = [](const std::string& name, const std::string& text) {
    std::string path = WriteTemp(name, text);
    auto k = DetectKind(path);
    ASSERT_FALSE(k.has_value()) << text;
    EXPECT_EQ(k.error().message,
              path +
                  ": cannot tell what this file is (expected a cluster with 'nodes', a workload "
                  "with 'jobs', or a profile with 'name' and extension points)");
  };
  expect_unknown("u1.yaml", "name: only-a-name\n");
  expect_unknown("u2.yaml", "order: FIFO\n");
  expect_unknown("u3.yaml", "- nodes\n- jobs\n");
  expect_unknown("u4.yaml", "");
}

// A syntax error before the kind is known is DetectKind's error; after a
// "nodes" or "jobs" key it is left to the parser of that kind, which reads
// the whole file (as `dlsched validate` does next), with the same message.
TEST(DetectKindTest, SyntaxError) {
  for (auto [text, line] :
       {std::pair{"[a\n", 2}, {"name: [a\n", 2}, {"order: FIFO\nname: [a\n", 3}}) {
    std::string path = WriteTemp("bad.yaml", text);
    auto k = DetectKind(path);
    ASSERT_FALSE(k.has_value()) << text;
    EXPECT_EQ(k.error().message,
              path + ":" + std::to_string(line) + ":1: end of sequence flow not found")
        << text;
  }
  std::string path = WriteTemp("bad-cluster.yaml", "nodes: [a\n");
  EXPECT_EQ(DetectKind(path), FileKind::kCluster);
  auto c = LoadCluster(path);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message, path + ":2:1: end of sequence flow not found");
  path = WriteTemp("bad-workload.yaml", "jobs:\n  - {name: a}\n  - [b\n");
  EXPECT_EQ(DetectKind(path), FileKind::kWorkload);
  auto w = LoadWorkload(path);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message, path + ":4:1: end of sequence flow not found");
}

// "nodes" wins over "jobs" wherever it comes among the top-level keys, as
// when the whole file was read; only top-level keys count.
TEST(DetectKindTest, NodesWinsOverJobs) {
  for (const char* text :
       {"jobs: []\nnodes: []\n", "jobs: []\n\"nodes\": []\n", "jobs: []\n? nodes\n: []\n",
        "{jobs: [], nodes: []}\n", "jobs: []\n!!str nodes: []\n", "nodes: 1\njobs: 2\n"}) {
    EXPECT_EQ(DetectKind(WriteTemp("both.yaml", text)), FileKind::kCluster) << text;
  }
  for (const char* text :
       {"jobs:\n  - nodes: 1\n", "start: 0\njobs: []\n", "jobs: []\nnodesx: 1\n",
        "{jobs: [{nodes: 1}]}\n", "jobs:\n  nodes: []\n", "jobs: []\n# nodes: []\n"}) {
    EXPECT_EQ(DetectKind(WriteTemp("jobs.yaml", text)), FileKind::kWorkload) << text;
  }
  EXPECT_EQ(DetectKind(WriteTemp("prof.yaml", "name: a\nnodes: []\norder: FIFO\n")),
            FileKind::kCluster);
}

}  // namespace
}  // namespace dlsched::config
