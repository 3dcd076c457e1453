#pragma once
// Pollux's model of how fast a training job progresses, from the
// measurements Pollux publishes (petuum/adaptdl, branch osdi21-artifact,
// simulator/applications.py and Job.step in simulator/simulator.py,
// Apache-2.0), for the `pollux` trace importer (docs/traces.md). Internal to
// config/.

#include <cstdint>
#include <expected>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/core/error.h"

namespace dlsched::config::internal {

// Pollux's testbed: nodes of 4 GPUs. A job of R GPUs is placed packed on
// them (4, 4, ..., R mod 4), which is how its measurements are keyed.
inline constexpr int kPolluxGpusPerNode = 4;
// Pollux charges this many seconds without progress on every allocation,
// the first included (Job.reallocate: rescale_time = 30).
inline constexpr double kPolluxRestartSeconds = 30;

// The applications Pollux measured, in name order.
std::span<const std::string_view> PolluxApplicationNames();

// Every way `replicas` GPUs can sit on Pollux's testbed (at most 16 nodes of
// 4 GPUs), as the GPUs on each node, most first: 6 gives {4, 2}, {3, 3},
// {3, 2, 1}, ..., {2, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}.
std::vector<std::vector<int>> PolluxPlacements(int replicas);
inline constexpr int kPolluxNodes = 16;

// One application's measurements: traces/<name>/placements.csv (step and
// sync time per placement and per-GPU batch), scalability.csv (the same at
// 5 to 16 nodes) and validation-<batch>.csv (progress and gradient
// statistics per epoch at each validated batch size).
class PolluxApplication {
 public:
  // Reads `traces_dir`/`name`; errors name the file and line.
  static core::Result<PolluxApplication> Load(const std::string& traces_dir, std::string_view name);

  const std::string& name() const { return name_; }
  // The progress at which a job completes: Pollux counts progress in steps
  // at the smallest validated batch size and ends a job after max_epochs
  // (no application sets a target metric), at the smallest validated
  // progress of that epoch.
  double TargetProgress() const { return progress_[max_epochs_]; }

  // Seconds to reach TargetProgress() with a total batch of `batch` over
  // the GPUs of `placement` (GPUs on each node, any order), with no
  // restarts; or why the measurements do not define it. As Pollux's
  // simulator counts it (Job.step), each epoch takes a whole number of
  // seconds.
  std::expected<double, std::string> Seconds(int64_t batch,
                                             const std::vector<int>& placement) const;
  // ... over `replicas` GPUs placed packed on 4-GPU nodes (4, 4, ..., the rest).
  std::expected<double, std::string> Seconds(int64_t batch, int replicas) const;

 private:
  struct Point {
    double local_bsz, step_time, sync_time;
  };
  struct Validation {
    std::vector<double> progress, grad_sqr, grad_var;
  };
  // Step and sync time at a placement (GPUs per node) and per-GPU batch.
  // Beyond 4 nodes, between the measured lines of (nodes, GPUs) (see the
  // definition).
  std::expected<std::pair<double, double>, std::string> Throughput(
      const std::vector<int>& placement, int64_t local_bsz) const;
  // Load's parts: placements.csv and scalability.csv (into placements_
  // and at_; the smallest and largest per-GPU batch measured), and the
  // validation-<N>.csv files (into validation_) of the application's
  // directory `dir`.
  core::Status ReadThroughputs(const std::string& dir, int64_t& min_local, int64_t& max_local);
  core::Status ReadValidation(const std::string& dir);

  std::string name_;
  int max_epochs_ = 0;
  int64_t init_batch_size_ = 0, max_batch_size_ = 0;
  int64_t min_local_bsz_ = 0, max_local_bsz_ = 0;
  std::map<int64_t, Validation> validation_;          // by batch size
  std::vector<double> progress_;                      // at the end of epoch e (0: none)
  std::map<int64_t, std::vector<Point>> placements_;  // by placement id (e.g. 244)
  // By (nodes, replicas): scalability.csv (5+ nodes), and the mean of the
  // placements of up to 4 nodes.
  std::map<std::pair<int, int>, std::vector<Point>> at_;
};

}  // namespace dlsched::config::internal
