#include "dlsched/core/job.h"

#include <iterator>

namespace dlsched::core {

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kPS:
      return "PS";
    case Role::kChief:
      return "Chief";
    case Role::kWorker:
      return "Worker";
  }
  return "?";
}

std::string_view PriorityClassName(PriorityClass p) {
  switch (p) {
    case PriorityClass::kLow:
      return "low";
    case PriorityClass::kNormal:
      return "normal";
    case PriorityClass::kHigh:
      return "high";
  }
  return "?";
}

double ThroughputProfile::Rate(int workers) const {
  if (workers <= 0 || steps_per_s.empty()) return 0;
  auto hi = steps_per_s.lower_bound(workers);
  if (hi == steps_per_s.end()) return std::prev(hi)->second;
  if (hi->first == workers) return hi->second;
  if (hi == steps_per_s.begin()) return 0;
  auto lo = std::prev(hi);
  double f = double(workers - lo->first) / double(hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

Resources RoleSpec::ScoringRequest() const {
  if (containers.empty()) {
    Resources r = resources;
    if (r[kCpu] == 0) r[kCpu] = kDefaultMilliCpuRequest;
    if (r[kMemory] == 0) r[kMemory] = kDefaultMemoryRequest;
    return r;
  }
  auto non_zero = [](const ContainerSpec& c) {
    Resources r = c.requests;
    if (!c.sets_cpu) r[kCpu] += kDefaultMilliCpuRequest;
    if (!c.sets_memory) r[kMemory] += kDefaultMemoryRequest;
    return r;
  };
  Resources r;
  for (const ContainerSpec& c : containers) r += non_zero(c);
  for (const ContainerSpec& c : init_containers) r = Max(r, non_zero(c));
  return r;
}

Resources JobSpec::Demand(int workers) const {
  Resources r = role(Role::kPS).resources * role(Role::kPS).replicas;
  r += role(Role::kChief).resources * role(Role::kChief).replicas;
  r += role(Role::kWorker).resources * workers;
  return r;
}

std::string_view RoleKey(Role r) {
  switch (r) {
    case Role::kPS:
      return "ps";
    case Role::kChief:
      return "chief";
    case Role::kWorker:
      return "worker";
  }
  return "?";
}

int InitialState::Workers() const {
  int n = 0;
  for (const Placed& t : tasks) n += t.role == Role::kWorker ? 1 : 0;
  return n;
}

int JobSpec::NumTasks(int workers) const {
  return role(Role::kPS).replicas + role(Role::kChief).replicas + workers;
}

}  // namespace dlsched::core
