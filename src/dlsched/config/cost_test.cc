// What an input may cost: the memory a parsed file holds grows with the
// file, not with its square or with the numbers in it, and YAML aliases
// cannot make a small file stand for a huge one. Memory is measured as the
// bytes the allocator holds (glibc's mallinfo2, or AddressSanitizer's own
// count under the sanitize preset), never as time.
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <fstream>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/config/csv.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/allocator_interface.h>
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
// 10^8 nodes in 300 bytes. The scan stops past the limit, after a few
// hundred events.
TEST(CostTest, AliasesCannotStandForMoreNodesThanTheLimit) {
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 8; ++level) {
    text += fmt::format("l{}: &l{} [", level, level);
    for (int i = 0; i < 10; ++i) text += fmt::format("{}*l{}", i ? ", " : "", level - 1);
    text += "]\n";
  }
  auto parsed = internal::ParseYaml(text, "laughs.yaml");
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

// --- CSV inputs are streamed: a line at most kMaxLineBytes + 1 bytes in
// memory, a file at most core::kMaxCsvBytes long, a load that stops when
// asked.

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "dlsched_cost_" + std::to_string(getpid()) + "_" + name;
}

// A 1.5 GB line used to be read whole (2-3 GB of memory) before it was
// found too long; here 8 MiB, of which 64 KiB + 1 are kept.
TEST(CostTest, CsvLinesAreKeptToTheLineCap) {
  const std::string path = TempPath("long.csv");
  {
    std::ofstream out(path, std::ios::binary);
    out << "job_id,num_gpu,submit_time,duration\n"
        << std::string(8 << 20, 'x') << "\n"
        << "7,1,0,10\r\n";
  }
  internal::CsvReader csv(path);
  ASSERT_TRUE(csv.Open());
  ASSERT_TRUE(csv.Next());
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line().size(), internal::kMaxLineBytes + 1);
  EXPECT_LT(csv.line().capacity(), 4 * internal::kMaxLineBytes);
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), "7,1,0,10");
  EXPECT_EQ(csv.line_no(), 3);
  EXPECT_FALSE(csv.Next());
  EXPECT_TRUE(csv.ReadError());

  TraceOptions o;
  o.format = TraceFormat::kTiresias;
  o.path = path;
  o.skip_bad_rows = true;
  auto load = LoadTrace(o);
  ASSERT_TRUE(load) << load.error().message;
  EXPECT_EQ(load->workload.jobs.size(), 1u);
  EXPECT_EQ(load->skipped, 1);
  EXPECT_EQ(load->first_skipped, path + ":2: the line is longer than 65536 bytes");
  o.skip_bad_rows = false;
  EXPECT_EQ(LoadTrace(o).error().message, path + ":2: the line is longer than 65536 bytes");
  // The header too.
  std::ofstream(path, std::ios::binary) << std::string(100'000, 'h') << "\n1,1,0,10\n";
  EXPECT_EQ(LoadTrace(o).error().message, path + ":1: header: the line is longer than 65536 bytes");
  unlink(path.c_str());
}

// A file over the cap is refused before a byte is read (a sparse file: no
// disk, no memory).
TEST(CostTest, CsvFilesOverTheCapAreRefusedUnread) {
  const std::string path = TempPath("big.csv");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(core::kMaxCsvBytes) + 1), 0);
  close(fd);
  for (TraceFormat f : {TraceFormat::kTiresias, TraceFormat::kNative}) {
    TraceOptions o;
    o.format = f;
    o.path = path;
    auto load = LoadTrace(o);
    ASSERT_FALSE(load.has_value());
    EXPECT_EQ(load.error().message,
              path +
                  ": cannot read file: it has 268435457 bytes; CSV inputs are limited to 256 "
                  "MiB");
  }
  auto cluster = LoadTiresiasCluster(path);
  ASSERT_FALSE(cluster.has_value());
  EXPECT_NE(cluster.error().message.find("CSV inputs are limited to 256 MiB"), std::string::npos);
  unlink(path.c_str());
  // Not a regular file: refused without blocking, as YAML inputs.
  auto fifo = LoadTiresiasCluster("/dev/zero");
  ASSERT_FALSE(fifo.has_value());
  EXPECT_EQ(fifo.error().message,
            "/dev/zero: cannot read file: it is a character device; dlsched reads regular files "
            "only");
}

// Ctrl-C while a trace loads: the load looks at the flag every 1,024 rows
// and stops (a 10^6-row trace took 7.5 s, Ctrl-C waiting for its end).
TEST(CostTest, TraceLoadsStopWhenAsked) {
  const std::string path = TempPath("rows.csv");
  {
    std::ofstream out(path, std::ios::binary);
    out << "job_id,num_gpu,submit_time,duration\n";
    for (int i = 0; i < 5000; ++i) out << i << ",1," << i << ",10\n";
  }
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
  unlink(path.c_str());
}

}  // namespace
}  // namespace dlsched::config
