#include "dlsched/core/spec_limits.h"

#include <cmath>

#include <fmt/format.h>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"

namespace dlsched::core {
namespace {

LimitCheck Problem(std::string field, std::string what) {
  return LimitProblem{std::move(field), std::move(what)};
}

// The number as the messages of config/ show it.
std::string Number(double v) { return fmt::format("{}", v); }

// `v` finite and within [lo, hi] (above lo if `lo_open`); the problem in
// the words of config/'s NumberRange ("expected a number in [0, 1e+09]").
std::optional<std::string> RangeProblem(double v, double lo, bool lo_open, double hi) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  if (ok) return std::nullopt;
  return fmt::format("{} is outside {}{}, {}]", Number(v), lo_open ? "(" : "[", Number(lo),
                     Number(hi));
}

LimitCheck Range(std::string field, double v, double lo, bool lo_open, double hi) {
  if (auto p = RangeProblem(v, lo, lo_open, hi)) return Problem(std::move(field), std::move(*p));
  return std::nullopt;
}

LimitCheck TimeField(std::string field, double v, bool positive = false) {
  if (auto p = TimeProblem(v, positive)) return Problem(std::move(field), std::move(*p));
  return std::nullopt;
}

// A field of the job's policy state, when given, within its kind's bounds.
LimitCheck StateValue(const StateField& f, const JobSpec& job) {
  const auto it = job.policy_state.find(f.name);
  if (it == job.policy_state.end()) return {};
  const double v = it->second;
  const std::string name(f.name);
  switch (f.kind) {
    case StateKind::kLevel:
      if (!(v >= 0 && v <= kMaxLevel) || v != std::floor(v)) {
        return Problem(name, fmt::format("{} is outside the integers 0 to {}", v, kMaxLevel));
      }
      return {};
    case StateKind::kTime:
      return TimeField(name, v);
    case StateKind::kGpuSeconds:
      return Range(name, v, 0, false, job.attained);
    case StateKind::kPlace:
      return Range(name, v, -kMaxLevelPlace, false, kMaxLevelPlace);
  }
  return {};
}

LimitCheck Name(std::string field, std::string_view name) {
  if (auto p = NameProblem(name)) return Problem(std::move(field), std::move(*p));
  return std::nullopt;
}

// Each amount of `r` as AmountProblem (a node's as NodeAmountProblem).
LimitCheck Amounts(std::string_view prefix, const Resources& r, bool node) {
  LimitCheck out;
  FirstId(r, [&](ResourceId id) {
    if (r[id] == 0) return false;
    auto p = node ? NodeAmountProblem(id, r[id]) : AmountProblem(id, r[id]);
    if (p) out = Problem(JoinField(prefix, JoinField("resources", ResourceName(id))), *p);
    return out.has_value();
  });
  return out;
}

std::string TotalExceeds(ResourceId id) {
  return fmt::format("the cluster's total {} would exceed the limit of {}", ResourceName(id),
                     FormatResourceAmount(id, kMaxTotalAmount));
}

LimitCheck RoleLimits(const JobSpec& job, core::Role role) {
  const RoleSpec& r = job.role(role);
  const std::string key(RoleKey(role));
  const bool worker = role == core::Role::kWorker;
  const int64_t min = worker ? 1 : 0;
  const int64_t max = role == core::Role::kChief ? 1 : kMaxTasksPerJob;
  auto count = [&](std::string_view field, int64_t v, int64_t lo, int64_t hi) -> LimitCheck {
    if (v >= lo && v <= hi) return std::nullopt;
    return Problem(JoinField(key, field),
                   fmt::format("{} is outside the integers {} to {}", v, lo, hi));
  };
  if (auto p = count("replicas", r.replicas, min, max)) return p;
  if (worker) {
    if (auto p = count("minReplicas", r.min_replicas, 1, r.replicas)) return p;
    if (auto p = count("maxReplicas", r.max_replicas, r.replicas, kMaxTasksPerJob)) return p;
  } else if (r.min_replicas != r.replicas || r.max_replicas != r.replicas) {
    return Problem(JoinField(key, "replicas"),
                   fmt::format("only workers are elastic, got {} to {} around {}", r.min_replicas,
                               r.max_replicas, r.replicas));
  }
  if (r.replicas == 0 && r.max_replicas == 0) return std::nullopt;
  if (auto p = Amounts(key, r.resources, /*node=*/false)) return p;
  for (const auto* containers : {&r.containers, &r.init_containers}) {
    for (const ContainerSpec& c : *containers) {
      if (auto p = Amounts(JoinField(key, "containers"), c.requests, false)) return p;
    }
  }
  return std::nullopt;
}

LimitCheck RateTable(const std::map<int, double>& table, std::string_view path) {
  for (const auto& [workers, rate] : table) {
    const std::string field = fmt::format("{}.{}", path, workers);
    if (workers < 1 || workers > kMaxTasksPerJob) {
      return Problem(
          field, fmt::format("a worker count of {} is outside 1 to {}", workers, kMaxTasksPerJob));
    }
    if (rate != 0) {
      if (auto p = Range(field, rate, kMinRate, false, kMaxRate)) {
        p->what = fmt::format("a rate of {} steps/s is neither 0 nor within [{}, {}]", Number(rate),
                              Number(kMinRate), Number(kMaxRate));
        return p;
      }
    }
  }
  return std::nullopt;
}

LimitCheck Throughput(const ThroughputProfile& tp) {
  if (auto p = RateTable(tp.steps_per_s, "throughput.table")) return p;
  for (const auto& [type, table] : tp.GpuTypes()) {
    if (auto p = RateTable(table, fmt::format("throughput.gpuTypes.{}", type))) return p;
  }
  for (const auto& [shape, rate] : tp.placements) {
    const std::string field = "throughput.placements";
    int64_t total = 0;
    for (int w : shape) {
      if (w < 1) return Problem(field, fmt::format("a placement has {} workers on a node", w));
      total += w;
    }
    if (shape.empty() || total > kMaxTasksPerJob) {
      return Problem(field, fmt::format("a placement of {} workers is outside 1 to {}", total,
                                        kMaxTasksPerJob));
    }
    if (auto p = Range(field, rate, kMinRate, false, kMaxRate)) return p;
  }
  if (auto p = Range("throughput.localitySensitivity", tp.locality_sensitivity, 0, false, 1)) {
    return p;
  }
  return Range("throughput.switchSensitivity", tp.switch_sensitivity, 0, false, 1);
}

}  // namespace

std::string JoinField(std::string_view prefix, std::string_view field) {
  if (prefix.empty()) return std::string(field);
  if (field.empty()) return std::string(prefix);
  return fmt::format("{}.{}", prefix, field);
}

std::optional<std::string> AmountProblem(ResourceId id, int64_t amount) {
  if (amount < 0) return fmt::format("{} is negative", amount);
  if (amount > kMaxAmount) {
    return fmt::format("{} is more than the limit of {}", FormatResourceAmount(id, amount),
                       FormatResourceAmount(id, kMaxAmount));
  }
  return std::nullopt;
}

std::optional<std::string> NodeAmountProblem(ResourceId id, int64_t amount) {
  if (id == kGpu && amount > kMaxGpusPerNode && amount <= kMaxAmount) {
    return fmt::format("{} GPUs on one node is more than the limit of {}", amount, kMaxGpusPerNode);
  }
  return AmountProblem(id, amount);
}

std::optional<std::string> NodeCountProblem(int64_t nodes) {
  if (nodes <= kMaxNodes) return std::nullopt;
  return fmt::format("the cluster would have {} nodes; at most {} are supported", nodes, kMaxNodes);
}

std::optional<std::string> TimeProblem(double seconds, bool positive) {
  const bool ok =
      std::isfinite(seconds) && (positive ? seconds > 0 : seconds >= 0) && seconds <= kMaxTime;
  if (ok) return std::nullopt;
  if (std::isfinite(seconds) && seconds > kMaxTime) {
    return fmt::format("{} s is more than the limit of {} s (31.7 years)", Number(seconds),
                       Number(kMaxTime));
  }
  return fmt::format("{} s is outside {}0, {}] s", Number(seconds), positive ? "(" : "[",
                     Number(kMaxTime));
}

LimitCheck CheckJobLimits(const JobSpec& job) {
  if (auto p = Name("name", job.name)) return p;
  if (auto p = Name("namespace", job.namespace_name)) return p;
  if (auto p = Name("queue", job.queue)) return p;
  if (auto p = TimeField("arrival", job.submit_time)) return p;
  if (job.max_wait_minutes) {
    if (auto p = Range("maxWaitMinutes", *job.max_wait_minutes, 0, true, kMaxWaitMinutes)) {
      return p;
    }
  }
  for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    if (auto p = RoleLimits(job, role)) return p;
  }
  const RoleSpec& worker = job.role(core::Role::kWorker);
  const int64_t tasks = int64_t{job.role(core::Role::kPS).replicas} +
                        job.role(core::Role::kChief).replicas + worker.max_replicas;
  if (tasks > kMaxTasksPerJob) {
    return Problem("worker.maxReplicas",
                   fmt::format("the job would have {} tasks (PS, Chief and maxReplicas workers); "
                               "at most {} are supported",
                               tasks, kMaxTasksPerJob));
  }
  // Every id any role asks for (each amount is >= 0 and within kMaxAmount,
  // checked above, so the sum of three cannot overflow).
  const Resources asked = job.role(core::Role::kPS).resources +
                          job.role(core::Role::kChief).resources +
                          job.role(core::Role::kWorker).resources;
  const int over = FirstId(asked, [&](ResourceId id) {
    __int128 total = 0;
    for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
      const RoleSpec& spec = job.role(role);
      const int64_t count = role == core::Role::kWorker ? spec.max_replicas : spec.replicas;
      total += static_cast<__int128>(spec.resources[id]) * count;
    }
    return total > kMaxTotalAmount;
  });
  if (over >= 0) {
    const auto id = static_cast<ResourceId>(over);
    return Problem("", fmt::format("the job's total {} at maxReplicas exceeds the limit of {}",
                                   ResourceName(id), FormatResourceAmount(id, kMaxTotalAmount)));
  }
  if (job.duration) {
    if (auto p = TimeField("duration", *job.duration, /*positive=*/true)) return p;
  }
  if (auto p = Range("totalSteps", job.total_steps, 0, true, kMaxSteps)) return p;
  if (auto p = Range("stepsDone", job.steps_done, 0, false, job.total_steps)) return p;
  if (auto p = Range("attainedGpuSeconds", job.attained, 0, false, kMaxAttained)) return p;
  if (auto p = Range("launchGpuSeconds", job.launch_attained, 0, false, kMaxAttained)) return p;
  if (!job.policy_state.empty()) {
    for (const StateField& f : kStateFields) {
      if (auto p = StateValue(f, job)) return p;
    }
  }
  if (auto p = Throughput(job.throughput)) return p;
  if (auto p = TimeField("launchDelay", job.launch_delay)) return p;
  if (auto p = TimeField("checkpointDelay", job.checkpoint_delay)) return p;
  if (job.deadline) {
    if (auto p = TimeField("deadline", *job.deadline, /*positive=*/true)) return p;
  }
  if (job.initial) {
    const InitialState& in = *job.initial;
    if (auto p = TimeField("running.since", in.since)) return p;
    if (auto p = TimeField("running.firstStart", in.first_start)) return p;
    if (auto p = TimeField("running.lastLaunch", in.last_launch)) return p;
  }
  return std::nullopt;
}

LimitCheck CheckJobsLimits(std::span<const JobSpec> jobs, Time start) {
  if (auto p = TimeField("start", start)) return p;
  int64_t tasks = 0;
  for (const JobSpec& job : jobs) {
    if (auto p = CheckJobLimits(job)) {
      p->field = fmt::format("job '{}'{}{}", EscapeText(job.name, 256),
                             p->field.empty() ? "" : ": ", p->field);
      return p;
    }
    tasks += job.NumTasks(job.role(core::Role::kWorker).max_replicas);
    if (tasks > kMaxWorkloadTasks) {
      return Problem(fmt::format("job '{}'", EscapeText(job.name, 256)),
                     fmt::format("the workload has more than {} tasks (PS, Chief and maxReplicas "
                                 "workers over all jobs), the limit",
                                 kMaxWorkloadTasks));
    }
  }
  return std::nullopt;
}

LimitCheck ClusterLimits::AddToTotal(const Resources& minus, const Resources& plus) {
  total_.resize(std::max<size_t>(total_.size(), std::max(minus.Width(), plus.Width())), 0);
  const int over = FirstId(minus, plus, [&](ResourceId id) {
    return total_[id] - minus[id] + plus[id] > kMaxTotalAmount;
  });
  if (over >= 0) {
    const auto id = static_cast<ResourceId>(over);
    return Problem(JoinField("resources", ResourceName(id)), TotalExceeds(id));
  }
  FirstId(minus, plus, [&](ResourceId id) {
    total_[id] += plus[id] - minus[id];
    return false;
  });
  return std::nullopt;
}

LimitCheck ClusterLimits::AddNode(const NodeSpec& node) {
  if (auto p = Name("name", node.name)) return p;
  if (auto p = NodeCountProblem(nodes_ever_ + 1)) return Problem("", *p);
  if (auto p = Amounts("", node.allocatable, /*node=*/true)) return p;
  if (present_.contains(node.name)) {
    return Problem("name", fmt::format("node '{}' is present already", node.name));
  }
  if (auto p = AddToTotal(Resources(), node.allocatable)) return p;
  ++nodes_ever_;
  present_[node.name] = Present{node.allocatable, Resources()};
  return std::nullopt;
}

LimitCheck ClusterLimits::Reserve(const std::string& node, const Resources& reserved) {
  auto it = present_.find(node);
  if (it == present_.end()) {
    return Problem("reserved", fmt::format("no node '{}' is present", node));
  }
  LimitCheck out;
  FirstId(reserved, [&](ResourceId id) {
    if (reserved[id] == 0) return false;
    const std::string field = JoinField("reserved", ResourceName(id));
    if (auto p = AmountProblem(id, reserved[id])) {
      out = Problem(field, *p);
    } else if (reserved[id] > it->second.allocatable[id]) {
      out = Problem(field, fmt::format("{} is more than the node has ({})",
                                       FormatResourceAmount(id, reserved[id]),
                                       FormatResourceAmount(id, it->second.allocatable[id])));
    }
    return out.has_value();
  });
  if (out) return out;
  it->second.reserved = reserved;
  return std::nullopt;
}

LimitCheck ClusterLimits::UpdateNode(const std::string& node, const Resources& allocatable) {
  auto it = present_.find(node);
  if (it == present_.end()) return Problem("name", fmt::format("no node '{}' is present", node));
  if (auto p = Amounts("", allocatable, /*node=*/true)) return p;
  const Resources& reserved = it->second.reserved;
  if (const int r = FirstId(allocatable, reserved,
                            [&](ResourceId id) { return allocatable[id] < reserved[id]; });
      r >= 0) {
    const auto id = static_cast<ResourceId>(r);
    return Problem(JoinField("resources", ResourceName(id)),
                   fmt::format("{} is less than the node's `reserved` ({})",
                               FormatResourceAmount(id, allocatable[id]),
                               FormatResourceAmount(id, reserved[id])));
  }
  if (auto p = AddToTotal(it->second.allocatable, allocatable)) return p;
  it->second.allocatable = allocatable;
  return std::nullopt;
}

void ClusterLimits::RemoveNode(const std::string& node) {
  auto it = present_.find(node);
  if (it == present_.end()) return;
  AddToTotal(it->second.allocatable, Resources());
  present_.erase(it);
}

LimitCheck CheckClusterLimits(const ClusterSpec& cluster) {
  ClusterLimits limits;
  for (const NodeSpec& node : cluster.nodes) {
    if (auto p = limits.AddNode(node)) {
      p->field = JoinField(fmt::format("node '{}'", EscapeText(node.name, 256)), p->field);
      return p;
    }
  }
  for (const auto& [name, reserved] : cluster.reserved) {
    if (auto p = limits.Reserve(name, reserved)) {
      p->field = JoinField(fmt::format("node '{}'", EscapeText(name, 256)), p->field);
      return p;
    }
  }
  Time last = 0;
  for (size_t i = 0; i < cluster.events.size(); ++i) {
    const NodeEvent& e = cluster.events[i];
    const std::string path = fmt::format("events[{}]", i);
    if (auto p = TimeField("time", e.time)) {
      p->field = JoinField(path, p->field);
      return p;
    }
    if (e.time < last) {
      return Problem(
          JoinField(path, "time"),
          fmt::format("{} is before the previous event's time {}", Number(e.time), Number(last)));
    }
    last = e.time;
    LimitCheck p;
    std::string kind;
    switch (e.kind) {
      case NodeEvent::Kind::kAdd:
        kind = "add";
        p = limits.AddNode(e.node);
        break;
      case NodeEvent::Kind::kUpdate:
        kind = "update";
        if (e.allocatable) p = limits.UpdateNode(e.node.name, *e.allocatable);
        break;
      case NodeEvent::Kind::kRemove:
      case NodeEvent::Kind::kFail:
        limits.RemoveNode(e.node.name);
        break;
    }
    if (p) {
      p->field = JoinField(JoinField(path, kind), p->field);
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace dlsched::core
