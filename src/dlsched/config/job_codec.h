#pragma once

// One encoder of a job: the fields of a core::JobSpec as the workload YAML
// names them, in the order it writes them, each given only when it differs
// from its default. Every writer of a job walks a job with it: the workload
// YAML (sim::WorkloadToYaml, which `generate`, `size` and the operator's
// snapshot write) and the native trace CSV (ToNativeCsv, which refuses a
// job setting a field its columns do not hold, by this key). A field added
// here is thus written by the one and refused by the other.

#include <span>
#include <string_view>

#include "dlsched/core/job.h"

namespace dlsched::config {

class JobFieldSink {
 public:
  virtual ~JobFieldSink() = default;

  // How a scalar's text is written in YAML: as it is (a number, a name of
  // the format's own: `high`, `linear`), or as a string that may need
  // quoting (a user's name).
  enum class Text { kPlain, kString };
  // A scalar field: name, namespace, arrival, priority, maxWaitMinutes,
  // queue, duration, scaling, totalSteps, stepsDone, attainedGpuSeconds,
  // launchGpuSeconds, level, levelSince, levelBaseGpuSeconds, ranSince,
  // levelPlace, launchDelay, checkpointDelay, deadline, backoffLimit. Numbers are the
  // shortest text that reads back as the same double.
  virtual void Scalar(std::string_view key, std::string_view text, Text kind) = 0;
  // `ps` and `chief` when they have replicas, `worker` always (`key` is
  // core::RoleKey(role)).
  virtual void Role(std::string_view key, const core::RoleSpec& role, bool worker) = 0;
  // `throughput`, for a job not given by its duration.
  virtual void Throughput(const core::ThroughputProfile& throughput) = 0;
  // `running`.
  virtual void Initial(const core::InitialState& initial) = 0;
  // `failures`, when the job schedules some.
  virtual void Failures(std::span<const core::ScheduledFailure> failures) = 0;
  // A field the job sets that the workload YAML cannot hold (a scaling
  // curve of a job not given by its duration): not written.
  virtual void Unwritten(std::string_view key) = 0;
};

// Walks `job`'s fields into `sink`, in the workload YAML's order.
void EncodeJob(const core::JobSpec& job, JobFieldSink& sink);

}  // namespace dlsched::config
