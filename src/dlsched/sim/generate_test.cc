#include "dlsched/sim/generate.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/affinity.h"
#include "dlsched/core/limits.h"
#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::sim {
namespace {

config::WorkloadSpec Generate(const GenerateOptions& o) {
  auto w = GenerateWorkload(o);
  EXPECT_TRUE(w.has_value()) << w.error().message;
  return w ? *w : config::WorkloadSpec{};
}

// Writes `text` to a fresh file and loads it the way the CLI does
// (config::LoadWorkload, then model-zoo resolution).
core::Result<config::WorkloadSpec> LoadViaFile(const std::string& text, const std::string& name) {
  const std::string path = dlsched::testing::WriteTemp("generate-" + name + ".yaml", text);
  auto w = LoadWorkload(path);
  std::filesystem::remove(path);
  return w;
}

void ExpectSameJobs(const config::WorkloadSpec& a, const config::WorkloadSpec& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const core::JobSpec& x = a.jobs[i];
    const core::JobSpec& y = b.jobs[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.namespace_name, y.namespace_name);
    EXPECT_EQ(x.submit_time, y.submit_time);  // exact: the YAML holds the shortest exact text
    EXPECT_EQ(x.priority, y.priority);
    EXPECT_EQ(x.queue, y.queue);
    for (int r = 0; r < core::kNumRoles; ++r) {
      EXPECT_EQ(x.roles()[r].replicas, y.roles()[r].replicas) << "role " << r;
      EXPECT_EQ(x.roles()[r].min_replicas, y.roles()[r].min_replicas) << "role " << r;
      EXPECT_EQ(x.roles()[r].max_replicas, y.roles()[r].max_replicas) << "role " << r;
      EXPECT_EQ(x.roles()[r].resources, y.roles()[r].resources) << "role " << r;
    }
    EXPECT_EQ(x.total_steps, y.total_steps);
    EXPECT_EQ(x.throughput.model, y.throughput.model);
    EXPECT_EQ(x.throughput.steps_per_s, y.throughput.steps_per_s);
    EXPECT_EQ(x.throughput.locality_sensitivity, y.throughput.locality_sensitivity);
    EXPECT_EQ(x.launch_delay, y.launch_delay);
    EXPECT_EQ(x.checkpoint_delay, y.checkpoint_delay);
    EXPECT_EQ(x.deadline, y.deadline);
    EXPECT_EQ(x.max_wait_minutes, y.max_wait_minutes);
  }
}

TEST(GenerateTest, SameSeedGivesIdenticalYaml) {
  GenerateOptions o;
  o.jobs = 500;
  o.seed = 7;
  const std::string a = WorkloadToYaml(Generate(o));
  const std::string b = WorkloadToYaml(Generate(o));
  EXPECT_EQ(a, b);
  o.seed = 8;
  EXPECT_NE(a, WorkloadToYaml(Generate(o)));
}

// Seed 42, 3 jobs, mean inter-arrival 30 s.
constexpr const char* kGolden42 = R"(jobs:
  - name: job-0
    arrival: 0
    worker: {replicas: 2, resources: {cpu: "5", memory: "16Gi", nvidia.com/gpu: "1"}}
    totalSteps: 3530
    throughput: {model: resnet50-k80}
  - name: job-1
    arrival: 14.842
    ps: {replicas: 2, resources: {cpu: "3", memory: "4Gi"}}
    worker: {replicas: 1, resources: {cpu: "4", memory: "8Gi", nvidia.com/gpu: "1"}}
    totalSteps: 1241
    throughput: {model: resnet50}
  - name: job-2
    arrival: 16.845
    ps: {replicas: 1, resources: {cpu: "3", memory: "4Gi"}}
    worker: {replicas: 1, maxReplicas: 2, resources: {cpu: "2", memory: "8Gi", nvidia.com/gpu: "1"}}
    totalSteps: 35159
    throughput: {model: transformer}
)";

// Pins the stream for one seed: the distributions are our own integer
// arithmetic on std::mt19937_64 (whose output the standard fixes), so this
// holds on every standard library. If it changes, published seeds change.
TEST(GenerateTest, SeedIsStableAcrossBuilds) {
  GenerateOptions o;
  o.jobs = 3;
  o.seed = 42;
  o.mean_interarrival = 30;
  const config::WorkloadSpec w = Generate(o);
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(WorkloadToYaml(w), kGolden42);
}

TEST(GenerateTest, YamlRoundTripsThroughParserAndModelZoo) {
  GenerateOptions o;
  o.jobs = 300;
  o.seed = 3;
  o.mean_interarrival = 12.5;
  const config::WorkloadSpec generated = Generate(o);
  auto loaded = LoadViaFile(WorkloadToYaml(generated), "roundtrip");
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  ExpectSameJobs(generated, *loaded);
  // And writing what was read gives the same text again.
  EXPECT_EQ(WorkloadToYaml(*loaded), WorkloadToYaml(generated));
}

TEST(GenerateTest, JobsHaveTheAdvertisedShape) {
  GenerateOptions o;
  o.jobs = 2000;
  o.seed = 11;
  o.mean_interarrival = 40;
  o.min_steps = 500;
  o.max_steps = 50000;
  const config::WorkloadSpec w = Generate(o);
  ASSERT_EQ(w.jobs.size(), 2000u);
  std::set<std::string> names;
  std::set<std::string> models;
  std::set<int> ps_counts;
  int elastic = 0;
  for (size_t i = 0; i < w.jobs.size(); ++i) {
    const core::JobSpec& j = w.jobs[i];
    SCOPED_TRACE(j.name);
    EXPECT_TRUE(names.insert(j.name).second);
    if (i > 0) {
      EXPECT_GE(j.submit_time, w.jobs[i - 1].submit_time);
    }
    const core::RoleSpec& ps = j.role(core::Role::kPS);
    EXPECT_GE(ps.replicas, 0);
    EXPECT_LE(ps.replicas, 2);
    ps_counts.insert(ps.replicas);
    if (ps.replicas > 0) {
      EXPECT_GT(ps.resources[core::kCpu], 0);
      EXPECT_GT(ps.resources[core::kMemory], 0);
      EXPECT_EQ(ps.resources[core::kGpu], 0);
    }
    EXPECT_EQ(j.role(core::Role::kChief).replicas, 0);
    const core::RoleSpec& wk = j.role(core::Role::kWorker);
    EXPECT_GE(wk.min_replicas, 1);
    EXPECT_LE(wk.min_replicas, wk.replicas);
    EXPECT_LE(wk.replicas, wk.max_replicas);
    EXPECT_LE(wk.max_replicas, 8);
    EXPECT_EQ(wk.resources[core::kGpu], 1);
    if (wk.min_replicas < wk.max_replicas) ++elastic;
    EXPECT_GE(j.total_steps, 500);
    EXPECT_LE(j.total_steps, 50000);
    ASSERT_NE(FindModel(j.throughput.model), nullptr);
    EXPECT_EQ(j.throughput.steps_per_s, FindModel(j.throughput.model)->steps_per_s);
    models.insert(j.throughput.model);
  }
  EXPECT_EQ(ps_counts, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(models.size(), ModelNames().size());
  // Fixed seed, so these are exact facts about one sample, not flaky bounds.
  EXPECT_GT(elastic, 300);
  EXPECT_LT(elastic, 500);
  const double mean = w.jobs.back().submit_time / (w.jobs.size() - 1);
  EXPECT_NEAR(mean, 40, 4);
  EXPECT_EQ(w.jobs.front().submit_time, 0);
}

TEST(GenerateTest, MaxWorkersOneMeansNoElasticity) {
  GenerateOptions o;
  o.jobs = 200;
  o.max_workers = 1;
  o.elastic_fraction = 1;
  for (const auto& j : Generate(o).jobs) {
    EXPECT_EQ(j.role(core::Role::kWorker).replicas, 1);
    EXPECT_EQ(j.role(core::Role::kWorker).max_replicas, 1);
  }
}

TEST(GenerateTest, ZeroInterarrivalPutsEveryJobAtTimeZero) {
  GenerateOptions o;
  o.jobs = 10;
  o.mean_interarrival = 0;
  for (const auto& j : Generate(o).jobs) EXPECT_EQ(j.submit_time, 0);
}

TEST(GenerateTest, BadOptionsNameTheOption) {
  GenerateOptions o;
  o.jobs = 0;
  auto w = GenerateWorkload(o);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message, "--jobs: expected an integer between 1 and 1000000, got 0");

  o = {};
  o.mean_interarrival = -1;
  ASSERT_FALSE(GenerateWorkload(o).has_value());
  EXPECT_NE(GenerateWorkload(o).error().message.find("--mean-interarrival"), std::string::npos);

  o = {};
  o.min_steps = 100;
  o.max_steps = 10;
  ASSERT_FALSE(GenerateWorkload(o).has_value());
  EXPECT_NE(GenerateWorkload(o).error().message.find("--max-steps"), std::string::npos);
}

// The writer handles what the generator never produces: chief, table
// throughput, non-default fields and names that need quoting.
TEST(GenerateTest, WriterRoundTripsHandWrittenJobs) {
  const std::string text = R"(jobs:
  - name: "odd: name"
    namespace: team-a
    arrival: 1.25
    priority: high
    maxWaitMinutes: 10
    queue: batch
    chief:  {replicas: 1, resources: {cpu: 500m, memory: 2Gi}}
    ps:     {replicas: 2, resources: {cpu: "2", memory: 4Gi}}
    worker: {replicas: 2, minReplicas: 1, maxReplicas: 3, resources: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 1}}
    totalSteps: 800.5
    throughput: {table: {1: 4.4, 2: 7.9, 3: 9.45}, localitySensitivity: 0.3}
    launchDelay: 5
    checkpointDelay: 2.5
    deadline: 7200
  - name: "null"
    arrival: 0
    worker: {replicas: 1, resources: {nvidia.com/gpu: 1}}
    totalSteps: 100
    throughput: {model: resnet50}
)";
  auto first = LoadViaFile(text, "hand");
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto second = LoadViaFile(WorkloadToYaml(*first), "hand2");
  ASSERT_TRUE(second.has_value()) << second.error().message << "\n" << WorkloadToYaml(*first);
  ExpectSameJobs(*first, *second);
}

TEST(GenerateTest, ClusterYamlParses) {
  ClusterOptions o;
  o.nodes = 70;
  o.gpus_per_node = 4;
  o.nodes_per_rack = 32;
  auto text = ClusterYaml(o);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  auto cluster = config::ParseCluster(*text, "generated.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  ASSERT_EQ(cluster->nodes.size(), 70u);
  EXPECT_EQ(cluster->nodes[0].name, "r000-0");
  EXPECT_EQ(cluster->nodes[69].name, "r002-5");
  EXPECT_EQ(cluster->nodes[69].labels.at("rack"), "r002");
  EXPECT_EQ(cluster->nodes[69].labels.at("zone"), "z0");
  EXPECT_EQ(cluster->Capacity()[core::kGpu], 280);
  EXPECT_EQ(cluster->nodes[0].allocatable[core::kCpu], 64000);
  EXPECT_EQ(cluster->nodes[0].allocatable[core::kMemory], int64_t{512} << 30);

  o.nodes = 0;
  ASSERT_FALSE(ClusterYaml(o).has_value());
  EXPECT_EQ(ClusterYaml(o).error().message,
            "--nodes: expected an integer between 1 and 200000, got 0");
}

// --gpu-types: 7 nodes over k80, p100, v100 are 3, 2 and 2 (the first
// groups one more), in racks of 2 of one type each: r000 (k80, 2 nodes),
// r001 (k80, 1), r002 (p100, 2), r003 (v100, 2). Without types the file is
// what it was.
TEST(GenerateTest, GpuTypesSplitTheClusterByType) {
  ClusterOptions o;
  o.nodes = 7;
  o.nodes_per_rack = 2;
  const std::string plain = *ClusterYaml(o);
  EXPECT_EQ(plain.find("gpuType"), std::string::npos);
  o.gpu_types = {"k80", "p100", "v100"};
  auto text = ClusterYaml(o);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  auto cluster = config::ParseCluster(*text, "generated.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  std::vector<std::string> got;
  for (const core::NodeSpec& n : cluster->nodes) {
    got.push_back(n.name + ":" + n.labels.at("nvidia.com/gpu.product") + ":" +
                  n.labels.at("gpu-model"));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"r000-0:k80:k80", "r000-1:k80:k80", "r001:k80:k80",
                                           "r002-0:p100:p100", "r002-1:p100:p100",
                                           "r003-0:v100:v100", "r003-1:v100:v100"}));
  o.nodes = 2;
  ASSERT_FALSE(ClusterYaml(o).has_value());
  EXPECT_EQ(ClusterYaml(o).error().message,
            "--nodes: expected at least one node per GPU type (3), got 2");
  o.nodes = 7;
  o.gpu_types = {"k80", "k80"};
  EXPECT_EQ(ClusterYaml(o).error().message, "--gpu-types: 'k80' is given twice");
  o.gpu_types = {"a|b"};
  EXPECT_EQ(ClusterYaml(o).error().message,
            "--gpu-types: 'a|b': expected a name without '|', ',', '\"' or spaces");
}

// --typed-fraction: about that share of jobs require one type, each of the
// types drawn; the requirement survives the YAML and the native format;
// a fraction of 0 draws nothing, so the seed's workload is unchanged.
TEST(GenerateTest, TypedFractionOfJobsRequireOneGpuType) {
  GenerateOptions o;
  o.jobs = 2000;
  const std::string before = WorkloadToYaml(Generate(o));
  o.gpu_types = {"k80", "p100", "v100"};
  EXPECT_EQ(WorkloadToYaml(Generate(o)), before);
  o.typed_fraction = 0.3;
  const config::WorkloadSpec w = Generate(o);
  std::map<std::string, int> by_type;
  int typed = 0;
  for (const core::JobSpec& job : w.jobs) {
    const core::NodeConstraints& c = job.role(core::Role::kWorker).constraints;
    if (!c.HasLabelRules()) continue;
    ++typed;
    ASSERT_EQ(c.required_terms.size(), 1u);
    ASSERT_EQ(c.required_terms[0].match_expressions.size(), 1u);
    const core::NodeSelectorRequirement& r = c.required_terms[0].match_expressions[0];
    EXPECT_EQ(r.key, "nvidia.com/gpu.product");
    ASSERT_EQ(r.values.size(), 1u);
    ++by_type[r.values[0]];
  }
  EXPECT_GT(typed, 500);  // 600 expected; binomial sd 20
  EXPECT_LT(typed, 700);
  EXPECT_EQ(by_type.size(), 3u);
  for (const auto& [type, n] : by_type) EXPECT_GT(n, 150) << type;
  // Read back from YAML and from the native format: the same requirements.
  auto yaml = LoadViaFile(WorkloadToYaml(w), "typed");
  ASSERT_TRUE(yaml.has_value()) << yaml.error().message;
  auto csv = config::ToNativeCsv(w, FindModel);
  ASSERT_TRUE(csv.has_value()) << csv.error().message;
  const std::string csv_path = dlsched::testing::WriteTemp("generate-typed.csv", *csv);
  config::TraceOptions to;
  to.format = config::TraceFormat::kNative;
  to.path = csv_path;
  auto native = config::LoadTrace(to);
  std::filesystem::remove(csv_path);
  ASSERT_TRUE(native.has_value()) << native.error().message;
  for (const config::WorkloadSpec* back : {&*yaml, &native->workload}) {
    ASSERT_EQ(back->jobs.size(), w.jobs.size());
    for (size_t i = 0; i < w.jobs.size(); ++i) {
      const auto& want = w.jobs[i].role(core::Role::kWorker).constraints.required_terms;
      const auto& got = back->jobs[i].role(core::Role::kWorker).constraints.required_terms;
      ASSERT_EQ(got.size(), want.size()) << w.jobs[i].name;
      if (!want.empty()) {
        EXPECT_EQ(got[0].match_expressions[0].values, want[0].match_expressions[0].values);
      }
    }
  }
  o.gpu_types.clear();
  EXPECT_EQ(GenerateWorkload(o).error().message,
            "--typed-fraction: needs --gpu-types (the types jobs may require)");
}

// The writers' own count of the YAML nodes they write is yaml-cpp's.
// Gavel's continuous traces (scheduler/utils.py, generate_job): over
// 20,000 jobs the sizes come out near 70/10/15/5 % of 1/2/4/8 GPUs, jobs
// of more than one GPU are ResNet-18/50, Transformer or LM only, every
// duration on v100s (totalSteps over the v100 rate at the job's size) is
// 10^x minutes with x in [1.5, 4], one in five at least 1,000 minutes
// (x in [3, 4]); no PS, no elasticity. --max-workers 1 makes every job one
// GPU (Gavel's single-GPU trace), and a typed fraction is refused.
TEST(GenerateTest, GavelShapeDrawsGavelsJobs) {
  GenerateOptions o;
  o.jobs = 20000;
  o.seed = 3;
  o.shape = GenerateOptions::Shape::kGavel;
  const config::WorkloadSpec w = Generate(o);
  ASSERT_EQ(w.jobs.size(), 20000u);
  std::map<int, int> sizes;
  int long_jobs = 0;
  const std::set<std::string> distributed = {"resnet18", "resnet50", "transformer", "lm"};
  for (const core::JobSpec& j : w.jobs) {
    const core::RoleSpec& worker = j.role(core::Role::kWorker);
    ++sizes[worker.replicas];
    EXPECT_EQ(worker.min_replicas, worker.replicas);
    EXPECT_EQ(worker.max_replicas, worker.replicas);
    EXPECT_EQ(j.role(core::Role::kPS).replicas, 0);
    EXPECT_EQ(worker.resources[core::kGpu], 1);
    if (worker.replicas > 1) {
      EXPECT_TRUE(distributed.contains(j.throughput.model)) << j.name;
    }
    const double minutes = j.total_steps / j.throughput.RateOn("v100", worker.replicas) / 60;
    EXPECT_GE(minutes, std::pow(10.0, 1.5) * 0.999) << j.name;
    EXPECT_LE(minutes, 1e4 * 1.001) << j.name;
    long_jobs += minutes >= 1000;
  }
  EXPECT_NEAR(sizes[1] / 20000.0, 0.70, 0.015);
  EXPECT_NEAR(sizes[2] / 20000.0, 0.10, 0.01);
  EXPECT_NEAR(sizes[4] / 20000.0, 0.15, 0.01);
  EXPECT_NEAR(sizes[8] / 20000.0, 0.05, 0.01);
  EXPECT_EQ(sizes.size(), 4u);
  EXPECT_NEAR(long_jobs / 20000.0, 0.20, 0.015);

  o.jobs = 500;
  o.max_workers = 1;
  for (const core::JobSpec& j : Generate(o).jobs) {
    EXPECT_EQ(j.role(core::Role::kWorker).replicas, 1) << j.name;
  }
  o.gpu_types = {"k80", "v100"};
  o.typed_fraction = 0.5;
  auto refused = GenerateWorkload(o);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message,
            "--typed-fraction: not with --shape gavel (its jobs run on every type, at its rates)");
}

TEST(WrittenYamlTest, CountsAsYamlCpp) {
  GenerateOptions o;
  o.jobs = 300;
  o.elastic_fraction = 0.5;
  const std::string yaml = WorkloadToYaml(Generate(o));
  EXPECT_EQ(WrittenYamlNodes(yaml), config::internal::CountYamlNodes(yaml, int64_t{1} << 40));
  ClusterOptions c;
  c.nodes = 100;
  auto cluster = ClusterYaml(c);
  ASSERT_TRUE(cluster.has_value());
  EXPECT_EQ(WrittenYamlNodes(*cluster),
            config::internal::CountYamlNodes(*cluster, int64_t{1} << 40));
}

// What a writer would write past the budget a load keeps is refused:
// `generate --jobs 200000` used to write 47 MB of YAML (over 5,000,000
// nodes) that every load then refused.
TEST(WrittenYamlTest, RefusedPastWhatALoadReads) {
  std::string list = "a: [";
  for (int64_t i = 0; i < core::kMaxYamlNodes - 4; ++i) list += "1,";
  list += "1]\n";
  EXPECT_EQ(WrittenYamlNodes(list), core::kMaxYamlNodes);
  EXPECT_TRUE(CheckWrittenYaml(list, "w.yaml").has_value());
  list.insert(4, "1,");
  auto over = CheckWrittenYaml(list, "w.yaml");
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message,
            "w.yaml: it would have 5000001 YAML nodes; dlsched reads at most 5000000");
  auto big = CheckWrittenYaml(std::string(core::kMaxInputBytes + 1, '#'), "w.yaml");
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().message,
            "w.yaml: it would have 67108865 bytes; dlsched reads files of at most 64 MiB");
}

}  // namespace
}  // namespace dlsched::sim
