#pragma once

// The limits of limits.h applied to what a file describes: a node, a
// cluster through its events, a job, a workload. Every way a resource
// amount, a time or a count enters dlsched ends here: the cluster and
// workload YAML parsers (entry by entry, to name the key), each trace
// importer (row by row, to name the line, and the whole workload once
// read), Tiresias cluster specs, and what `snapshot` writes. Parsers check
// a field's syntax and range as they read it; these are the rules that
// hold whatever made the spec, so that no path can skip one.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"

namespace dlsched::core {

// A broken limit: where, as the YAML file names it relative to the thing
// checked ("worker.maxReplicas", "resources.memory"; empty: the thing
// itself), and what is wrong ("1Ei is more than the limit of 1Pi").
struct LimitProblem {
  std::string field;
  std::string what;
};
using LimitCheck = std::optional<LimitProblem>;

// "<prefix>.<field>", or either alone when the other is empty.
std::string JoinField(std::string_view prefix, std::string_view field);

// One resource amount of a task or a node: 0 .. kMaxAmount; on a node,
// GPUs at most kMaxGpusPerNode too. The problem in words, or nullopt.
std::optional<std::string> AmountProblem(ResourceId id, int64_t amount);
std::optional<std::string> NodeAmountProblem(ResourceId id, int64_t amount);

// A number of nodes in a cluster (all it ever has: a removed node keeps
// its state): at most kMaxNodes.
std::optional<std::string> NodeCountProblem(int64_t nodes);

// A time in seconds: finite, in [0, kMaxTime], and above 0 if `positive`.
std::optional<std::string> TimeProblem(double seconds, bool positive = false);

// Every limit of one job: its task counts (replicas, minReplicas <=
// replicas <= maxReplicas, Chief at most 1, all tasks at maxReplicas within
// kMaxTasksPerJob), each request within kMaxAmount and the job's request
// of each resource at maxReplicas within kMaxTotalAmount, its times
// (arrival, deadline, delays, duration, its `running` times), its steps,
// progress and throughput table. An unresolved model (no table yet) passes.
LimitCheck CheckJobLimits(const JobSpec& job);

// A workload: its start, each job (the field prefixed "job '<name>': "),
// and all their tasks together within kMaxWorkloadTasks.
LimitCheck CheckJobsLimits(std::span<const JobSpec> jobs, Time start);

// A cluster's limits as its nodes come and go, for a parser that reads it
// entry by entry: nodes ever within kMaxNodes, each node's amounts, each
// `reserved` within its node, and at every instant the cluster's total of
// each resource (the nodes present) within kMaxTotalAmount. Each call
// checks before it applies; its problem's field is relative to the node
// ("resources.memory", "reserved.cpu").
class ClusterLimits {
 public:
  LimitCheck AddNode(const NodeSpec& node);
  // What pods outside the workload hold on `node`, present (and added)
  // just before: at most the node's allocatable.
  LimitCheck Reserve(const std::string& node, const Resources& reserved);
  // A present node's allocatable replaced: the cluster's total within the
  // limit, and never below what is reserved there.
  LimitCheck UpdateNode(const std::string& node, const Resources& allocatable);
  void RemoveNode(const std::string& node);

  int64_t nodes_ever() const { return nodes_ever_; }

 private:
  struct Present {
    Resources allocatable;
    Resources reserved;
  };
  LimitCheck AddToTotal(const Resources& minus, const Resources& plus);

  int64_t nodes_ever_ = 0;
  // Per ResourceId, the present nodes' total. Each amount <= kMaxAmount
  // times at most kMaxNodes nodes: 128 bits cannot overflow.
  std::vector<__int128> total_;
  std::unordered_map<std::string, Present> present_;
};

// A whole cluster through ClusterLimits: its nodes, `reserved` and events,
// in order (fields "node '<name>': ...", "events[<i>].add...").
LimitCheck CheckClusterLimits(const ClusterSpec& cluster);

}  // namespace dlsched::core
