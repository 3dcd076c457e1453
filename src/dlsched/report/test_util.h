#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "dlsched/metrics/records.h"

namespace dlsched::report::testing {

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("dlsched-report-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" +
             info->name());
    std::filesystem::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A small run used by the report tests, on a cluster of 8 cpu (8000m) and
// 4 GPUs:
//   resnet-a: submit 0, start 12.5, completed at 100 (JCT 100), 4 workers,
//             ideal runtime 50 -> slowdown 0.5
//   vgg,b:    submit 30, never started, stuck waiting with a reason that has
//             a comma and quotes
// GPU use: 2 allocated and effective from 0, 4 allocated / 0 effective from
// 50; run ends at 100.
inline metrics::RunInput SampleRun() {
  metrics::RunInput in;
  in.profile = "kod2";
  in.capacity[core::kCpu] = 8000;
  in.capacity[core::kGpu] = 4;
  in.end_time = 100;
  in.deadlocked = true;
  in.cycles = 7;

  metrics::JobRecord a;
  a.name = "resnet-a";
  a.namespace_name = "team-1";
  a.submit = 0;
  a.first_start = 12.5;
  a.completion = 100;
  a.final_phase = core::JobPhase::kCompleted;
  a.admission_seq = 0;
  a.queueing = 12.5;
  a.launching = 2.5;
  a.running = 85;
  a.reallocations = 1;
  a.preemptions = 0;
  a.scale_events = 2;
  a.final_workers = 4;
  a.ideal_runtime = 50;

  metrics::JobRecord b;
  b.name = "vgg,b";
  b.namespace_name = "team-2";
  b.submit = 30;
  b.final_phase = core::JobPhase::kWaiting;
  b.queueing = 70;
  b.stuck = true;
  b.reason = "waiting: needs \"4 gpu\" on one node, largest free is 2";
  in.jobs = {a, b};

  metrics::UtilizationSample s0;
  s0.time = 0;
  s0.allocated[core::kGpu] = 2;
  s0.effective[core::kGpu] = 2;
  s0.allocated[core::kCpu] = 1000;
  s0.effective[core::kCpu] = 1000;
  metrics::UtilizationSample s1;
  s1.time = 50;
  s1.allocated[core::kGpu] = 4;
  s1.allocated[core::kCpu] = 3000;
  s1.effective[core::kCpu] = 1000;
  in.utilization = {s0, s1};

  in.nodes = {"node-0", "node-1"};
  in.events = {
      {0, 0, "submitted", -1, -1, ""},
      {12.5, 0, "started", 4, -1, "started with 4 workers on node-0 (2) node-1 (2)"},
      {30, 1, "submitted", -1, -1, ""},
      {30, 1, "waiting", -1, -1, b.reason},
      {50, 0, "resized", 2, 1, "4 -> 2: scaled in for vgg,b"},
      {100, 0, "completed", 0, -1, ""},
  };
  in.allocations = {
      {0, 0, 12.5, 50, 2, 2},
      {1, 0, 12.5, 100, 2, 2},
      {1, 1, 50, core::kNever, 1, 0},
  };
  return in;
}

}  // namespace dlsched::report::testing
