#include "dlsched/core/job.h"

#include "dlsched/core/quantity.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

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

namespace {
constexpr std::string_view kRestartPolicyNames[] = {"Never", "OnFailure", "Always", "ExitCode"};
}  // namespace

std::string_view RestartPolicyName(RestartPolicy p) {
  return kRestartPolicyNames[static_cast<int>(p)];
}

std::optional<RestartPolicy> ParseRestartPolicy(std::string_view text) {
  for (size_t i = 0; i < std::size(kRestartPolicyNames); ++i) {
    if (kRestartPolicyNames[i] == text) return static_cast<RestartPolicy>(i);
  }
  return std::nullopt;
}

bool RetryableExitCode(int exit_code) {
  return exit_code == 130 || exit_code == 137 || exit_code == 138 || exit_code == 143;
}

bool FailureRestarts(RestartPolicy policy, const TaskFailure& failure) {
  if (failure.disruption) return true;
  switch (policy) {
    case RestartPolicy::kNever:
      return false;
    case RestartPolicy::kOnFailure:
    case RestartPolicy::kAlways:
      return true;
    case RestartPolicy::kExitCode:
      return failure.exit_code && RetryableExitCode(*failure.exit_code);
  }
  return false;
}

namespace {

// A table's rate at `workers`: interpolated between its points, flat above
// the largest, 0 below the smallest.
double TableRate(const std::map<int, double>& table, int workers) {
  if (workers <= 0 || table.empty()) return 0;
  auto hi = table.lower_bound(workers);
  if (hi == table.end()) return std::prev(hi)->second;
  if (hi->first == workers) return hi->second;
  if (hi == table.begin()) return 0;
  auto lo = std::prev(hi);
  double f = double(workers - lo->first) / double(hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

}  // namespace

double ThroughputProfile::Rate(int workers) const {
  if (curve) {
    // As the table DurationThroughput used to fill: 0 below lo, flat
    // above hi, the same division at every size in between.
    if (workers < curve->lo) return 0;
    const int m = std::min(workers, curve->hi);
    return m == curve->size ? 1.0 : curve->scaling.Speedup(m) / curve->at_size;
  }
  return TableRate(steps_per_s, workers);
}

const GpuTypeRates& ThroughputProfile::GpuTypes() const {
  static const GpuTypeRates kNone;
  return by_gpu_type ? *by_gpu_type : kNone;
}

void ThroughputProfile::SetGpuTypes(GpuTypeRates rates) {
  by_gpu_type = rates.empty() ? nullptr : std::make_shared<const GpuTypeRates>(std::move(rates));
}

double ThroughputProfile::RateOn(std::string_view gpu_type, int workers) const {
  if (by_gpu_type) {
    if (auto it = by_gpu_type->find(gpu_type); it != by_gpu_type->end()) {
      return TableRate(it->second, workers);
    }
  }
  return Rate(workers);
}

double ScalingCurve::Speedup(int workers) const {
  const double m = workers;
  switch (kind) {
    case Kind::kLinear:
      return m;
    case Kind::kSqrt:
      return std::sqrt(m);
    case Kind::kAmdahl:
      return 1 / ((1 - parallel) + parallel / m);
    case Kind::kNone:
      return 1;
  }
  return m;
}

std::string ScalingCurve::ToString() const {
  switch (kind) {
    case Kind::kLinear:
      return "linear";
    case Kind::kSqrt:
      return "sqrt";
    case Kind::kAmdahl:
      return fmt::format("amdahl:{}", parallel);
    case Kind::kNone:
      return "none";
  }
  return "linear";
}

Result<ScalingCurve> ScalingCurve::Parse(std::string_view text) {
  ScalingCurve c;
  if (text == "linear") return c;
  if (text == "sqrt") {
    c.kind = Kind::kSqrt;
    return c;
  }
  if (text == "none") {
    c.kind = Kind::kNone;
    return c;
  }
  constexpr std::string_view kAmdahl = "amdahl:";
  if (text.starts_with(kAmdahl)) {
    const std::string_view p = text.substr(kAmdahl.size());
    double v = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec == std::errc() && end == p.data() + p.size() && v > 0 && v <= 1) {
      c.kind = Kind::kAmdahl;
      c.parallel = v;
      return c;
    }
  }
  return Errorf("expected linear, sqrt, none or amdahl:<parallel fraction in (0, 1]>, got {}",
                internal::QuoteInput(text));
}

ThroughputProfile DurationThroughput(int size, int min_workers, int max_workers,
                                     const ScalingCurve& curve) {
  ThroughputProfile tp;
  tp.model = "duration";
  tp.curve = ThroughputProfile::DurationCurve{.scaling = curve,
                                              .size = size,
                                              .lo = std::max(1, min_workers),
                                              .hi = std::max(size, max_workers),
                                              .at_size = curve.Speedup(size)};
  return tp;
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

void JobSpec::SetDuration(Time seconds, const ScalingCurve& curve) {
  const RoleSpec& w = role(Role::kWorker);
  duration = seconds;
  scaling = curve;
  total_steps = seconds;
  throughput = DurationThroughput(w.replicas, w.min_replicas, w.max_replicas, curve);
}

const std::shared_ptr<const RoleSpecs>& JobSpec::NoRoles() {
  static const auto* none = new std::shared_ptr<const RoleSpecs>(std::make_shared<RoleSpecs>());
  return *none;
}

RoleSpecs& JobSpec::Own() {
  // Shared (with a copy, a pool, or NoRoles, the empty roles every job
  // starts with): this job's own copy first.
  if (roles_.use_count() > 1) roles_ = std::make_shared<RoleSpecs>(*roles_);
  // The only owner of a copy it made itself.
  return const_cast<RoleSpecs&>(*roles_);
}

namespace {

size_t HashRoles(const RoleSpecs& roles) {
  size_t h = 0;
  auto mix = [&h](int64_t x) {
    h ^= std::hash<int64_t>{}(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  };
  for (const RoleSpec& r : roles) {
    mix(r.replicas);
    mix(r.min_replicas);
    mix(r.max_replicas);
    for (int64_t v : r.resources.v) mix(v);
    mix(static_cast<int64_t>(r.containers.size()));
    mix(r.constraints.Empty() ? 0 : 1);
  }
  return h;
}

}  // namespace

void RolePool::Share(JobSpec& job) {
  auto& same_hash = by_hash_[HashRoles(*job.roles_)];
  for (const auto& shared : same_hash) {
    if (*shared == *job.roles_) {
      job.roles_ = shared;
      return;
    }
  }
  same_hash.push_back(job.roles_);
}

Resources JobSpec::Demand(int workers) const {
  Resources r;
  const RoleSpecs& all = *roles_;
  for (const Role role : {Role::kPS, Role::kChief, Role::kWorker}) {
    const RoleSpec& spec = all[static_cast<int>(role)];
    const int n = role == Role::kWorker ? workers : spec.replicas;
    if (n != 0) r.AddTimes(spec.resources, n);
  }
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
