// Trace importers on the real files the repository carries (data/) and on
// broken rows; the native format's round trip; the scaling curves.

#include "dlsched/config/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "dlsched/config/csv.h"
#include "dlsched/config/pollux.h"
#include "dlsched/config/specs.h"
#include "dlsched/core/affinity.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/text.h"

namespace dlsched::config {
namespace {

std::string Data(const std::string& name) {
  return std::string(DLSCHED_SOURCE_DIR) + "/data/" + name;
}

using dlsched::testing::WriteTemp;

// The file's rows split on commas, header included: the tests' own reading
// of the data, independent of the importers.
std::vector<std::vector<std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    rows.push_back(f);
  }
  return rows;
}

double GpuSeconds(const WorkloadSpec& w) {
  double sum = 0;
  for (const auto& j : w.jobs) sum += *j.duration * j.role(core::Role::kWorker).replicas;
  return sum;
}

core::Result<TraceLoad> Load(TraceFormat f, const std::string& path, bool skip = false) {
  TraceOptions o;
  o.format = f;
  o.path = path;
  o.skip_bad_rows = skip;
  return LoadTrace(o);
}

TEST(TiresiasTraceTest, SixtyJobTrace) {
  const std::string path = Data("tiresias/60_job.csv");
  auto t = Load(TraceFormat::kTiresias, path);
  ASSERT_TRUE(t) << t.error().message;
  const auto rows = ReadCsv(path);
  ASSERT_EQ(rows.size(), 61u);  // header + 60 jobs
  EXPECT_EQ(t->rows, 60);
  EXPECT_EQ(t->skipped, 0);
  ASSERT_EQ(t->workload.jobs.size(), 60u);
  // Columns job_id,num_gpu,submit_time,iterations,model_name,duration,interval.
  double gpu_seconds = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    gpu_seconds += std::stod(rows[i][1]) * std::stod(rows[i][5]);
  }
  EXPECT_DOUBLE_EQ(GpuSeconds(t->workload), gpu_seconds);

  // First row: 0,1,0,606,vgg19,164,30. Last: 59,1,1779,525,inception3,122,33.
  const core::JobSpec& first = t->workload.jobs.front();
  EXPECT_EQ(first.name, "job-0");
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.role(core::Role::kWorker).replicas, 1);
  EXPECT_EQ(*first.duration, 164);
  const core::JobSpec& last = t->workload.jobs.back();
  EXPECT_EQ(last.name, "job-59");
  EXPECT_EQ(last.submit_time, 1779);
  EXPECT_EQ(*last.duration, 122);
  // Job 1 (1,8,30,133,vgg11,147,23): a rigid gang of 8 one-GPU workers that
  // runs 147 s: 147 steps at 1 step/s.
  const core::JobSpec& j1 = t->workload.jobs[1];
  EXPECT_EQ(j1.name, "job-1");
  const core::RoleSpec& w = j1.role(core::Role::kWorker);
  EXPECT_EQ(w.replicas, 8);
  EXPECT_EQ(w.min_replicas, 8);
  EXPECT_EQ(w.max_replicas, 8);
  EXPECT_EQ(w.resources[core::kGpu], 1);
  EXPECT_EQ(w.resources[core::kCpu], 0);
  EXPECT_EQ(j1.role(core::Role::kPS).replicas, 0);
  EXPECT_EQ(j1.total_steps, 147);
  EXPECT_EQ(j1.throughput.Rate(8), 1);
}

TEST(TiresiasTraceTest, ClusterSpecs) {
  auto c = LoadTiresiasCluster(Data("tiresias/n32g4.csv"));  // 1,32,4,40,256
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 32u);
  EXPECT_EQ(c->nodes[0].name, "s0-n0");
  EXPECT_EQ(c->nodes[31].name, "s0-n31");
  EXPECT_EQ(c->nodes[5].allocatable[core::kGpu], 4);
  EXPECT_EQ(c->nodes[5].allocatable[core::kCpu], 40'000);
  EXPECT_EQ(c->nodes[5].allocatable[core::kMemory], int64_t{256} << 30);
  EXPECT_EQ(c->nodes[5].labels.at("dlsched.io/switch"), "s0");

  auto big = LoadTiresiasCluster(Data("tiresias/n160g8.csv"));  // 5,32,8,128,256
  ASSERT_TRUE(big) << big.error().message;
  ASSERT_EQ(big->nodes.size(), 160u);
  EXPECT_EQ(big->nodes[159].name, "s4-n31");
  EXPECT_EQ(big->nodes[159].allocatable[core::kGpu], 8);

  const std::string bad = WriteTemp("spec.csv",
                                    "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,"
                                    "mem_p_node\n1,x,4,40,256\n");
  auto e = LoadTiresiasCluster(bad);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message,
            bad + ":2: num_node_p_switch: expected an integer in [1, 1000000], got 'x'");
}

TEST(PhillyTraceTest, WholeFile) {
  const std::string path = Data("pollux/philly.csv");
  auto t = Load(TraceFormat::kPhilly, path);
  ASSERT_TRUE(t) << t.error().message;
  const auto rows = ReadCsv(path);
  ASSERT_EQ(rows.size(), 82'248u);
  EXPECT_EQ(t->rows, 82'247);
  ASSERT_EQ(t->workload.jobs.size(), 82'247u);
  // Columns timestamp,duration,num_gpus,gpu_time,cluster: gpu_time is the
  // file's own duration x num_gpus.
  double gpu_seconds = 0;
  std::string earliest = rows[1][0];
  std::string latest = rows[1][0];
  for (size_t i = 1; i < rows.size(); ++i) {
    gpu_seconds += std::stod(rows[i][3]);
    earliest = std::min(earliest, rows[i][0]);  // "YYYY-MM-DD HH:MM:SS" sorts as text
    latest = std::max(latest, rows[i][0]);
  }
  EXPECT_NEAR(GpuSeconds(t->workload), gpu_seconds, 1e-6 * gpu_seconds);
  EXPECT_EQ(earliest, "2017-09-04 10:30:41");
  EXPECT_EQ(latest, "2017-12-22 08:02:11");
  const auto& jobs = t->workload.jobs;
  EXPECT_EQ(jobs.front().submit_time, 0);
  EXPECT_EQ(jobs.back().submit_time, *ParseTimestamp(latest) - *ParseTimestamp(earliest));
  // Each job is named by its line; line 2 is 2017-10-09 07:01:55,66.0,1,...
  for (const auto& j : jobs) {
    if (j.name != "philly-2") continue;
    EXPECT_EQ(*j.duration, 66);
    EXPECT_EQ(j.submit_time, *ParseTimestamp("2017-10-09 07:01:55") - *ParseTimestamp(earliest));
  }
}

TEST(PhillyTraceTest, VirtualClusterAndWindow) {
  const std::string path = Data("pollux/philly.csv");
  const auto rows = ReadCsv(path);
  const std::string from = "2017-10-01";
  const std::string until = "2017-10-08";
  int64_t expected = 0;
  std::string first;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i][4] == "6214e9" && rows[i][0] >= from && rows[i][0] < until) {
      ++expected;
      if (first.empty() || rows[i][0] < first) first = rows[i][0];
    }
  }
  ASSERT_GT(expected, 100);
  TraceOptions o;
  o.format = TraceFormat::kPhilly;
  o.path = path;
  o.virtual_clusters = {"6214e9"};
  o.from = *ParseTimestamp(from);
  o.until = *ParseTimestamp(until);
  auto t = LoadTrace(o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(static_cast<int64_t>(t->workload.jobs.size()), expected);
  EXPECT_EQ(t->filtered, 82'247 - expected);
  // Arrivals count from the earliest kept row.
  EXPECT_EQ(t->workload.jobs.front().submit_time, 0);

  o.limit = 10;
  auto ten = LoadTrace(o);
  ASSERT_TRUE(ten);
  EXPECT_EQ(ten->workload.jobs.size(), 10u);
  // Each job's virtual cluster is its queue.
  for (const auto& job : ten->workload.jobs) EXPECT_EQ(job.queue, "6214e9");
}

// The native `queue` column: read into each job's queue (empty: default),
// written after `model` only when some job names a queue, and read back
// the same.
TEST(NativeTraceTest, QueueColumnRoundTrips) {
  const std::string path = WriteTemp("q.csv", std::string(kNativeQueueHeader) +
                                                  "\n"
                                                  "a,0,1,1,1,1,,,50,,,,,,,team-a\n"
                                                  "b,1,1,1,1,1,,,50,,,,,,,\n");
  auto t = Load(TraceFormat::kNative, path);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->workload.jobs.size(), 2u);
  EXPECT_EQ(t->workload.jobs[0].queue, "team-a");
  EXPECT_EQ(t->workload.jobs[1].queue, "default");
  auto csv = ToNativeCsv(t->workload, nullptr);
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ(*csv, std::string(kNativeQueueHeader) +
                      "\na,0,1,1,1,1,,,50,linear,,,,,,team-a\nb,1,1,1,1,1,,,50,linear,,,,,,\n");
  // Without queues the file stays narrow.
  t->workload.jobs[0].queue = "default";
  auto narrow = ToNativeCsv(t->workload, nullptr);
  ASSERT_TRUE(narrow);
  EXPECT_TRUE(narrow->starts_with(std::string(kNativeHeader) + "\n"));
  // A bad name is a bad row naming the column.
  const std::string bad =
      WriteTemp("bad-q.csv", std::string(kNativeQueueHeader) + "\na,0,1,1,1,1,,,50,,,,,,," +
                                 std::string(300, 'q') + "\n");
  auto b = Load(TraceFormat::kNative, bad);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("queue: "), std::string::npos) << b.error().message;
}

// The native `gpus` column below 1 is a share of one GPU
// (dlsched.io/gpu-milli), written back as thousandths; 1 and above stay
// whole GPUs.
TEST(NativeTraceTest, GpusBelowOneAreAShareAndRoundTrip) {
  const std::string path = WriteTemp("s.csv", std::string(kNativeHeader) +
                                                  "\n"
                                                  "a,0,2,2,2,0.5,,,50,\n"
                                                  "b,1,1,1,1,250m,,,50,\n"
                                                  "c,2,1,1,1,2,,,50,\n");
  auto t = Load(TraceFormat::kNative, path);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->workload.jobs.size(), 3u);
  const auto& a = t->workload.jobs[0].role(core::Role::kWorker).resources;
  EXPECT_EQ(a[core::kGpuMilli], 500);
  EXPECT_EQ(a[core::kGpu], 0);
  EXPECT_EQ(t->workload.jobs[1].role(core::Role::kWorker).resources[core::kGpuMilli], 250);
  EXPECT_EQ(t->workload.jobs[2].role(core::Role::kWorker).resources[core::kGpu], 2);
  EXPECT_EQ(t->workload.jobs[2].role(core::Role::kWorker).resources[core::kGpuMilli], 0);
  auto csv = ToNativeCsv(t->workload, nullptr);
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ(*csv, std::string(kNativeHeader) +
                      "\na,0,2,2,2,500m,,,50,linear\nb,1,1,1,1,250m,,,50,linear\n"
                      "c,2,1,1,1,2,,,50,linear\n");
}

// The native `gpu_type` column: the GPU types a job's workers require,
// read as the required node affinity `nvidia.com/gpu.product In [...]`
// (one type or several joined by '|'; empty: any), written last when some
// job requires types (a nodeSelector on the type label alone as well), and
// read back the same.
TEST(NativeTraceTest, GpuTypeColumnRequiresTypesAndRoundTrips) {
  const std::string path = WriteTemp("g.csv", std::string(kNativeGpuTypeHeader) +
                                                  "\n"
                                                  "a,0,1,1,1,1,,,50,,,,,,,,v100\n"
                                                  "b,1,1,1,1,1,,,50,,,,,,,team-b,k80|p100|k80\n"
                                                  "c,2,1,1,1,1,,,50,,,,,,,,\n");
  auto t = Load(TraceFormat::kNative, path);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->workload.jobs.size(), 3u);
  auto required = [&](size_t i) {
    const core::NodeConstraints& c = t->workload.jobs[i].role(core::Role::kWorker).constraints;
    EXPECT_TRUE(c.node_selector.empty());
    if (c.required_terms.size() != 1 || c.required_terms[0].match_expressions.size() != 1) {
      return std::vector<std::string>{};
    }
    const core::NodeSelectorRequirement& r = c.required_terms[0].match_expressions[0];
    EXPECT_EQ(r.key, "nvidia.com/gpu.product");
    EXPECT_EQ(r.op, core::NodeSelectorRequirement::Op::kIn);
    return r.values;
  };
  EXPECT_EQ(required(0), std::vector<std::string>{"v100"});
  EXPECT_EQ(required(1), (std::vector<std::string>{"k80", "p100"}));  // the repeat once
  EXPECT_FALSE(t->workload.jobs[2].role(core::Role::kWorker).constraints.HasLabelRules());
  EXPECT_EQ(t->workload.jobs[1].queue, "team-b");
  // The type matches a node labelled with it, and no other.
  const core::NodeConstraints& b = t->workload.jobs[1].role(core::Role::kWorker).constraints;
  EXPECT_TRUE(core::MatchesLabels(b, {{"nvidia.com/gpu.product", "p100"}}));
  EXPECT_FALSE(core::MatchesLabels(b, {{"nvidia.com/gpu.product", "v100"}}));
  EXPECT_FALSE(core::MatchesLabels(b, {}));

  const std::string expected = std::string(kNativeGpuTypeHeader) +
                               "\na,0,1,1,1,1,,,50,linear,,,,,,,v100"
                               "\nb,1,1,1,1,1,,,50,linear,,,,,,team-b,k80|p100"
                               "\nc,2,1,1,1,1,,,50,linear,,,,,,,\n";
  auto csv = ToNativeCsv(t->workload, nullptr);
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ(*csv, expected);
  // A nodeSelector on the type label alone is the same requirement.
  core::NodeConstraints& a = t->workload.jobs[0].role(core::Role::kWorker).constraints;
  a.required_terms.clear();
  a.node_selector = {{"nvidia.com/gpu.product", "v100"}};
  auto from_selector = ToNativeCsv(t->workload, nullptr);
  ASSERT_TRUE(from_selector) << from_selector.error().message;
  EXPECT_EQ(*from_selector, expected);
  // Any other label rule is not a GPU type: refused, naming the job.
  a.node_selector = {{"zone", "a"}};
  auto refused = ToNativeCsv(t->workload, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("job 'a': its workers have node constraints"),
            std::string::npos)
      << refused.error().message;
  // A bad type is a bad row naming the column.
  const std::string bad = WriteTemp(
      "bad-g.csv", std::string(kNativeGpuTypeHeader) + "\na,0,1,1,1,1,,,50,,,,,,,,v100||k80\n");
  auto e = Load(TraceFormat::kNative, bad);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, bad + ":2: gpu_type: " + *core::NameProblem("") +
                                   " (expected GPU types separated by '|', e.g. v100|p100)");
}

TEST(TraceTest, BadRowsFailWithFileAndLineOrAreSkippedAndCounted) {
  const std::string header = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
  const std::string path = WriteTemp("bad.csv", header +
                                                    "0,1,0,606,vgg19,164,30\n"
                                                    "1,x,30,133,vgg11,147,23\n"
                                                    "2,2,53,157\n"
                                                    "3,1,79,513,vgg16,-5,20\n"
                                                    "0,1,80,513,vgg16,5,20\n"
                                                    "4,2,90,1,resnet,10,1\n");
  auto e = Load(TraceFormat::kTiresias, path);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, path + ":3: num_gpu: expected an integer in [1, 100000], got 'x'");

  auto t = Load(TraceFormat::kTiresias, path, /*skip=*/true);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->rows, 6);
  EXPECT_EQ(t->skipped, 4);
  EXPECT_EQ(t->first_skipped, path + ":3: num_gpu: expected an integer in [1, 100000], got 'x'");
  ASSERT_EQ(t->workload.jobs.size(), 2u);
  EXPECT_EQ(t->workload.jobs[0].name, "job-0");
  EXPECT_EQ(t->workload.jobs[1].name, "job-4");

  // Each kind of bad row alone, with its message.
  const std::map<std::string, std::string> cases = {
      {"2,2,53,157\n", ":2: expected 7 comma-separated fields (no quotes), got 4"},
      {"3,1,79,513,vgg16,-5,20\n", ":2: duration: expected a number in (0, 1000000000], got '-5'"},
      {"3,1,1e10,513,vgg16,5,20\n",
       ":2: submit_time: expected a number in [0, 1000000000], got '1e10'"},
      {"\"3\",1,7,513,vgg16,5,20\n", ":2: expected 7 comma-separated fields (no quotes), got 0"},
  };
  for (const auto& [row, message] : cases) {
    const std::string p = WriteTemp("one.csv", header + row);
    auto r = Load(TraceFormat::kTiresias, p);
    ASSERT_FALSE(r) << row;
    EXPECT_EQ(r.error().message, p + message) << row;
  }
  const std::string twice = WriteTemp("twice.csv", header + "0,1,0,6,v,1,3\n0,1,5,6,v,1,3\n");
  auto r = Load(TraceFormat::kTiresias, twice);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, twice + ":3: job 'job-0' appears twice");

  const std::string no_column = WriteTemp("nocol.csv", "job_id,num_gpu,submit_time\n0,1,0\n");
  r = Load(TraceFormat::kTiresias, no_column);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, no_column +
                                   ":1: header: no column 'duration' (expected the columns "
                                   "job_id,num_gpu,submit_time,duration)");
  const std::string empty = WriteTemp("empty.csv", "");
  r = Load(TraceFormat::kTiresias, empty);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, empty +
                                   ": the file is empty, expected a header: "
                                   "job_id,num_gpu,submit_time,duration");
  const std::string only_header = WriteTemp("header.csv", header);
  r = Load(TraceFormat::kTiresias, only_header);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            only_header + ": no job left to run (0 rows, 0 skipped as bad, 0 filtered out)");
  r = Load(TraceFormat::kTiresias, "/nonexistent/trace.csv");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "/nonexistent/trace.csv: cannot read file: No such file or directory");

  const std::string philly =
      WriteTemp("philly.csv",
                "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66,a\n"
                "2017-02-30 00:00:00,66.0,1,66,a\n");
  r = Load(TraceFormat::kPhilly, philly);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, philly +
                                   ":3: timestamp: expected a UTC time YYYY-MM-DD[ HH:MM:SS], got "
                                   "'2017-02-30 00:00:00'");
}

// A line longer than internal::kMaxLineBytes is a bad row, read without
// holding it: the reader keeps at most kMaxLineBytes + 1 bytes of any line
// (a 3 GB line used to be read whole, and fail as "cannot read file: I/O
// error" when memory ran out).
TEST(CsvReaderTest, LongLinesAreCutAndSkippedInBoundedMemory) {
  constexpr size_t kMax = internal::kMaxLineBytes;
  const std::string long_line(4 * kMax + 17, 'x');
  const std::string exact(kMax, 'y');
  const std::string path =
      WriteTemp("long.csv", "a,b\n" + long_line + "\n1,2\r\n" + exact + "\n\n" +
                                std::string("z\0z", 3) + "\n" + long_line);
  internal::CsvReader csv(path);
  ASSERT_TRUE(csv.Open());
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), "a,b");
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line_no(), 2);
  EXPECT_TRUE(csv.TooLong());
  EXPECT_EQ(csv.line(), std::string(kMax + 1, 'x'));
  EXPECT_LE(csv.line().capacity(), 2 * kMax);
  EXPECT_EQ(csv.TooLongError().message,
            path + ":2: the line is longer than " + std::to_string(kMax) + " bytes");
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), "1,2");
  EXPECT_EQ(csv.line_no(), 3);
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), exact);  // exactly the limit: not too long
  EXPECT_FALSE(csv.TooLong());
  EXPECT_EQ(csv.line_no(), 4);
  ASSERT_TRUE(csv.Next());  // the blank line 5 is skipped
  EXPECT_EQ(csv.line(), std::string("z\0z", 3));
  EXPECT_EQ(csv.line_no(), 6);
  ASSERT_TRUE(csv.Next());  // the last line, without a line break
  EXPECT_TRUE(csv.TooLong());
  EXPECT_EQ(csv.line_no(), 7);
  EXPECT_LE(csv.line().capacity(), 2 * kMax);
  EXPECT_FALSE(csv.Next());
  EXPECT_TRUE(csv.ReadError());

  // In every importer: the row, or the header, is refused by its line.
  const std::string trace = WriteTemp(
      "long-trace.csv", "job_id,num_gpu,submit_time,duration\n" + long_line + "\n0,1,0,5\n");
  auto r = Load(TraceFormat::kTiresias, trace);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            trace + ":2: the line is longer than " + std::to_string(kMax) + " bytes");
  r = Load(TraceFormat::kTiresias, trace, /*skip=*/true);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->skipped, 1);
  const std::string header = WriteTemp("long-header.csv", long_line + "\n0,1,0,5\n");
  for (auto f :
       {TraceFormat::kTiresias, TraceFormat::kPhilly, TraceFormat::kPollux, TraceFormat::kNative}) {
    r = Load(f, header);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              header + ":1: the line is longer than " + std::to_string(kMax) + " bytes");
  }
  auto cluster = LoadTiresiasCluster(header);
  ASSERT_FALSE(cluster);
  EXPECT_EQ(cluster.error().message,
            header + ":1: the line is longer than " + std::to_string(kMax) + " bytes");
}

// A cut line that ends in '\r' where it was cut is still too long: the
// '\r' of a line ending is dropped only from a line read whole.
TEST(CsvReaderTest, ACutLineKeepsItsLastByte) {
  constexpr size_t kMax = internal::kMaxLineBytes;
  const std::string path = WriteTemp(
      "cut-cr.csv", std::string(kMax, 'x') + "\r" + "tail\n" + std::string(kMax, 'y') + "\r\n");
  internal::CsvReader csv(path);
  ASSERT_TRUE(csv.Open());
  ASSERT_TRUE(csv.Next());
  EXPECT_TRUE(csv.TooLong());
  ASSERT_TRUE(csv.Next());
  EXPECT_FALSE(csv.TooLong());  // exactly the limit, then CRLF
  EXPECT_EQ(csv.line(), std::string(kMax, 'y'));
}

// A CSV input over core::kMaxCsvBytes is refused before a byte is read (a
// sparse file here: no disk, no memory); a 1.5 GB trace line used to cost
// 2-3 GB before its error. Not a regular file: refused without blocking,
// as YAML inputs.
TEST(CsvReaderTest, FilesOverTheCapAreRefusedUnread) {
  const std::string path = ::testing::TempDir() + "dlsched_trace_sparse.csv";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(core::kMaxCsvBytes) + 1), 0);
  ::close(fd);
  const std::string expected = path + ": cannot read file: it has " +
                               std::to_string(core::kMaxCsvBytes + 1) +
                               " bytes; CSV inputs are limited to 256 MiB";
  for (TraceFormat f : {TraceFormat::kTiresias, TraceFormat::kNative}) {
    auto load = Load(f, path);
    ASSERT_FALSE(load.has_value());
    EXPECT_EQ(load.error().message, expected);
  }
  auto cluster = LoadTiresiasCluster(path);
  ASSERT_FALSE(cluster.has_value());
  EXPECT_EQ(cluster.error().message, expected);
  std::filesystem::remove(path);
  auto device = LoadTiresiasCluster("/dev/zero");
  ASSERT_FALSE(device.has_value());
  EXPECT_EQ(device.error().message,
            "/dev/zero: cannot read file: it is a character device; dlsched reads regular files "
            "only");
}

// Ctrl-C while a trace loads: the load looks at TraceOptions::stop every
// kStopCheckRows rows and stops (a 10^6-row trace took 7.5 s, Ctrl-C
// waiting for its end).
TEST(TraceLoadTest, StopsWhenAsked) {
  std::string rows = "job_id,num_gpu,submit_time,duration\n";
  for (int i = 0; i < 5000; ++i) rows += std::to_string(i) + ",1," + std::to_string(i) + ",10\n";
  const std::string path = WriteTemp("stop.csv", rows);
  std::atomic<bool> stop{false};
  TraceOptions o;
  o.format = TraceFormat::kTiresias;
  o.path = path;
  o.stop = &stop;
  auto all = LoadTrace(o);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->workload.jobs.size(), 5000u);
  stop = true;
  auto stopped = LoadTrace(o);
  ASSERT_FALSE(stopped.has_value());
  EXPECT_EQ(stopped.error().message, path + ":1025: interrupted while reading");
  // Past --limit, the rows counted but not parsed stop too.
  o.limit = 1;
  stop = false;
  ASSERT_TRUE(LoadTrace(o));
  stop = true;
  EXPECT_EQ(LoadTrace(o).error().message, path + ":1026: interrupted while reading");
}

// A CSV saved by a spreadsheet starts with a UTF-8 byte order mark: it is
// not part of the first column's name ("no column 'job_id'" before).
TEST(CsvReaderTest, ByteOrderMarkBeforeTheHeader) {
  const std::string path =
      WriteTemp("bom.csv", "\xEF\xBB\xBFjob_id,num_gpu,submit_time,duration\n0,1,0,50\n1,2,5,x\n");
  auto r = Load(TraceFormat::kTiresias, path, /*skip=*/true);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->workload.jobs.size(), 1u);
  EXPECT_EQ(r->first_skipped, path + ":3: duration: expected a number in (0, 1000000000], got 'x'");
  const std::string cluster = WriteTemp(
      "bom-cluster.csv",
      "\xEF\xBB\xBFnum_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
      "1,2,4,8,64\n");
  auto c = LoadTiresiasCluster(cluster);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->nodes.size(), 2u);
}

// Every job of Pollux's workload-1 takes, at its own size and batch, the
// seconds Pollux's own model gives (testing/pollux/workload-1-isolated.csv,
// computed with Pollux's simulator code, see its README).
//
// Worked example, cifar10-0 (6 GPUs, batch 2048): 342 per GPU (ceil(2048 /
// 6), below cifar10's largest measured 1024, so no accumulation), an
// effective batch of 6 x 342 = 2052, placement 4+2 read as "24";
// the step time is interpolated between the measured per-GPU batches 257
// and 363 of placement 24, and each of the 100 epochs runs its progress
// step over step_time / gain, gain = (var + sqr) / (var / (2052 / 128) +
// sqr) from the validation files at 2048 and 4096: 897.298 s in all, 910 s
// with each epoch rounded to whole seconds as Pollux's simulator counts
// them (its seconds_sim, 940, less its 30 s restart).
TEST(PolluxTraceTest, MatchesPolluxsModelOnWorkload1) {
  auto t = Load(TraceFormat::kPollux, Data("pollux/workloads/workload-1.csv"));
  ASSERT_TRUE(t) << t.error().message;
  const auto oracle =
      ReadCsv(std::string(DLSCHED_SOURCE_DIR) + "/testing/pollux/workload-1-isolated.csv");
  // name,time,application,num_replicas,batch_size,placement,seconds,...
  ASSERT_EQ(oracle.size(), 161u);
  ASSERT_EQ(t->workload.jobs.size(), 160u);
  std::map<std::string, const core::JobSpec*> by_name;
  for (const auto& j : t->workload.jobs) by_name[j.name] = &j;
  for (size_t i = 1; i < oracle.size(); ++i) {
    const auto& row = oracle[i];
    SCOPED_TRACE(row[0]);
    ASSERT_TRUE(by_name.contains(row[0]));
    const core::JobSpec& job = *by_name[row[0]];
    const int gpus = std::stoi(row[3]);
    EXPECT_EQ(job.submit_time, std::stod(row[1]));
    const core::RoleSpec& w = job.role(core::Role::kWorker);
    EXPECT_EQ(w.replicas, gpus);
    EXPECT_EQ(w.min_replicas, gpus);  // rigid without --elastic
    EXPECT_EQ(w.max_replicas, gpus);
    EXPECT_EQ(w.resources[core::kGpu], 1);
    EXPECT_EQ(job.launch_delay, 30);  // Pollux's restart delay
    EXPECT_EQ(job.throughput.model, "pollux:" + row[2]);
    EXPECT_FALSE(job.duration);
    EXPECT_NEAR(job.total_steps / job.throughput.Rate(gpus), std::stod(row[7]) - 30, 0.0011);
    // Every way its GPUs can sit on Pollux's testbed has a rate (the
    // measurements define them all for these sizes and batches).
    EXPECT_EQ(job.throughput.placements.size(), internal::PolluxPlacements(gpus).size());
  }
  // cifar10 completes at the progress of its 100th epoch, the smallest of
  // its validation files (validation-128.csv's row 100 says 39062.908...).
  EXPECT_NEAR(by_name["cifar10-0"]->total_steps, 39062.908, 0.001);
}

// --elastic gives the table at every size Pollux's measurements define.
TEST(PolluxTraceTest, ElasticJobsGetPolluxsSpeedAtEachSize) {
  const std::string dir = ::testing::TempDir() + "dlsched_pollux_workloads";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/w.csv";
  std::ofstream(path) << "name,time,application,num_replicas,batch_size\n"
                         "c,0,cifar10,6,2048\n"
                         "i,5,imagenet,16,3200\n";
  TraceOptions o;
  o.format = TraceFormat::kPollux;
  o.path = path;
  o.pollux_traces = Data("pollux/traces");
  o.min_factor = 0.5;
  o.max_factor = 2;
  auto t = LoadTrace(o);
  ASSERT_TRUE(t) << t.error().message;
  const core::JobSpec& c = t->workload.jobs[0];
  const auto& table = c.throughput.steps_per_s;
  // 3..12 GPUs, all on at most 3 nodes of 4: every size is measured. The
  // speed is the data's, not monotonic (12 GPUs are slower than 11 here).
  ASSERT_EQ(table.size(), 10u);
  EXPECT_EQ(table.begin()->first, 3);
  EXPECT_EQ(table.rbegin()->first, 12);
  // Pollux's model at 6 and at 8 GPUs with batch 2048 (the oracle's
  // cifar10-0 and cifar10-12 rows: seconds_sim less 30).
  EXPECT_NEAR(c.total_steps / table.at(6), 910, 0.0011);
  EXPECT_NEAR(c.total_steps / table.at(8), 865, 0.0011);
  // imagenet 8..32: 17..32 GPUs are 5..8 nodes, measured only at 6 nodes
  // x 24 and 8 nodes x 32 (scalability.csv); the rest is interpolated by
  // the table between them.
  const core::JobSpec& i = t->workload.jobs[1];
  const auto& big = i.throughput.steps_per_s;
  EXPECT_EQ(big.begin()->first, 8);
  EXPECT_EQ(big.rbegin()->first, 32);
  EXPECT_TRUE(big.contains(16));
  EXPECT_FALSE(big.contains(20));
  EXPECT_NEAR(i.total_steps / big.at(24), 31805, 0.0011);  // the oracle's imagenet-126
  EXPECT_FALSE(big.contains(28));
}

// At its own size a job lists every placement on Pollux's testbed (up to
// 16 nodes of 4 GPUs) that the measurements define, at Pollux's speed for
// it: the seconds below are Pollux's own Job.step, run from 0 on each
// placement without restarts (testing/pollux/README.md says how Pollux's
// code was run). cifar10 at batch 2048 on 6 GPUs: 910 s packed (4 + 2),
// 932 s on 2 + 2 + 2 (9 placements of 6 GPUs); on 12 GPUs at batch 4096
// over 4 + 2 + 2 + 2 + 2 (five nodes, between the 4- and 6-node lines of
// 12 GPUs, at 341 per GPU, measured on neither) 631 s in Pollux, 630 s
// here. bert at batch 384 on 16 GPUs over 4 + 4 + 4 + 2 + 2 (12 per GPU,
// measured on both lines): 1303 s, Pollux's.
TEST(PolluxTraceTest, EachPlacementRunsAtPolluxsSpeedForIt) {
  const std::string dir = ::testing::TempDir() + "dlsched_pollux_placements";
  std::filesystem::create_directories(dir);
  TraceOptions o;
  o.format = TraceFormat::kPollux;
  o.path = dir + "/w.csv";
  o.pollux_traces = Data("pollux/traces");
  std::ofstream(o.path) << "name,time,application,num_replicas,batch_size\n"
                           "c,0,cifar10,6,2048\nd,0,cifar10,12,4096\nb,0,bert,16,384\n";
  auto t = LoadTrace(o);
  ASSERT_TRUE(t) << t.error().message;
  const core::JobSpec& c = t->workload.jobs[0];
  const core::JobSpec& d = t->workload.jobs[1];
  const core::JobSpec& b = t->workload.jobs[2];
  const auto seconds = [](const core::JobSpec& j, std::vector<int> shape) {
    return j.total_steps / j.throughput.placements.at(shape);
  };
  EXPECT_EQ(c.throughput.placements.size(), 9u);
  EXPECT_EQ(c.throughput.placements.at({4, 2}), c.throughput.steps_per_s.at(6));
  EXPECT_NEAR(seconds(c, {2, 2, 2}), 932, 1e-6);
  EXPECT_NEAR(seconds(d, {4, 2, 2, 2, 2}), 630, 1e-6);
  EXPECT_NEAR(seconds(b, {4, 4, 4, 2, 2}), 1303, 1e-6);
  // Pollux's testbed has 16 nodes: 16 GPUs one a node is a placement, on
  // the measured 16-node line.
  EXPECT_TRUE(b.throughput.placements.contains(std::vector<int>(16, 1)));
  EXPECT_EQ(internal::PolluxPlacements(6).size(), 9u);
  EXPECT_EQ(internal::PolluxPlacements(48).size(), 64u);  // 12 to 16 nodes
  EXPECT_EQ(internal::PolluxPlacements(65).size(), 0u);
}

TEST(PolluxTraceTest, BadRows) {
  const std::string dir = ::testing::TempDir() + "dlsched_pollux_bad";
  std::filesystem::create_directories(dir);
  const std::string header = "name,time,application,num_replicas,batch_size\n";
  TraceOptions o;
  o.format = TraceFormat::kPollux;
  o.pollux_traces = Data("pollux/traces");
  const std::map<std::string, std::string> cases = {
      {"a,0,resnet,1,128\n",
       ":2: application: expected one of bert, cifar10, deepspeech2, imagenet, ncf, yolov3, got "
       "'resnet'"},
      {"a,0,bert,1,2\n",
       ":2: batch_size: 2 over 1 GPUs: 2 per GPU is below bert's smallest measured, 4"},
      {"a,0,cifar10,0,128\n", ":2: num_replicas: expected an integer in [1, 100000], got '0'"},
      {"a,-1,cifar10,1,128\n", ":2: time: expected a number in [0, 1000000000], got '-1'"},
      {"a,0,cifar10,1,64\n",
       ":2: batch_size: 64 over 1 GPUs: the batch runs as 64, outside cifar10's validated "
       "128..4096"},
  };
  for (const auto& [row, message] : cases) {
    o.path = dir + "/one.csv";
    std::ofstream(o.path) << header << row;
    auto r = LoadTrace(o);
    ASSERT_FALSE(r) << row;
    EXPECT_EQ(r.error().message, o.path + message) << row;
  }
  // Without the measurements the import fails, even when skipping bad rows.
  o.pollux_traces = dir + "/nowhere";
  o.skip_bad_rows = true;
  std::ofstream(o.path) << header << "a,0,cifar10,1,128\n";
  auto r = LoadTrace(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            o.path + ":2: application: cifar10: " + dir +
                "/nowhere/cifar10/placements.csv: cannot read file: No such file or directory "
                "(Pollux's measurements; give their directory with --pollux-traces DIR)");
}

// Pollux's measurement files hold counts and batch sizes that become
// integers: each is bounded where it is read (a local_bsz of 0 divided by
// zero into a signed overflow, UBSan's report).
TEST(PolluxTraceTest, MeasurementsAreBounded) {
  const std::string dir = ::testing::TempDir() + "dlsched_pollux_measurements";
  const std::string bert = dir + "/m/bert";
  std::filesystem::create_directories(bert);
  std::ofstream(bert + "/validation-12.csv") << "progress,grad_sqr,grad_var\n1,1,1\n2,1,1\n";
  TraceOptions o;
  o.format = TraceFormat::kPollux;
  o.path = dir + "/w.csv";
  o.pollux_traces = dir + "/m";
  std::ofstream(o.path) << "name,time,application,num_replicas,batch_size\na,0,bert,1,12\n";
  const std::pair<std::string, std::string> cases[][2] = {
      {{"placements.csv", "placement,local_bsz,step_time,sync_time\n1,0,0.5,0.1\n"},
       {"placements.csv:2", "local_bsz: expected a number in [1, 1099511627776], got '0'"}},
      {{"placements.csv", "placement,local_bsz,step_time,sync_time\n1e300,4,0.5,0.1\n"},
       {"placements.csv:2", "placement: expected a number in [1, 1000000000000000], got '1e300'"}},
      {{"scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n5,1e9,4,1,1\n"},
       {"scalability.csv:2", "num_replicas: expected a number in [1, 100000], got '1e9'"}},
  };
  for (const auto& [file, want] : cases) {
    std::ofstream(bert + "/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,4,1,1\n";
    std::ofstream(bert + "/scalability.csv")
        << "num_nodes,num_replicas,local_bsz,step_time,sync_time\n5,5,4,1,1\n";
    std::ofstream(bert + "/" + file.first) << file.second;
    auto r = LoadTrace(o);
    ASSERT_FALSE(r) << file.second;
    EXPECT_NE(r.error().message.find(bert + "/" + want.first + ": " + want.second),
              std::string::npos)
        << r.error().message;
  }
}

TEST(NativeTraceTest, RoundTripsTheTiresiasTrace) {
  TraceOptions o;
  o.format = TraceFormat::kTiresias;
  o.path = Data("tiresias/60_job.csv");
  o.min_factor = 0.5;
  o.max_factor = 2;
  o.scaling = *core::ScalingCurve::Parse("amdahl:0.9");
  auto t = LoadTrace(o);
  ASSERT_TRUE(t) << t.error().message;
  auto csv = ToNativeCsv(t->workload);
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ(csv->substr(0, csv->find('\n')), kNativeHeader);
  // job-1 has 8 GPUs: minReplicas ceil(4) = 4, maxReplicas 16.
  EXPECT_NE(csv->find("\njob-1,30,8,4,16,1,,,147,amdahl:0.9\n"), std::string::npos) << *csv;

  const std::string path = WriteTemp("native.csv", *csv);
  auto back = Load(TraceFormat::kNative, path);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->workload.jobs.size(), t->workload.jobs.size());
  for (size_t i = 0; i < t->workload.jobs.size(); ++i) {
    const core::JobSpec& a = t->workload.jobs[i];
    const core::JobSpec& b = back->workload.jobs[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.submit_time, b.submit_time);
    EXPECT_EQ(*a.duration, *b.duration);
    EXPECT_EQ(a.scaling, b.scaling);
    EXPECT_EQ(a.role(core::Role::kWorker).replicas, b.role(core::Role::kWorker).replicas);
    EXPECT_EQ(a.role(core::Role::kWorker).min_replicas, b.role(core::Role::kWorker).min_replicas);
    EXPECT_EQ(a.role(core::Role::kWorker).max_replicas, b.role(core::Role::kWorker).max_replicas);
    EXPECT_EQ(a.role(core::Role::kWorker).resources, b.role(core::Role::kWorker).resources);
    EXPECT_EQ(a.throughput.steps_per_s, b.throughput.steps_per_s);
  }
  // Written again, byte for byte the same.
  auto again = ToNativeCsv(back->workload);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *csv);
}

TEST(NativeTraceTest, ResourcesAndBadRows) {
  const std::string header(kNativeHeader);
  const std::string good = WriteTemp("n1.csv", header + "\na,5.5,2,1,4,1,500m,2Gi,100,sqrt\n");
  auto t = Load(TraceFormat::kNative, good);
  ASSERT_TRUE(t) << t.error().message;
  const core::JobSpec& j = t->workload.jobs[0];
  EXPECT_EQ(j.submit_time, 5.5);
  EXPECT_EQ(j.role(core::Role::kWorker).resources[core::kCpu], 500);
  EXPECT_EQ(j.role(core::Role::kWorker).resources[core::kMemory], int64_t{2} << 30);
  // sqrt at size 2: 1 step/s at 2, sqrt(1/2) at 1, sqrt(2) at 4.
  EXPECT_DOUBLE_EQ(j.throughput.Rate(1), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(j.throughput.Rate(2), 1);
  EXPECT_DOUBLE_EQ(j.throughput.Rate(4), std::sqrt(2.0));

  const std::map<std::string, std::string> cases = {
      {"a,0,2,3,4,1,,,100,", ":2: min_workers: expected an integer in [1, 2], got '3'"},
      {"a,0,2,1,1,1,,,100,", ":2: max_workers: expected an integer in [2, 100000], got '1'"},
      {"a,0,2,1,2,1,1x,,100,",
       ":2: cpu: '1x' is not a valid quantity (expected a number with an optional suffix such as "
       "500m, 2Gi, 1.5, 1e3)"},
      {"a,0,2,1,2,1,,,100,cubic",
       ":2: scaling: expected linear, sqrt, none or amdahl:<parallel fraction in (0, 1]>, got "
       "'cubic'"},
  };
  for (const auto& [row, message] : cases) {
    const std::string p = WriteTemp("n2.csv", header + "\n" + row + "\n");
    auto r = Load(TraceFormat::kNative, p);
    ASSERT_FALSE(r) << row;
    EXPECT_EQ(r.error().message, p + message) << row;
  }

  // A job the native format cannot hold is refused, naming it.
  WorkloadSpec w;
  w.source = "w.yaml";
  w.jobs.push_back(t->workload.jobs[0]);
  w.jobs[0].role(core::Role::kChief).replicas = 1;
  auto refused = ToNativeCsv(w);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "w.yaml: job 'a': it has Chief replicas; the native format holds workers and PS with "
            "gpus, cpu and memory, and a duration or steps and a model-zoo model (write YAML "
            "instead)");
}

// The fields of two jobs that the native format and the YAML both give.
void ExpectSameJob(const core::JobSpec& a, const core::JobSpec& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.namespace_name, b.namespace_name);
  EXPECT_EQ(a.submit_time, b.submit_time);
  for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const core::RoleSpec& x = a.role(role);
    const core::RoleSpec& y = b.role(role);
    EXPECT_EQ(x.replicas, y.replicas) << core::RoleName(role);
    EXPECT_EQ(x.min_replicas, y.min_replicas) << core::RoleName(role);
    EXPECT_EQ(x.max_replicas, y.max_replicas) << core::RoleName(role);
    EXPECT_EQ(x.resources, y.resources) << core::RoleName(role);
    EXPECT_EQ(x.containers.size(), y.containers.size()) << core::RoleName(role);
    EXPECT_TRUE(x.constraints.node_selector.empty() && y.constraints.node_selector.empty());
  }
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.total_steps, b.total_steps);
  EXPECT_EQ(a.duration, b.duration);
  EXPECT_EQ(a.scaling, b.scaling);
  EXPECT_EQ(a.throughput.model, b.throughput.model);
  EXPECT_EQ(a.throughput.steps_per_s, b.throughput.steps_per_s);
  EXPECT_EQ(a.throughput.locality_sensitivity, b.throughput.locality_sensitivity);
  EXPECT_EQ(a.launch_delay, b.launch_delay);
  EXPECT_EQ(a.checkpoint_delay, b.checkpoint_delay);
  EXPECT_EQ(a.steps_done, b.steps_done);
  EXPECT_EQ(a.deadline, b.deadline);
}

// The wide header: PS (count, cpu and memory each) and jobs given by steps
// and a model, as the YAML's `ps: {replicas, resources}`, `totalSteps` and
// `throughput: {model}`. The extra columns may come in any order, and any
// of them may be left out of the header.
TEST(NativeTraceTest, WideHeaderHoldsPsStepsAndModels) {
  const std::string path =
      WriteTemp("wide.csv", std::string(kNativeWideHeader) +
                                "\n"
                                "job-1,1.008,1,1,2,1,5,16Gi,,,1,4,16Gi,8896,recommendation\n"
                                "job-2,2,2,1,4,1,,,100,sqrt,2,500m,,,\n"
                                "job-3,3,1,1,1,1,,,50,,,,,,\n");
  auto t = Load(TraceFormat::kNative, path);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->workload.jobs.size(), 3u);
  const core::JobSpec& j1 = t->workload.jobs[0];
  EXPECT_EQ(j1.name, "job-1");
  EXPECT_EQ(j1.submit_time, 1.008);
  const core::RoleSpec& ps = j1.role(core::Role::kPS);
  EXPECT_EQ(ps.replicas, 1);
  EXPECT_EQ(ps.min_replicas, 1);
  EXPECT_EQ(ps.max_replicas, 1);
  EXPECT_EQ(ps.resources[core::kCpu], 4000);
  EXPECT_EQ(ps.resources[core::kMemory], int64_t{16} << 30);
  EXPECT_EQ(ps.resources[core::kGpu], 0);
  const core::RoleSpec& w = j1.role(core::Role::kWorker);
  EXPECT_EQ(w.replicas, 1);
  EXPECT_EQ(w.max_replicas, 2);
  EXPECT_EQ(w.resources[core::kCpu], 5000);
  EXPECT_FALSE(j1.duration);
  EXPECT_EQ(j1.total_steps, 8896);
  EXPECT_EQ(j1.throughput.model, "recommendation");
  EXPECT_TRUE(j1.throughput.steps_per_s.empty());  // the zoo's, once resolved

  const core::JobSpec& j2 = t->workload.jobs[1];
  EXPECT_EQ(j2.role(core::Role::kPS).replicas, 2);
  EXPECT_EQ(j2.role(core::Role::kPS).resources[core::kCpu], 500);
  EXPECT_EQ(j2.role(core::Role::kPS).resources[core::kMemory], 0);
  EXPECT_EQ(j2.duration, 100);
  EXPECT_DOUBLE_EQ(j2.throughput.Rate(4), std::sqrt(2.0));
  EXPECT_EQ(t->workload.jobs[2].role(core::Role::kPS).replicas, 0);
  EXPECT_EQ(t->workload.jobs[2].duration, 50);

  // Only steps and model beyond the narrow columns, in another order.
  const std::string some =
      WriteTemp("some.csv",
                "model,name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,"
                "scaling,steps\nresnet50,a,0,2,2,2,1,,,,,1e3\n");
  auto s = Load(TraceFormat::kNative, some);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload.jobs[0].throughput.model, "resnet50");
  EXPECT_EQ(s->workload.jobs[0].total_steps, 1000);
  EXPECT_EQ(s->workload.jobs[0].role(core::Role::kPS).replicas, 0);
}

const core::ThroughputProfile& Resnet50() {
  static const core::ThroughputProfile p{"resnet50", {{1, 2.5}, {2, 4.5}}, 0.2, 0, {}, {}, {}};
  return p;
}
const core::ThroughputProfile* FakeZoo(std::string_view name) {
  return name == "resnet50" ? &Resnet50() : nullptr;
}

// A YAML job with PS and a model, converted and read back, is the same job,
// and converted again the same bytes. So is a duration job with PS; a job
// without PS and with a duration keeps the narrow columns empty.
TEST(NativeTraceTest, YamlJobsWithPsAndModelsRoundTrip) {
  auto yaml = ParseWorkload(
      "jobs:\n"
      "  - name: job-00001\n"
      "    arrival: 1.008\n"
      "    ps: {replicas: 2, resources: {cpu: \"4\", memory: \"16Gi\"}}\n"
      "    worker: {replicas: 1, maxReplicas: 2, resources: {cpu: \"5\", memory: \"16Gi\", "
      "nvidia.com/gpu: \"1\"}}\n"
      "    totalSteps: 8896\n"
      "    throughput: {model: recommendation}\n"
      "  - name: d\n"
      "    arrival: 0.1\n"
      "    ps: {replicas: 1, resources: {memory: 1Gi}}\n"
      "    worker: {replicas: 4, minReplicas: 2, maxReplicas: 8, resources: {nvidia.com/gpu: 1}}\n"
      "    duration: 600\n"
      "    scaling: amdahl:0.9\n"
      "  - name: e\n"
      "    arrival: 7\n"
      "    worker: {replicas: 1, resources: {nvidia.com/gpu: 2}}\n"
      "    duration: 60\n",
      "w.yaml");
  ASSERT_TRUE(yaml) << yaml.error().message;
  auto csv = ToNativeCsv(*yaml);
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ(*csv, std::string(kNativeWideHeader) +
                      "\n"
                      "d,0.1,4,2,8,1,,,600,amdahl:0.9,1,,1Gi,,\n"
                      "job-00001,1.008,1,1,2,1,5,16Gi,,,2,4,16Gi,8896,recommendation\n"
                      "e,7,1,1,1,2,,,60,linear,,,,,\n");
  const std::string path = WriteTemp("yaml-native.csv", *csv);
  auto back = Load(TraceFormat::kNative, path);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->workload.jobs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) ExpectSameJob(yaml->jobs[i], back->workload.jobs[i]);
  auto again = ToNativeCsv(back->workload);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *csv);

  // Without PS and model, the narrow header, as the format always wrote.
  WorkloadSpec narrow;
  narrow.jobs.push_back(yaml->jobs[2]);
  EXPECT_EQ(*ToNativeCsv(narrow), std::string(kNativeHeader) + "\ne,7,1,1,1,2,,,60,linear\n");

  // A model's table filled in from the zoo (as sim::LoadWorkload does) is
  // written as the model when the lookup says it is the zoo's.
  WorkloadSpec resolved;
  resolved.source = "r.yaml";
  resolved.jobs.push_back(yaml->jobs[1]);
  resolved.jobs[0].throughput = Resnet50();
  auto with_zoo = ToNativeCsv(resolved, FakeZoo);
  ASSERT_TRUE(with_zoo) << with_zoo.error().message;
  EXPECT_NE(with_zoo->find(",2,4,16Gi,8896,resnet50\n"), std::string::npos) << *with_zoo;
  auto without_zoo = ToNativeCsv(resolved);
  ASSERT_FALSE(without_zoo);
  EXPECT_NE(without_zoo.error().message.find(
                "r.yaml: job 'job-00001': its throughput 'resnet50' is a table, not a model-zoo "
                "model; "),
            std::string::npos)
      << without_zoo.error().message;
  resolved.jobs[0].throughput.steps_per_s[3] = 5;  // no longer the zoo's
  auto changed = ToNativeCsv(resolved, FakeZoo);
  ASSERT_FALSE(changed);
  EXPECT_NE(changed.error().message.find("its throughput 'resnet50' is a table"),
            std::string::npos);
}

// What the native format cannot hold is refused with the job and why.
TEST(NativeTraceTest, RefusesWhatOnlyYamlHolds) {
  auto yaml = ParseWorkload(
      "jobs:\n"
      "  - {name: table, arrival: 0, worker: {replicas: 1, resources: {nvidia.com/gpu: 1}},\n"
      "     totalSteps: 10, throughput: {table: {1: 1}}}\n"
      "  - {name: gpu-ps, arrival: 0, worker: {replicas: 1, resources: {nvidia.com/gpu: 1}},\n"
      "     ps: {replicas: 1, resources: {nvidia.com/gpu: 1}}, duration: 5}\n"
      "  - {name: pinned-ps, arrival: 0, worker: {replicas: 1, resources: {nvidia.com/gpu: 1}},\n"
      "     ps: {replicas: 1, resources: {cpu: 1}, nodeSelector: {a: b}}, duration: 5}\n"
      "  - {name: delayed, arrival: 0, worker: {replicas: 1, resources: {nvidia.com/gpu: 1}},\n"
      "     totalSteps: 10, throughput: {model: resnet50}, launchDelay: 3, deadline: 9}\n",
      "w.yaml");
  ASSERT_TRUE(yaml) << yaml.error().message;
  const std::map<std::string, std::string> why = {
      {"table", "its throughput is a table, not a model-zoo model"},
      {"gpu-ps", "its PS request nvidia.com/gpu"},
      {"pinned-ps", "its PS have node constraints or containers"},
      {"delayed", "it sets launchDelay, deadline"},
  };
  for (const core::JobSpec& job : yaml->jobs) {
    WorkloadSpec one;
    one.source = "w.yaml";
    one.jobs.push_back(job);
    auto r = ToNativeCsv(one);
    ASSERT_FALSE(r) << job.name;
    EXPECT_EQ(r.error().message,
              "w.yaml: job '" + job.name + "': " + why.at(job.name) +
                  "; the native format holds workers and PS with gpus, cpu and memory, and a "
                  "duration or steps and a model-zoo model (write YAML instead)");
  }
}

TEST(NativeTraceTest, WideBadRowsAndSkipping) {
  const std::string header(kNativeWideHeader);
  const std::map<std::string, std::string> cases = {
      {"a,0,1,1,1,1,,,100,,,,,500,resnet50",
       ":2: steps: give either duration (seconds at the job's size) or steps and model, not "
       "both"},
      {"a,0,1,1,1,1,,,100,,,,,,resnet50",
       ":2: model: give either duration (seconds at the job's size) or steps and model, not "
       "both"},
      {"a,0,1,1,1,1,,,,,,,,500,",
       ":2: model: missing, expected a model-zoo name (a job with steps gives its model)"},
      {"a,0,1,1,1,1,,,,,,,,,resnet50",
       ":2: steps: missing, expected a number in (0, 1000000000000000] (a job with a model "
       "gives its steps)"},
      {"a,0,1,1,1,1,,,,sqrt,,,,500,resnet50",
       ":2: scaling: applies only to a job given by its duration"},
      {"a,0,1,1,1,1,,,,,,,,0,resnet50",
       ":2: steps: expected a number in (0, 1000000000000000], got '0'"},
      {"a,0,1,1,1,1,,,100,,1,4x,,,",
       ":2: ps_cpu: '4x' is not a valid quantity (expected a number with an optional suffix such "
       "as 500m, 2Gi, 1.5, 1e3)"},
      {"a,0,1,1,1,1,,,100,,0,,1Gi,,",
       ":2: ps_memory: given for a job without PS (ps is empty or 0)"},
      {"a,0,1,1,1,1,,,100,,-1,,,,", ":2: ps: expected an integer in [0, 100000], got '-1'"},
      {"a,0,1,1,1,1,,,,,,,,,", ":2: duration: expected a number in (0, 1000000000], got ''"},
      {"a,0,1,1,99999,1,,,100,,2,1,,,",
       ":2: max_workers: the job would have 100001 tasks (PS, Chief and maxReplicas workers); at "
       "most 100000 are supported"},
      {"a,0,1,1,4097,,,1Pi,100,,,,,,",
       ":2: the job's total memory at maxReplicas exceeds the limit of 4Ei"},
      {"a,0,1,1,1,1,,,,,,,,5,res\tnet", ":2: model: 'res\\x09net' contains a control character"},
  };
  for (const auto& [row, message] : cases) {
    const std::string p = WriteTemp("wide-bad.csv", header + "\n" + row + "\n");
    auto r = Load(TraceFormat::kNative, p);
    ASSERT_FALSE(r) << row;
    EXPECT_EQ(r.error().message, p + message) << row;
  }

  const std::string path = WriteTemp("wide-skip.csv", header +
                                                          "\n"
                                                          "a,0,1,1,1,1,,,,,1,1,1Gi,500,resnet50\n"
                                                          "b,0,1,1,1,1,,,100,,,,,500,resnet50\n"
                                                          "c,1,1,1,1,1,,,,sqrt,,,,500,resnet50\n"
                                                          "d,2,1,1,1,1,,,30,,2,,,,\n"
                                                          "e,3,1,1,1,1,,,,,,,,500,\n");
  auto e = Load(TraceFormat::kNative, path);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message,
            path +
                ":3: steps: give either duration (seconds at the job's size) or steps and "
                "model, not both");
  auto t = Load(TraceFormat::kNative, path, /*skip=*/true);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->rows, 5);
  EXPECT_EQ(t->skipped, 3);
  EXPECT_EQ(t->first_skipped, e.error().message);
  ASSERT_EQ(t->workload.jobs.size(), 2u);
  EXPECT_EQ(t->workload.jobs[0].name, "a");
  EXPECT_EQ(t->workload.jobs[0].role(core::Role::kPS).replicas, 1);
  EXPECT_EQ(t->workload.jobs[1].name, "d");
  EXPECT_EQ(t->workload.jobs[1].role(core::Role::kPS).replicas, 2);
}

// Hand-worked: linear at size 4 gives m/4 at m workers; amdahl:0.5 at size
// 1 gives 1 / (0.5 + 0.5 / m): 4/3 at 2, 1.6 at 4; none keeps 1. The rates
// come from the curve, sizes 2..8 (no table: config/cost_test.cc).
TEST(ScalingCurveTest, DurationThroughputTables) {
  const auto linear = core::DurationThroughput(4, 2, 8, {});
  EXPECT_TRUE(linear.steps_per_s.empty());
  ASSERT_TRUE(linear.HasRates());
  EXPECT_EQ(linear.FirstSize(), 2);
  EXPECT_DOUBLE_EQ(linear.Rate(2), 0.5);
  EXPECT_DOUBLE_EQ(linear.Rate(4), 1);
  EXPECT_DOUBLE_EQ(linear.Rate(8), 2);
  EXPECT_DOUBLE_EQ(linear.Rate(1), 0);  // below minReplicas: cannot run
  EXPECT_DOUBLE_EQ(linear.Rate(9), 2);  // above maxReplicas: flat

  const auto amdahl = core::DurationThroughput(1, 1, 4, *core::ScalingCurve::Parse("amdahl:0.5"));
  EXPECT_DOUBLE_EQ(amdahl.Rate(2), 4.0 / 3);
  EXPECT_DOUBLE_EQ(amdahl.Rate(4), 1.6);
  const auto none = core::DurationThroughput(2, 1, 4, *core::ScalingCurve::Parse("none"));
  EXPECT_DOUBLE_EQ(none.Rate(1), 1);
  EXPECT_DOUBLE_EQ(none.Rate(4), 1);

  for (const char* bad : {"amdahl:0", "amdahl:1.5", "amdahl:", "Linear", ""}) {
    EXPECT_FALSE(core::ScalingCurve::Parse(bad)) << bad;
  }
  EXPECT_EQ(core::ScalingCurve::Parse("amdahl:0.95")->ToString(), "amdahl:0.95");
}

TEST(TraceTest, TimestampsAndArguments) {
  EXPECT_EQ(*ParseTimestamp("1970-01-01"), 0);
  EXPECT_EQ(*ParseTimestamp("1970-01-02 00:00:01"), 86401);
  EXPECT_EQ(*ParseTimestamp("2017-10-09T07:01:55"), 1507532515);
  for (const char* bad :
       {"2017-13-01", "2017-10-09 25:00:00", "2017-10-9", "yesterday", "2017-10-09 07:01"}) {
    EXPECT_FALSE(ParseTimestamp(bad)) << bad;
  }
  auto t = ParseTraceArg("philly:data/x.csv");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->format, TraceFormat::kPhilly);
  EXPECT_EQ(t->path, "data/x.csv");
  auto bad = ParseTraceArg("alibaba:x.csv");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "--trace: expected FORMAT:FILE with FORMAT one of tiresias, philly, pollux, native, "
            "got 'alibaba:x.csv'");
  // A format one edit from a known one.
  EXPECT_EQ(ParseTraceArg("Tiresais:x.csv").error().message,
            "--trace: expected FORMAT:FILE with FORMAT one of tiresias, philly, pollux, native, "
            "got 'Tiresais:x.csv'; did you mean 'tiresias'?");
  TraceOptions o;
  EXPECT_TRUE(ParseElastic("0.5:2", o));
  EXPECT_EQ(o.min_factor, 0.5);
  EXPECT_EQ(o.max_factor, 2);
  EXPECT_FALSE(ParseElastic("2:0.5", o));
  EXPECT_FALSE(ParseElastic("0.5", o));
}

}  // namespace
}  // namespace dlsched::config
