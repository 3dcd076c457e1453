#pragma once

// The pieces of `dlsched size` that need no command line (cli/ internal;
// docs/traces.md, "Sizing a cluster for a trace"): the fewest nodes of one
// shape that a workload loads to a given range, and that cluster as YAML or
// as a Tiresias cluster spec CSV.

#include <cstdint>
#include <string>
#include <string_view>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"

namespace dlsched::cli {

// The offered load a cluster should get, as `--load LO:HI` takes it.
struct LoadRange {
  double lo = 0.7;
  double hi = 0.95;
};

// "LO:HI" with 0 < LO <= HI <= 1e6, e.g. "0.7:0.95". Errors read
// "--load: ...".
core::Result<LoadRange> ParseLoadRange(std::string_view text);

// One node of the cluster: GPUs, cpus and GiB of memory.
struct NodeShape {
  int gpus = 0;
  int cpus = 0;
  int memory_gi = 0;
};

// The node shape `size` takes when its flags do not say: `gpus` GPUs
// (0: 4 for a tiresias: or pollux: trace, the 4-GPU nodes of Tiresias'
// 32-node cluster and of Pollux's testbed; else 8, as `dlsched generate`),
// `cpus` cpus (0: 8 per GPU) and `memory_gi` GiB (0: 64 per GPU), the
// per-GPU shape of `dlsched generate --cluster-out`'s nodes.
NodeShape DefaultShape(std::string_view trace, NodeShape given);

struct SizedCluster {
  NodeShape node;
  int nodes = 0;
  // What the workload offers this cluster (sim::OfferedLoad).
  double load = 0;
  int64_t gpus() const { return int64_t{node.gpus} * nodes; }
};

// The fewest nodes of `node` on which `workload` offers a load of at most
// range.hi (sim::OfferedLoad: the GPU-seconds its jobs ask for over the
// cluster's GPUs times the span of its arrivals), and no fewer than its
// largest job needs at its smallest size (every task fits one node, and the
// job's GPUs, cpu and memory in all fit the nodes). Errors, one line each:
// a task larger than a node, a workload that asks for no GPU time or whose
// jobs all arrive at one instant (no span to load), a node count whose
// load falls below range.lo (the node shape skips the range, or the largest
// job needs more nodes than the load does), more nodes than the limit.
core::Result<SizedCluster> SizeCluster(const config::WorkloadSpec& workload, const NodeShape& node,
                                       const LoadRange& range);

// The cluster in the format `--cluster tiresias:FILE` reads: one switch of
// `nodes` nodes; an error when that format cannot hold it (its columns'
// ranges, config::TiresiasCluster), reading "a Tiresias cluster spec: ...".
core::Result<std::string> TiresiasClusterCsv(const SizedCluster& cluster);

// The cluster as cluster YAML (sim::ClusterYaml), `comment` as its first
// line (prefixed with "# ").
core::Result<std::string> SizedClusterYaml(const SizedCluster& cluster, std::string_view comment);

}  // namespace dlsched::cli
