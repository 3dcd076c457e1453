#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"

namespace dlsched::core {

// Task roles of a parameter-server training job.
enum class Role : uint8_t { kPS = 0, kChief = 1, kWorker = 2 };
inline constexpr int kNumRoles = 3;
std::string_view RoleName(Role r);  // "PS", "Chief", "Worker"

struct RoleSpec {
  int replicas = 0;      // initial count
  int min_replicas = 0;  // elastic range (Worker only; equal to replicas otherwise)
  int max_replicas = 0;
  Resources resources;  // per replica
};

enum class PriorityClass : uint8_t { kLow = 0, kNormal = 1, kHigh = 2 };
std::string_view PriorityClassName(PriorityClass p);  // "low", "normal", "high"

// Steps per second as a function of the number of workers: a table of
// measured points. Between points the rate is interpolated linearly; above
// the largest point it stays flat; below the smallest point (and at 0) it is
// 0, meaning the job cannot run with so few workers.
struct ThroughputProfile {
  std::string model;                  // e.g. "resnet50"; informational
  std::map<int, double> steps_per_s;  // workers -> steps/s, strictly positive keys
  double locality_sensitivity = 0;    // locality factor is 1 - this when spread over nodes

  double Rate(int workers) const;
};

struct JobSpec {
  std::string name;
  std::string namespace_name = "default";
  Time submit_time = 0;

  // Indexed by Role. A role with replicas == 0 is absent.
  RoleSpec roles[kNumRoles];

  // Scheduling inputs.
  PriorityClass priority = PriorityClass::kNormal;
  std::optional<double> max_wait_minutes;
  std::string queue = "default";

  // Workload inputs (simulation).
  double total_steps = 0;
  ThroughputProfile throughput;
  Time launch_delay = 0;         // seconds from allocation to training
  Time checkpoint_delay = 0;     // seconds to checkpoint before a reallocation
  std::optional<Time> deadline;  // seconds after submit; the job fails if not done by then

  const RoleSpec& role(Role r) const { return roles[static_cast<int>(r)]; }
  RoleSpec& role(Role r) { return roles[static_cast<int>(r)]; }

  // Resources of the job with `workers` workers (all PS and Chief replicas).
  Resources Demand(int workers) const;
  // PS + Chief + minReplicas workers: what the gang needs to start.
  Resources MinDemand() const { return Demand(role(Role::kWorker).min_replicas); }
  // Total number of tasks with `workers` workers.
  int NumTasks(int workers) const;
};

}  // namespace dlsched::core
