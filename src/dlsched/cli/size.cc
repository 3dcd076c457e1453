#include "dlsched/cli/size.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dlsched/config/trace.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/quantity.h"
#include "dlsched/core/text.h"
#include "dlsched/sim/generate.h"

namespace dlsched::cli {
namespace {

constexpr double kMaxLoad = 1e6;

core::Resources NodeResources(const NodeShape& node) {
  core::Resources r;
  r[core::kCpu] = int64_t{node.cpus} * 1000;
  r[core::kMemory] = int64_t{node.memory_gi} << 30;
  r[core::kGpu] = node.gpus;
  return r;
}

std::string ResourceWords(core::ResourceId id, int64_t amount) {
  switch (id) {
    case core::kGpu:
      return fmt::format("{} GPU{}", amount, amount == 1 ? "" : "s");
    case core::kCpu:
      return fmt::format("{} cpu", core::FormatResourceAmount(id, amount));
    case core::kMemory:
      return fmt::format("{} of memory", core::FormatResourceAmount(id, amount));
    default:
      return fmt::format("{} {}", core::FormatResourceAmount(id, amount), core::ResourceName(id));
  }
}

std::string_view ShapeFlag(core::ResourceId id) {
  switch (id) {
    case core::kGpu:
      return "--gpus-per-node";
    case core::kCpu:
      return "--cpus-per-node";
    case core::kMemory:
      return "--memory-gi-per-node";
    default:
      return "";
  }
}

// The nodes `job` needs at its smallest size: each role's tasks packed as
// many to a node as fit, and the job's total of each resource. An error
// when one of its tasks fits no node.
core::Result<int64_t> NodesFor(const core::JobSpec& job, const core::Resources& node,
                               std::string_view source) {
  int64_t nodes = 0;
  for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const core::RoleSpec& spec = job.role(role);
    const int tasks = role == core::Role::kWorker ? spec.min_replicas : spec.replicas;
    if (tasks <= 0) continue;
    int64_t per_node = std::numeric_limits<int64_t>::max();
    for (int i = 0; i < core::NumResources(); ++i) {
      const auto id = static_cast<core::ResourceId>(i);
      const int64_t asked = spec.resources[id];
      if (asked <= 0) continue;
      if (asked > node[id]) {
        const std::string_view flag = ShapeFlag(id);
        return core::Errorf(
            "{}: job '{}': a {} asks for {}, more than a node has ({})", source,
            core::EscapeText(job.name, 256), core::RoleKey(role), ResourceWords(id, asked),
            flag.empty() ? std::string("the nodes have none of it")
                         : fmt::format("{}: {}", ResourceWords(id, node[id]), flag));
      }
      per_node = std::min(per_node, node[id] / asked);
    }
    // A task that asks for nothing fits anywhere.
    if (per_node == std::numeric_limits<int64_t>::max()) continue;
    nodes = std::max(nodes, (tasks + per_node - 1) / per_node);
  }
  const core::Resources total = job.MinDemand();
  for (core::ResourceId id : {core::kCpu, core::kMemory, core::kGpu}) {
    if (node[id] > 0) nodes = std::max(nodes, (total[id] + node[id] - 1) / node[id]);
  }
  return nodes;
}

std::string Load(double load) { return fmt::format("{:.3g}", load); }

std::string Gpus(int n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

}  // namespace

core::Result<LoadRange> ParseLoadRange(std::string_view text) {
  const size_t colon = text.find(':');
  LoadRange r;
  bool ok = colon != std::string_view::npos;
  if (ok) {
    auto a = std::from_chars(text.data(), text.data() + colon, r.lo);
    auto b = std::from_chars(text.data() + colon + 1, text.data() + text.size(), r.hi);
    ok = a.ec == std::errc() && a.ptr == text.data() + colon && b.ec == std::errc() &&
         b.ptr == text.data() + text.size() && std::isfinite(r.lo) && std::isfinite(r.hi) &&
         r.lo > 0 && r.hi <= kMaxLoad;
  }
  if (!ok) {
    return core::Errorf(
        "--load: expected LO:HI, the offered load's range with 0 < LO <= HI <= 1e6 (e.g. "
        "0.7:0.95), got {}",
        core::internal::QuoteInput(text));
  }
  if (r.lo > r.hi) {
    return core::Errorf("--load: the range {} is empty (LO {} is above HI {})",
                        core::internal::QuoteInput(text), r.lo, r.hi);
  }
  return r;
}

NodeShape DefaultShape(std::string_view trace, NodeShape given) {
  if (given.gpus == 0) {
    given.gpus = trace.starts_with("tiresias:") || trace.starts_with("pollux:") ? 4 : 8;
  }
  if (given.cpus == 0) given.cpus = 8 * given.gpus;
  if (given.memory_gi == 0) given.memory_gi = 64 * given.gpus;
  return given;
}

core::Result<SizedCluster> SizeCluster(const config::WorkloadSpec& workload, const NodeShape& node,
                                       const LoadRange& range) {
  const std::string source = core::EscapeText(workload.source, 512);
  if (workload.jobs.empty()) return core::Errorf("{}: no jobs to size a cluster for", source);
  if (node.gpus < 1 || node.gpus > core::kMaxGpusPerNode) {
    return core::Errorf("--gpus-per-node: expected an integer between 1 and {}, got {}",
                        core::kMaxGpusPerNode, node.gpus);
  }
  if (node.cpus < 1)
    return core::Errorf("--cpus-per-node: expected an integer >= 1, got {}", node.cpus);
  if (node.memory_gi < 1) {
    return core::Errorf("--memory-gi-per-node: expected an integer >= 1, got {}", node.memory_gi);
  }
  const auto load = [&](int64_t nodes) { return sim::OfferedLoad(workload, nodes * node.gpus); };
  const double one = load(1);
  if (!(one > 0)) {
    return core::Errorf(
        "{}: its jobs ask for no GPU time, so no cluster is loaded by them (the load counts "
        "GPU-seconds)",
        source);
  }
  if (!std::isfinite(one)) {
    return core::Errorf(
        "{}: every job arrives at {:g} s, so the load (GPU-seconds over the span of the "
        "arrivals) has no span to spread over; give the jobs arrival times",
        source, workload.jobs.front().submit_time);
  }

  // The largest job at its smallest size.
  const core::Resources per_node = NodeResources(node);
  int64_t fit = 1;
  const core::JobSpec* largest = nullptr;
  for (const core::JobSpec& job : workload.jobs) {
    DLSCHED_TRY_LET(n, NodesFor(job, per_node, source));
    if (*n > fit) {
      fit = *n;
      largest = &job;
    }
  }

  // The fewest nodes loaded to at most HI: one / n <= HI, checked on the
  // load itself (rounding).
  const double estimate = std::ceil(one / range.hi);
  if (estimate > core::kMaxNodes || fit > core::kMaxNodes) {
    return core::Errorf(
        "{}: a load of at most {} needs more than {} nodes of {} (the limit); raise "
        "--gpus-per-node",
        source, range.hi, core::kMaxNodes, Gpus(node.gpus));
  }
  int64_t nodes = std::max<int64_t>(1, static_cast<int64_t>(estimate));
  while (nodes > 1 && load(nodes - 1) <= range.hi) --nodes;
  while (load(nodes) > range.hi && nodes < core::kMaxNodes) ++nodes;

  SizedCluster c;
  c.node = node;
  c.nodes = static_cast<int>(std::max(nodes, fit));
  c.load = load(c.nodes);
  if (c.load >= range.lo && c.load <= range.hi) return c;
  if (fit > nodes) {
    return core::Errorf(
        "{}: job '{}' needs at least {} nodes of {} at its smallest size, on which the load is "
        "{}, below the range's {} (lower LO, or give larger nodes)",
        source, core::EscapeText(largest->name, 256), fit, Gpus(node.gpus), Load(c.load), range.lo);
  }
  if (nodes == 1) {
    return core::Errorf(
        "{}: even 1 node of {} is loaded only {}, below the range's {} (lower LO, or give "
        "smaller nodes with --gpus-per-node)",
        source, Gpus(node.gpus), Load(c.load), range.lo);
  }
  return core::Errorf(
      "{}: no number of {}-GPU nodes gives a load in [{}, {}]: {} nodes give {}, {} give {} "
      "(widen --load, or change --gpus-per-node)",
      source, node.gpus, range.lo, range.hi, nodes - 1, Load(load(nodes - 1)), nodes, Load(c.load));
}

core::Result<std::string> TiresiasClusterCsv(const SizedCluster& c) {
  const config::TiresiasShape shape{1, c.nodes, c.node.gpus, c.node.cpus, c.node.memory_gi};
  // What `--cluster tiresias:FILE` would refuse is not written.
  if (auto cluster = config::TiresiasCluster(shape); !cluster) {
    return core::Errorf("a Tiresias cluster spec: {} (write cluster YAML instead)",
                        cluster.error().message);
  }
  return config::TiresiasClusterCsv(shape);
}

core::Result<std::string> SizedClusterYaml(const SizedCluster& c, std::string_view comment) {
  sim::ClusterOptions o;
  o.nodes = c.nodes;
  o.gpus_per_node = c.node.gpus;
  o.cpus_per_node = c.node.cpus;
  o.memory_gi_per_node = c.node.memory_gi;
  o.generator = "dlsched size";
  DLSCHED_TRY_LET(yaml, sim::ClusterYaml(o));
  return fmt::format("# {}\n{}", comment, *yaml);
}

}  // namespace dlsched::cli
