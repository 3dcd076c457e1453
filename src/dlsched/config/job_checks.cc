#include "dlsched/config/job_checks.h"

#include <charconv>

#include <fmt/format.h>

#include "dlsched/core/limits.h"

namespace dlsched::config {

std::optional<RoleProblem> CheckWorkerReplicas(const core::RoleSpec& worker, bool min_given,
                                               bool max_given, const JobWording& words) {
  const int r = worker.replicas, lo = worker.min_replicas, hi = worker.max_replicas;
  if ((!words.min_above_max_only_when_both_given || (min_given && max_given)) && lo > hi) {
    return RoleProblem{"minReplicas", fmt::format("{} is greater than maxReplicas {}", lo, hi)};
  }
  if (lo > r)
    return RoleProblem{"minReplicas", fmt::format("{} is greater than replicas {}", lo, r)};
  if (r > hi) {
    if (words.replicas_above_max_on_max) {
      return RoleProblem{"maxReplicas", fmt::format("{} is less than replicas {}", hi, r)};
    }
    return RoleProblem{"replicas", fmt::format("{} is greater than maxReplicas {}", r, hi)};
  }
  return std::nullopt;
}

std::optional<core::PriorityClass> PriorityFromName(std::string_view name) {
  for (auto p :
       {core::PriorityClass::kHigh, core::PriorityClass::kNormal, core::PriorityClass::kLow}) {
    if (name == core::PriorityClassName(p)) return p;
  }
  return std::nullopt;
}

std::optional<int> WorkerCount(std::string_view key) {
  int workers = 0;
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), workers);
  if (ec != std::errc() || end != key.data() + key.size() || workers < 1 ||
      workers > core::kMaxTasksPerJob) {
    return std::nullopt;
  }
  return workers;
}

bool IsRate(double steps_per_s) { return steps_per_s == 0 || steps_per_s >= core::kMinRate; }

}  // namespace dlsched::config
