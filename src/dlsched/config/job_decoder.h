#pragma once
// The one decoder of a job's fields: what a workload file's job
// (config/workload.cc, YAML) and a TrainingJob (k8s/trainingjob.cc, JSON)
// both say of a core::JobSpec is read here, by one code over either
// format's tree: the scheduling fields (priority, maxWaitMinutes, queue),
// a role's replicas and a worker's minReplicas and maxReplicas, totalSteps,
// the launch and checkpoint delays, a throughput table's entries and the
// locality sensitivity. Each is read by the field reader (fields.h) and
// checked by the shared checks (job_checks.h), worded by the format's
// JobWording.
//
// Its parts are called by each format in its own order, so an input with
// several problems reports the same first one as before; what is a shape
// of one format alone stays with it: the workload's job map, its roles'
// resources and containers, its duration, model and placements, its
// progress and `running` state; the TrainingJob's metadata, replicaSpecs
// and pod templates. The traces (config/trace.cc) build jobs from columns
// of rows, each column worded on its own; they share the bounds and the
// whole-job check (core::CheckJobLimits) rather than this decoder.
//
// Besides what FieldReader needs, a format's traits give its tree:
//   using Field = ...;  // a looked-up field: false when not given, else
//                       // *field is its value
//   static Field Find(const Value& map, std::string_view key);
//   static std::optional<std::string> Text(const Value&);  // a string
//   template <typename Fn>  // fn(key, value) -> core::Status, in order;
//   static core::Status ForEachEntry(const Value& map, Fn fn);  // the first error
// (`key` a Value, so it is shown as the format shows a value).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dlsched/config/fields.h"
#include "dlsched/config/job_checks.h"
#include "dlsched/core/error.h"
#include "dlsched/core/job.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config {

// `map`'s number `key` (at Key(path, key)) within `range` into `out`; `out`
// is left as it is when the field is not given.
template <typename Format, typename T>
core::Status OptionalNumber(const FieldReader<Format>& r, const typename Format::Value& map,
                            std::string_view key, std::string_view path, const NumberRange& range,
                            T& out) {
  const auto field = Format::Find(map, key);
  if (!field) return {};
  DLSCHED_TRY_LET(v, r.Number(*field, Key(path, key), range));
  out = *v;
  return {};
}

template <typename Format>
class JobDecoder {
 public:
  using Value = typename Format::Value;

  // `words` needs every member (bad_table_key and bad_table_rate too).
  JobDecoder(const FieldReader<Format>& reader, const JobWording& words)
      : r_(reader), words_(words) {}

  // How the job is scheduled, the fields of `map` at `path`: its priority
  // (words.priority_key), maxWaitMinutes and queue.
  core::Status Scheduling(const Value& map, std::string_view path, core::JobSpec& job) const {
    if (const auto p = Format::Find(map, words_.priority_key)) {
      const std::optional<core::PriorityClass> priority =
          PriorityFromName(Format::Text(*p).value_or(""));
      if (!priority)
        return r_.Expected(Key(path, words_.priority_key), words_.priority_expected, *p);
      job.priority = *priority;
    }
    DLSCHED_TRY(OptionalNumber(r_, map, "maxWaitMinutes", path, kMaxWaitMinutesRange,
                               job.max_wait_minutes));
    if (const auto q = Format::Find(map, "queue")) {
      const std::string queue_path = Key(path, "queue");
      const std::optional<std::string> name = Format::Text(*q);
      if (!name) return r_.Expected(queue_path, words_.queue_expected, *q);
      if (auto problem = core::NameProblem(*name)) return r_.Fail(queue_path, *problem);
      job.queue = *name;
    }
    return {};
  }

  // A role's replicas (ps: 0 and up, chief: 0 or 1, worker: 1 and up; when
  // not given, words.default_replicas or missing), all three bounds of
  // `out` set to it; a worker's minReplicas and maxReplicas, then checked
  // (CheckWorkerReplicas).
  core::Status Replicas(const Value& map, std::string_view path, core::Role role,
                        core::RoleSpec& out) const {
    const bool worker = role == core::Role::kWorker;
    const std::string replicas_path = Key(path, "replicas");
    int64_t replicas = 0;
    if (const auto n = Format::Find(map, "replicas")) {
      DLSCHED_TRY_LET(v, r_.Int(*n, replicas_path, worker ? 1 : 0,
                                role == core::Role::kChief ? 1 : core::kMaxTasksPerJob));
      replicas = *v;
    } else if (words_.default_replicas) {
      replicas = *words_.default_replicas;
    } else {
      return r_.Missing(replicas_path, worker ? "an integer >= 1" : "an integer >= 0");
    }
    out.replicas = out.min_replicas = out.max_replicas = static_cast<int>(replicas);
    if (!worker) return {};
    const auto min = Format::Find(map, "minReplicas");
    const auto max = Format::Find(map, "maxReplicas");
    auto bound = [&](const auto& field, std::string_view key, int& into) -> core::Status {
      if (!field) return {};
      DLSCHED_TRY_LET(v, r_.Int(*field, Key(path, key), 1, core::kMaxTasksPerJob));
      into = static_cast<int>(*v);
      return {};
    };
    DLSCHED_TRY(bound(min, "minReplicas", out.min_replicas));
    DLSCHED_TRY(bound(max, "maxReplicas", out.max_replicas));
    // Named against what was written: a bound not given is replicas.
    if (auto p = CheckWorkerReplicas(out, static_cast<bool>(min), static_cast<bool>(max), words_)) {
      return r_.Fail(Key(path, p->key), p->what);
    }
    return {};
  }

  // A role's restartPolicy (Never, OnFailure, Always or ExitCode), when
  // given: `out` keeps its default otherwise.
  core::Status RestartPolicy(const Value& map, std::string_view path, core::RoleSpec& out) const {
    const auto field = Format::Find(map, "restartPolicy");
    if (!field) return {};
    const auto policy = core::ParseRestartPolicy(Format::Text(*field).value_or(""));
    if (!policy) {
      return r_.Expected(Key(path, "restartPolicy"), "one of Never, OnFailure, Always, ExitCode",
                         *field);
    }
    out.restart_policy = *policy;
    return {};
  }

  // backoffLimit of `map` at `path` (an integer >= 0), when given.
  core::Status BackoffLimit(const Value& map, std::string_view path, core::JobSpec& job) const {
    const auto field = Format::Find(map, "backoffLimit");
    if (!field) return {};
    DLSCHED_TRY_LET(v, r_.Int(*field, Key(path, "backoffLimit"), 0, core::kMaxBackoffLimit));
    job.backoff_limit = static_cast<int>(*v);
    return {};
  }

  // totalSteps of `map` at `path`.
  core::Status TotalSteps(const Value& map, std::string_view path, core::JobSpec& job) const {
    return OptionalNumber(r_, map, "totalSteps", path, kTotalStepsRange, job.total_steps);
  }

  // launchDelay and checkpointDelay of `map` at `path`, in seconds.
  core::Status Delays(const Value& map, std::string_view path, core::JobSpec& job) const {
    DLSCHED_TRY(OptionalNumber(r_, map, "launchDelay", path, kTime, job.launch_delay));
    return OptionalNumber(r_, map, "checkpointDelay", path, kTime, job.checkpoint_delay);
  }

  // The entries of a throughput table at `path` (a map, its shape checked
  // by the format): worker count to steps/s, into out.steps_per_s. A worker
  // count given twice ("1" and "01") is refused
  // (words.duplicate_worker_counts_refused) or its last rate kept.
  core::Status RateTable(const Value& table, std::string_view path,
                         core::ThroughputProfile& out) const {
    return Format::ForEachEntry(table, [&](const Value& key, const Value& value) -> core::Status {
      const std::string k = Format::Text(key).value_or("");
      const std::string entry_path = Key(path, k);
      const std::optional<int> workers = WorkerCount(k);
      if (!workers) return r_.Fail(entry_path, words_.bad_table_key(Format::Describe(key)));
      DLSCHED_TRY_LET(rate, r_.Number(value, entry_path, kTableRateRange));
      if (!IsRate(*rate))
        return r_.Fail(entry_path, words_.bad_table_rate(Format::Describe(value)));
      if (auto [it, fresh] = out.steps_per_s.emplace(*workers, *rate); !fresh) {
        if (words_.duplicate_worker_counts_refused) {
          return r_.Fail(entry_path, "duplicate worker count " + std::to_string(*workers));
        }
        it->second = *rate;
      }
      return {};
    });
  }

  // localitySensitivity of a throughput map at `path`.
  core::Status Locality(const Value& map, std::string_view path,
                        core::ThroughputProfile& out) const {
    return OptionalNumber(r_, map, "localitySensitivity", path, kLocalityRange,
                          out.locality_sensitivity);
  }
  // switchSensitivity of a throughput map at `path` (with a table or a
  // model: the model zoo has no measurement across switches).
  core::Status SwitchSensitivity(const Value& map, std::string_view path,
                                 core::ThroughputProfile& out) const {
    return OptionalNumber(r_, map, "switchSensitivity", path, kLocalityRange,
                          out.switch_sensitivity);
  }

 private:
  const FieldReader<Format>& r_;
  JobWording words_;
};

}  // namespace dlsched::config
