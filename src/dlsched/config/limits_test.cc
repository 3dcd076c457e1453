// The limits of core/limits.h, checked where files are read: each value that
// later becomes an int, an array size, a bucket index or a time is refused
// with one line naming the file, the field and the limit.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"

namespace dlsched::config {
namespace {

std::string ClusterError(const std::string& text) {
  auto c = ParseCluster(text, "c.yaml");
  EXPECT_FALSE(c.has_value()) << "parsed: " << text.substr(0, 200);
  return c ? std::string() : c.error().message;
}

std::string WorkloadError(const std::string& job_fields) {
  const std::string text = "jobs:\n  - {name: j, arrival: 0, totalSteps: 10, " + job_fields + "}\n";
  auto w = ParseWorkload(text, "w.yaml");
  EXPECT_FALSE(w.has_value()) << "parsed: " << text;
  return w ? std::string() : w.error().message;
}

std::string ProfileError(const std::string& text) {
  auto p = ParseProfile(text, "p.yaml");
  EXPECT_FALSE(p.has_value()) << "parsed: " << text;
  return p ? std::string() : p.error().message;
}

constexpr char kWorker[] = "worker: {replicas: 1, resources: {nvidia.com/gpu: 1}}";
constexpr char kTable[] = "throughput: {table: {1: 1}}";

// GPU counts of 2^31 and more used to crash the engine's free-GPU index,
// and 2^32 used to become 0 there.
TEST(ClusterLimitsTest, GpusPerNode) {
  for (const char* gpus : {"2147483648", "4294967296", "1125899906842624", "1025"}) {
    const std::string text =
        std::string("nodes:\n  - {name: n, resources: {nvidia.com/gpu: ") + gpus + "}}\n";
    EXPECT_EQ(ClusterError(text),
              "c.yaml: nodes[0].resources.nvidia.com/gpu: " + std::string(gpus) +
                  " GPUs on one node is more than the limit of 1024")
        << gpus;
  }
  EXPECT_EQ(
      ClusterError("nodes:\n  - {name: n, resources: {nvidia.com/gpu: 9223372036854775807}}\n"),
      "c.yaml: nodes[0].resources.nvidia.com/gpu: '9223372036854775807' is more than the "
      "limit of 1125899906842624");
  EXPECT_TRUE(ParseCluster("nodes:\n  - {name: n, resources: {nvidia.com/gpu: 1024}}\n", "c.yaml")
                  .has_value());
}

TEST(ClusterLimitsTest, AmountsPerNode) {
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, resources: {memory: 2Pi}}\n"),
            "c.yaml: nodes[0].resources.memory: '2Pi' is more than the limit of 1Pi");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, resources: {cpu: 2e12}}\n"),
            "c.yaml: nodes[0].resources.cpu: '2e12' is more than the limit of 1125899906842624m");
}

// `count: 10000000` used to end in std::bad_alloc.
TEST(ClusterLimitsTest, NodeCount) {
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, count: 10000000, resources: {cpu: 1}}\n"),
            "c.yaml: nodes[0].count: expected an integer between 1 and 200000, got '10000000'");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, count: 150000, resources: {cpu: 1}}\n"
                         "  - {name: b, count: 60000, resources: {cpu: 1}}\n"),
            "c.yaml: nodes[1].count: the cluster would have 210000 nodes; at most 200000 are "
            "supported");
}

// Any two totals added stay within int64: the capacity is capped.
TEST(ClusterLimitsTest, TotalCapacity) {
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, count: 4096, resources: {memory: 1Pi}}\n"
                         "  - {name: b, count: 1, resources: {memory: 1}}\n"),
            "c.yaml: nodes[1].resources.memory: the cluster's total memory would exceed the "
            "limit of 4Ei");
  // Exactly at the limit is fine.
  EXPECT_TRUE(
      ParseCluster("nodes:\n  - {name: a, count: 4096, resources: {memory: 1Pi}}\n", "c.yaml")
          .has_value());
}

TEST(ClusterLimitsTest, NamesAndLabels) {
  EXPECT_EQ(ClusterError("nodes:\n  - {name: \"a\\nb\", resources: {cpu: 1}}\n"),
            "c.yaml: nodes[0].name: 'a\\x0ab' contains a control character");
  // Raw bytes: YAML's own "\xff" escape would be U+00FF, valid UTF-8.
  EXPECT_EQ(ClusterError("nodes:\n  - {name: \"a\xff\", resources: {cpu: 1}}\n"),
            "c.yaml: nodes[0].name: 'a\\xff' is not valid UTF-8");
  EXPECT_NE(ClusterError("nodes:\n  - {name: " + std::string(251, 'x') +
                         ", count: 20, resources: {cpu: 1}}\n")
                .find("names have at most 253"),
            std::string::npos);
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, resources: {cpu: 1}, labels: {zone: \"\\e\"}}\n"),
            "c.yaml: nodes[0].labels.zone: '\\x1b' contains a control character");
  // An empty label value is allowed, as in Kubernetes.
  EXPECT_TRUE(
      ParseCluster("nodes:\n  - {name: n, resources: {cpu: 1}, labels: {zone: \"\"}}\n", "c.yaml")
          .has_value());
}

// A node update replaces its allocatable: the cluster's total is checked
// at that instant too. Updates used to skip it: 4,095 nodes of 1 PiB and
// 4,105 small ones updated to 1 PiB each (8,200 PiB, past int64) ran with
// exit 0 and no memory in the results.
TEST(ClusterLimitsTest, UpdatesKeepTheTotal) {
  std::string text =
      "nodes:\n  - {name: a, count: 4094, resources: {memory: 1Pi}}\n"
      "  - {name: s, count: 3, resources: {memory: 1Gi}}\nevents:\n";
  for (int i = 0; i < 3; ++i) {
    text +=
        "  - {time: 1, update: {name: s-" + std::to_string(i) + ", resources: {memory: 1Pi}}}\n";
  }
  EXPECT_EQ(ClusterError(text),
            "c.yaml: events[1].update.resources.memory: the cluster's total memory would exceed "
            "the limit of 4Ei");
  // A node removed first makes room: the total is the nodes present.
  std::string removed = text;
  removed.insert(removed.find("  - {time: 1, update"), "  - {time: 1, remove: a-0}\n");
  auto ok = ParseCluster(removed, "c.yaml");
  EXPECT_TRUE(ok.has_value()) << ok.error().message;
  // So is an added node's.
  EXPECT_EQ(ClusterError("nodes:\n  - {name: a, count: 4096, resources: {memory: 1Pi}}\n"
                         "events:\n  - {time: 5, add: {name: b, resources: {memory: 1}}}\n"),
            "c.yaml: events[0].add.resources.memory: the cluster's total memory would exceed the "
            "limit of 4Ei");
}

// `reserved` is what other pods hold on the node: more than the node has
// gave negative free room and utilisations of thousands (a fraction of
// capacity, documented as 0..1).
TEST(ClusterLimitsTest, ReservedWithinTheNode) {
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, count: 2, resources: {cpu: 48, memory: 192Gi}, "
                         "reserved: {cpu: 8, memory: 1Pi}}\n"),
            "c.yaml: nodes[0].reserved.memory: 1Pi is more than the node has (192Gi)");
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, resources: {cpu: 4}, reserved: "
                         "{nvidia.com/gpu: 1}}\n"),
            "c.yaml: nodes[0].reserved.nvidia.com/gpu: 1 is more than the node has (0)");
  // An update may not shrink the node below what is reserved there.
  EXPECT_EQ(ClusterError("nodes:\n  - {name: n, resources: {cpu: 48}, reserved: {cpu: 8}}\n"
                         "events:\n  - {time: 5, update: {name: n, resources: {cpu: 4}}}\n"),
            "c.yaml: events[0].update.resources.cpu: 4 is less than the node's `reserved` (8)");
  // All of the node is fine.
  EXPECT_TRUE(
      ParseCluster("nodes:\n  - {name: n, resources: {cpu: 48}, reserved: {cpu: 48}}\n", "c.yaml")
          .has_value());
}

// --- The same limits for every trace and Tiresias cluster spec.

class TraceLimitsTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path =
        ::testing::TempDir() + "dlsched_limits_" + std::to_string(getpid()) + "_" + name;
    std::ofstream(path) << text;
    paths_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& p : paths_) unlink(p.c_str());
  }
  std::string TraceError(TraceFormat format, const std::string& path) {
    TraceOptions o;
    o.format = format;
    o.path = path;
    auto t = LoadTrace(o);
    EXPECT_FALSE(t.has_value()) << path;
    return t ? std::string() : t.error().message;
  }
  std::string ClusterCsvError(const std::string& path) {
    auto c = LoadTiresiasCluster(path);
    EXPECT_FALSE(c.has_value()) << path;
    return c ? std::string() : c.error().message;
  }
  std::vector<std::string> paths_;
};

constexpr char kTiresiasClusterHeader[] =
    "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n";

// mem_p_node is GiB: 2^30 GiB (2^60 bytes, over the 2^50 a node may have)
// was accepted; eight such nodes reported "-8Ei" and every job stuck, and
// 200,000 dropped memory from the results (its total overflowed).
TEST_F(TraceLimitsTest, TiresiasClusterMemory) {
  const std::string eight =
      Write("c8.csv", std::string(kTiresiasClusterHeader) + "1,8,4,40,1073741824\n");
  EXPECT_EQ(ClusterCsvError(eight),
            eight + ":2: mem_p_node: expected an integer in [1, 1048576], got '1073741824'");
  // 1 PiB a node is the limit; 200,000 of them are over the cluster's.
  const std::string many =
      Write("c200k.csv", std::string(kTiresiasClusterHeader) + "1000,200,4,40,1048576\n");
  EXPECT_EQ(ClusterCsvError(many),
            many +
                ":2: mem_p_node: the cluster's total memory would exceed the limit of 4Ei "
                "(1000 x 200 nodes)");
  const std::string ok =
      Write("c4096.csv", std::string(kTiresiasClusterHeader) + "1,4096,4,40,1048576\n");
  auto c = LoadTiresiasCluster(ok);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->nodes.size(), 4096u);
}

// Philly arrivals are seconds after the earliest kept row: rows 10,000
// years apart gave arrivals of 3.2e11 s (the limit is 1e9), which `convert`
// then wrote to a file dlsched refuses.
TEST_F(TraceLimitsTest, PhillyArrivals) {
  const std::string path = Write("philly.csv",
                                 "timestamp,duration,num_gpus,cluster\n"
                                 "2017-10-03 14:00:00,100,1,vc\n"
                                 "9999-12-31 00:00:00,100,1,vc\n");
  EXPECT_EQ(TraceError(TraceFormat::kPhilly, path),
            path +
                ": job 'philly-3': arrival (its timestamp less the earliest kept row's): "
                "251895175200 s is more than the limit of 1000000000 s (31.7 years); keep a "
                "shorter "
                "span of the trace with --from and --until");
  // Rows 31 years apart are fine.
  const std::string near = Write("philly-near.csv",
                                 "timestamp,duration,num_gpus,cluster\n"
                                 "2017-10-03 14:00:00,100,1,vc\n"
                                 "2048-01-01 00:00:00,100,1,vc\n");
  TraceOptions o;
  o.format = TraceFormat::kPhilly;
  o.path = near;
  auto t = LoadTrace(o);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_LE(t->workload.jobs.back().submit_time, core::kMaxTime);
}

// Every importer checks a row's job as a workload file's job is checked,
// naming the row's column where the format has one.
TEST_F(TraceLimitsTest, RowsAreCheckedAsJobs) {
  const std::string header(kNativeWideHeader);
  const std::string tasks = Write("tasks.csv", header + "\na,0,1,1,99999,1,,,100,,2,,,,\n");
  EXPECT_EQ(TraceError(TraceFormat::kNative, tasks),
            tasks +
                ":2: max_workers: the job would have 100001 tasks (PS, Chief and maxReplicas "
                "workers); at most 100000 are supported");
  const std::string total = Write("total.csv", header + "\na,0,1,1,4097,,,1Pi,100,,,,,,\n");
  EXPECT_EQ(TraceError(TraceFormat::kNative, total),
            total + ":2: the job's total memory at maxReplicas exceeds the limit of 4Ei");
}

// `maxReplicas: 2147483647` used to allocate gigabytes for one job.
TEST(WorkloadLimitsTest, TasksPerJob) {
  EXPECT_EQ(WorkloadError(std::string(kTable) +
                          ", worker: {replicas: 1, maxReplicas: 2147483647, resources: {cpu: 1}}"),
            "w.yaml: jobs[0].worker.maxReplicas: expected an integer between 1 and 100000, got "
            "'2147483647'");
  EXPECT_EQ(WorkloadError(std::string(kTable) +
                          ", ps: {replicas: 2, resources: {cpu: 1}}, worker: {replicas: 1, "
                          "maxReplicas: 99999, resources: {cpu: 1}}"),
            "w.yaml: jobs[0].worker.maxReplicas: the job would have 100001 tasks (PS, Chief and "
            "maxReplicas workers); at most 100000 are supported");
}

TEST(WorkloadLimitsTest, JobTotalRequest) {
  EXPECT_EQ(WorkloadError(std::string(kTable) +
                          ", worker: {replicas: 1, maxReplicas: 4097, resources: {memory: 1Pi}}"),
            "w.yaml: jobs[0]: the job's total memory at maxReplicas exceeds the limit of 4Ei");
}

// An arrival or a rate near the internal "never" (1e300) used to make a job
// "Completed" at infinity.
TEST(WorkloadLimitsTest, Times) {
  const std::string base = std::string(kWorker) + ", " + kTable;
  auto with = [&](const std::string& field) {
    const std::string text = "jobs:\n  - {name: j, totalSteps: 10, " + base + ", " + field + "}\n";
    auto w = ParseWorkload(text, "w.yaml");
    return w ? std::string() : w.error().message;
  };
  EXPECT_EQ(with("arrival: 1e300"),
            "w.yaml: jobs[0].arrival: expected a number in [0, 1000000000], got '1e300'");
  EXPECT_EQ(with("arrival: .inf"),
            "w.yaml: jobs[0].arrival: expected a number in [0, 1000000000], got '.inf'");
  EXPECT_EQ(with("arrival: 0, deadline: 1e300"),
            "w.yaml: jobs[0].deadline: expected a number in (0, 1000000000], got '1e300'");
  EXPECT_EQ(with("arrival: 0, launchDelay: 1e10"),
            "w.yaml: jobs[0].launchDelay: expected a number in [0, 1000000000], got '1e10'");
  EXPECT_EQ(with("arrival: 0, maxWaitMinutes: 1e300"),
            "w.yaml: jobs[0].maxWaitMinutes: expected a number in (0, 10000000], got '1e300'");
  EXPECT_EQ(with("arrival: 1000000000"), "");  // the limit itself is fine
}

TEST(WorkloadLimitsTest, StepsAndRates) {
  EXPECT_EQ(
      WorkloadError(std::string(kWorker) + ", throughput: {table: {1: 1e-300}}"),
      "w.yaml: jobs[0].throughput.table.1: expected 0 or a rate of at least 1e-06 steps/s, got "
      "'1e-300'");
  EXPECT_EQ(WorkloadError(std::string(kWorker) + ", throughput: {table: {1: 1e300}}"),
            "w.yaml: jobs[0].throughput.table.1: expected a number in [0, 1000000000000], got "
            "'1e300'");
  EXPECT_EQ(
      WorkloadError(std::string(kWorker) + ", throughput: {table: {2147483648: 1}}"),
      "w.yaml: jobs[0].throughput.table.2147483648: expected a worker count (an integer between "
      "1 and 100000) as key, got '2147483648'");
  auto w = ParseWorkload(
      "jobs:\n  - {name: j, arrival: 0, totalSteps: 1e300, worker: {replicas: 1, resources: "
      "{cpu: 1}}, throughput: {table: {1: 1}}}\n",
      "w.yaml");
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message,
            "w.yaml: jobs[0].totalSteps: expected a number in (0, 1000000000000000], got '1e300'");
}

TEST(WorkloadLimitsTest, Names) {
  auto named = [](const std::string& field) {
    auto w = ParseWorkload("jobs:\n  - {" + field +
                               ", arrival: 0, totalSteps: 1, worker: {replicas: 1, resources: "
                               "{cpu: 1}}, throughput: {table: {1: 1}}}\n",
                           "w.yaml");
    return w ? std::string() : w.error().message;
  };
  EXPECT_EQ(named("name: \"a\\x1b[2Jb\""),
            "w.yaml: jobs[0].name: 'a\\x1b[2Jb' contains a control character");
  EXPECT_EQ(named("name: j, namespace: \"\\t\""),
            "w.yaml: jobs[0].namespace: '\\x09' contains a control character");
  EXPECT_EQ(named("name: j, queue: \"\\x85\""),
            "w.yaml: jobs[0].queue: '\\xc2\\x85' contains a control character");
  EXPECT_EQ(
      named("name: " + std::string(254, 'n')).find("names have at most 253") != std::string::npos,
      true);
}

TEST(ProfileLimitsTest, NameCannotBecomeAPath) {
  for (const char* name : {"../../x", ".", "..", "a/b", ".hidden", "a b", "-x"}) {
    EXPECT_NE(ProfileError(std::string("name: \"") + name + "\"\n").find("expected a profile name"),
              std::string::npos)
        << name;
  }
  EXPECT_NE(ProfileError("name: " + std::string(64, 'p') + "\n").find("expected a profile name"),
            std::string::npos);
  EXPECT_TRUE(ParseProfile("name: My_profile-2.1\n", "p.yaml").has_value());
}

TEST(ProfileLimitsTest, FactorsAndWeights) {
  EXPECT_EQ(ProfileError("name: x\nprotectFactor: 1e300\n"),
            "p.yaml: protectFactor: expected a number in [0, 1000], got '1e300'");
  EXPECT_EQ(ProfileError("name: x\nscorers:\n  - {name: LeastAllocated, weight: 1e300}\n"),
            "p.yaml: scorers[0].weight: expected a number in (0, 1000000], got '1e300'");
}

// --- Reading files: regular files only, with a size cap; a FIFO never blocks.

class ReadFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) {
    return testing::TempDir() + "dlsched_readfile_" + std::to_string(getpid()) + "_" + name;
  }
};

TEST_F(ReadFileTest, RefusesDevicesFifosAndDirectories) {
  auto zero = internal::ReadFile("/dev/zero");
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().message,
            "/dev/zero: cannot read file: it is a character device; dlsched reads regular files "
            "only");
  const std::string fifo = Path("fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto f = internal::ReadFile(fifo);  // would block for ever on a blocking open
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().message,
            fifo + ": cannot read file: it is a FIFO; dlsched reads regular files only");
  unlink(fifo.c_str());
  auto dir = internal::ReadFile(testing::TempDir());
  ASSERT_FALSE(dir.has_value());
  EXPECT_NE(dir.error().message.find("it is a directory"), std::string::npos);
}

TEST_F(ReadFileTest, RefusesFilesOverTheCap) {
  const std::string big = Path("big");
  const int fd = open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(core::kMaxInputBytes) + 1), 0);  // sparse
  close(fd);
  auto r = internal::ReadFile(big);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            big + ": cannot read file: it has 67108865 bytes; input files are limited to 64 MiB");
  unlink(big.c_str());
  const std::string small = Path("small");
  std::ofstream(small) << "nodes: []\n";
  auto ok = internal::ReadFile(small);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(*ok, "nodes: []\n");
  unlink(small.c_str());
}

// yaml-cpp needs about 500 bytes per node, so a large file of tiny nodes
// ("[],[],...") is refused by a scan before the tree is built.
TEST(ParseYamlTest, NodeBudget) {
  std::string text = "[";
  for (int i = 0; i < 1000; ++i) text += "[],";
  text += "]";
  auto over = internal::ParseYaml(text, "big.yaml", /*max_nodes=*/500, /*scan_above=*/100);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message,
            "big.yaml: has more than 500 YAML nodes; YAML inputs are limited to that many (each "
            "takes about 500 bytes of memory)");
  EXPECT_TRUE(internal::ParseYaml(text, "big.yaml", 2000, 100).has_value());
  // Small texts are not scanned at all.
  EXPECT_TRUE(internal::ParseYaml(text, "big.yaml", 500, text.size()).has_value());
}

// Text parsed without a file (an operator's snapshot, which `snapshot`
// writes as files) is held to a file's size cap too.
TEST(ParseYamlTest, TextOverTheFileSizeCap) {
  std::string text(core::kMaxInputBytes + 1, '#');
  auto over = ParseCluster(text, "now/cluster.yaml");
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message,
            "now/cluster.yaml: has 67108865 bytes; YAML inputs are limited to 64 MiB");
  // At the cap it is parsed (and, all comment, has no nodes).
  text.resize(core::kMaxInputBytes);
  auto at = ParseCluster(text, "now/cluster.yaml");
  ASSERT_FALSE(at.has_value());
  EXPECT_EQ(at.error().message.find("bytes"), std::string::npos) << at.error().message;
}

// The nodes yaml-cpp's event pass counts in `text`, as ParseYaml's scan
// counts them (a stream yaml-cpp never finishes counts as cap + 1).
int64_t YamlNodes(const std::string& text, int64_t cap = 1'000'000) {
  return internal::CountYamlNodes(text, cap);
}

// Texts chosen to make the most nodes of the fewest words: null values,
// nested block maps one key a line, `- - -`, explicit `?` keys and `:`
// values, empty flow entries, single-pair maps in flow sequences (`"a"::`
// is a pair whose value is a key-less pair), anchors, tags, aliases,
// comments, block scalars. The bound must hold on each, also on the part
// before an error (yaml-cpp builds nodes until it finds one).
TEST(ParseYamlTest, NodeBoundIsAnUpperBound) {
  const std::vector<std::string> texts = {
      "a:",
      "a:\n",
      "a: b\n",
      "a:\n b:\n  c:\n   d:\n    e:\n",
      "a:\n- - - - -\n- -\n-\n",
      "a:\n  ? \n  ? \n  : \n  ? - ? - ?\n",
      "a:\n  - ? \n  - : \n  - : : :\n",
      "a: {,,,,,,,,}\n",
      "a: [,,,,,,,,]\n",
      "a: [:, :, :, :, ?, ?, ? :]\n",
      "a: [\"a\":: , \"b\":: , 'c':: ]\n",
      "a: [\"a\"::[\"b\"::[\"c\":: ]]]\n",
      "a: [\"a\":\"b\",\"c\":\"d\"]\n",
      "a: {\"a\":\"b\",\"c\":}\n",
      "a: [\"a\":\"b\":\"c\"]\n",
      "a: [[[[[[[[[[]]]]]]]]]]\n",
      "a: {a, b, c, d, e}\n",
      "a: &x\nb: *x\nc: !!str\nd: &y !t\ne: [*x, *y, &z, !u , *z]\n",
      "a: # comment\n# - - - : : :\nb: |\n  - - -\n  [,,,]\nc: >-\n  x\n",
      "a: b\n,\n",
      "a: [a\n",
      "a:\n  - {x: [1, 2, {y: [3, {z: }]}]}\n  - [? , : ]\n",
      "ab: [a: , b: , : c, ? d]\n",
      "jobs:\n  - {name: j, arrival: 0, worker: {replicas: 1}, throughput: {model: m}}\n",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    ASSERT_TRUE(internal::IsOneBlockMap(text));
    auto bound = internal::YamlNodeBound(text);
    ASSERT_TRUE(bound.has_value());
    const int64_t nodes = YamlNodes(text);
    EXPECT_GE(*bound, nodes);
    EXPECT_GT(nodes, 0);
  }
  // Hand-counted: "a:" is a map, its key and a null (3 nodes) from 1 word.
  EXPECT_EQ(YamlNodes("a:"), 3);
  EXPECT_EQ(*internal::YamlNodeBound("a:"), 5);
  // A word of `["a":: ]` makes 4 nodes (a pair, its key, a key-less pair:
  // a null key and value): 8 in all from 3 words.
  EXPECT_EQ(YamlNodes("a: [\"a\":: ]"), 8);
  EXPECT_EQ(*internal::YamlNodeBound("a: [\"a\":: ]"), 13);
}

// What is not one block map at column 0 has no cheap bound: several
// documents (a `,` where a document is due makes yaml-cpp emit null
// documents for ever, which the scan refuses), a root that is not such a
// map, a lone \r (yaml-cpp does not break lines there), a NUL (UTF-16).
TEST(ParseYamlTest, NoCheapBoundWithoutOneBlockMap) {
  for (const std::string& text :
       {std::string("[1, 2]\n"), std::string("\"x\"\n,\n"), std::string(",\n"),
        std::string("a: 1\n---\nb: 2\n"), std::string("a: 1\n...\n,\n"),
        std::string("%YAML 1.2\n---\na: 1\n"), std::string("- a\n"), std::string("  a: 1\n"),
        std::string("# x\ra:\n[1]\n,\n"), std::string("a:\rb"), std::string("\"a\": 1\n"),
        std::string("a: 1\0", 5), std::string("a:b\n"), std::string(""), std::string("# only\n"),
        std::string("\xef\xbb\xbf"
                    "a: 1\n")}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(internal::IsOneBlockMap(text));
    EXPECT_FALSE(internal::YamlNodeBound(text).has_value());
    EXPECT_EQ(internal::NeedsNodeScan(text, 1'000'000, 0), !text.empty());
  }
  EXPECT_EQ(YamlNodes(",\n", 1000), 1001);  // never ends
  EXPECT_TRUE(internal::IsOneBlockMap("# a comment\n\n  \t\njobs:\r\n  - a\r\nstart: 0\n"));
}

// Above scan_above, a text within the bound is loaded without the counting
// pass; one over it is counted, and refused with the scan's message when
// the count is over the limit too.
TEST(ParseYamlTest, ScanOnlyWhenTheBoundIsOverTheLimit) {
  std::string many = "a:\n";
  for (int i = 0; i < 100; ++i) many += "  - {x: 1, y: [2, 3]}\n";
  const int64_t bound = *internal::YamlNodeBound(many);
  const int64_t nodes = YamlNodes(many);
  ASSERT_GE(bound, nodes);
  EXPECT_EQ(nodes, 3 + 100 * 7);
  EXPECT_FALSE(internal::NeedsNodeScan(many, bound, 10));
  EXPECT_TRUE(internal::ParseYaml(many, "m.yaml", bound, 10).has_value());
  EXPECT_TRUE(internal::NeedsNodeScan(many, bound - 1, 10));
  EXPECT_FALSE(internal::NeedsNodeScan(many, bound - 1, many.size()));  // small: no scan
  // Over the bound but within the limit: counted, then loaded.
  EXPECT_TRUE(internal::ParseYaml(many, "m.yaml", nodes, 10).has_value());
  // Over the limit: refused as before.
  auto over = internal::ParseYaml(many, "m.yaml", nodes - 1, 10);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message,
            "m.yaml: has more than 702 YAML nodes; YAML inputs are limited to that many (each "
            "takes about 500 bytes of memory)");
  // Words that are not nodes (a long quoted scalar) make the bound large:
  // scanned, and loaded.
  std::string quoted = "a: '";
  for (int i = 0; i < 1000; ++i) quoted += "x ";
  quoted += "'\n";
  ASSERT_EQ(YamlNodes(quoted), 3);
  EXPECT_TRUE(internal::NeedsNodeScan(quoted, 100, 10));
  EXPECT_TRUE(internal::ParseYaml(quoted, "q.yaml", 100, 10).has_value());
  // A syntax error is reported the same with or without the scan.
  const std::string broken = "a: [1, 2\n";
  ASSERT_LE(YamlNodes(broken), 10);
  ASSERT_TRUE(internal::NeedsNodeScan(broken, 10, 0));
  auto scanned = internal::ParseYaml(broken, "b.yaml", 10, 0);
  auto unscanned = internal::ParseYaml(broken, "b.yaml", 1000, 0);
  ASSERT_FALSE(scanned);
  ASSERT_FALSE(unscanned);
  EXPECT_EQ(scanned.error().message, "b.yaml:2:1: end of sequence flow not found");
  EXPECT_EQ(unscanned.error().message, scanned.error().message);
}

}  // namespace
}  // namespace dlsched::config
