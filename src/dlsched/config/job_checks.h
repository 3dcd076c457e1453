#pragma once
// The checks a job's fields share, whatever format they are read from (a
// workload file's job, config/workload.cc; a TrainingJob, k8s/trainingjob.cc):
// over values already read, each problem found in one order for every
// format and worded by the format's JobWording. The fields themselves are
// read by the one decoder of a job's fields (job_decoder.h), which calls
// these. What each format checks alone stays with it: the workload's need
// of one rate > 0, the TrainingJob's replicaSpecs names.

#include <optional>
#include <string>
#include <string_view>

#include "dlsched/config/fields.h"
#include "dlsched/core/job.h"
#include "dlsched/core/limits.h"

namespace dlsched::config {

// The bounds of a job's numbers that every format reads (besides kTime).
inline constexpr NumberRange kTotalStepsRange{0, true, core::kMaxSteps};
inline constexpr NumberRange kMaxWaitMinutesRange{0, true, core::kMaxWaitMinutes};
// A throughput table's steps/s (then IsRate), and the locality sensitivity.
inline constexpr NumberRange kTableRateRange{0, false, core::kMaxRate};
inline constexpr NumberRange kLocalityRange{0, false, 1};

// How a format words and places what the shared checks find.
struct JobWording {
  // minReplicas above maxReplicas is looked for only when both are given
  // (the workload: a bound not given is replicas, so the problem is named
  // against replicas), or always (the TrainingJob).
  bool min_above_max_only_when_both_given = false;
  // replicas above maxReplicas is named on maxReplicas ("<max> is less than
  // replicas <r>") or on replicas ("<r> is greater than maxReplicas <max>").
  bool replicas_above_max_on_max = false;
  // What a priority is expected to be: "one of high, normal, low".
  std::string_view priority_expected;

  // What the decoder (job_decoder.h) reads by these: the key of a job's
  // priority ("priority", "priorityClass"); what a queue is expected to
  // be ("a name", "a queue name");
  std::string_view priority_key = {};
  std::string_view queue_expected = {};
  // a role's replicas when not given (TFJob's 1), or none: it is missing;
  std::optional<int> default_replicas = {};
  // what is wrong with a throughput table's key or rate, given it as shown
  // after "got";
  std::string (*bad_table_key)(std::string_view got) = nullptr;
  std::string (*bad_table_rate)(std::string_view got) = nullptr;
  // a worker count a table gives twice ("1" and "01") refused, or its last
  // rate kept.
  bool duplicate_worker_counts_refused = false;
};

// A problem with one field of a role: its key ("minReplicas", "replicas",
// "maxReplicas") and what is wrong.
struct RoleProblem {
  std::string_view key;
  std::string what;
};

// A worker role's replicas within its minReplicas and maxReplicas (a bound
// not given equal to replicas, each read in 1..kMaxTasksPerJob).
std::optional<RoleProblem> CheckWorkerReplicas(const core::RoleSpec& worker, bool min_given,
                                               bool max_given, const JobWording& words);

// high, normal or low.
std::optional<core::PriorityClass> PriorityFromName(std::string_view name);

// A throughput table's key: a worker count in 1..kMaxTasksPerJob, in digits.
std::optional<int> WorkerCount(std::string_view key);

// A throughput table's rate, once read within [0, kMaxRate]: 0 (the job does
// not run at that size) or at least core::kMinRate.
bool IsRate(double steps_per_s);

}  // namespace dlsched::config
