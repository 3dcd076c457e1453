#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlsched/engine/cycle_context.h"
#include "dlsched/engine/extension_points.h"

namespace dlsched::engine {

// Shared placement helpers for packers, admissions and sizers.

// Why node `n` may never take task `t`, whatever runs on it: the node is
// unschedulable, or a filter of the profile rejects it ("untolerated taint
// dedicated=infra:NoSchedule"); "" when nothing does. The order is
// kube-scheduler's: NodeUnschedulable, then the filters in profile order.
std::string StaticFailure(const CycleContext& ctx, TaskRef t, NodeIndex n);

// True when node `n` may take task `t` now: its job's queue has quota for
// it (ClusterState::QuotaAdmits), no static failure, and room for its
// request. Every placement goes through this.
bool Fits(const CycleContext& ctx, TaskRef t, NodeIndex n);

// The profile's weighted total score of node `n` for task `t` (sum of
// weight x score over its scorers); each scorer's score goes into `trace`
// when given.
double TotalScore(const CycleContext& ctx, TaskRef t, NodeIndex n, TaskTrace* trace = nullptr);

// Counts, per reason, the nodes that could not take a task, for a message
// like kube-scheduler's "0/64 nodes are available: ...".
class NodeFailures {
 public:
  void Add(std::string_view reason, int count = 1);
  int Count() const;
  // "0/64 nodes fit Worker: 60 insufficient nvidia.com/gpu, 4 untolerated
  // taint dedicated=infra:NoSchedule" (largest counts first); `fit` is the
  // number of nodes that did fit (0 for a failed placement).
  std::string Summary(TaskRef t, int nodes, int fit = 0) const;

 private:
  std::vector<std::pair<std::string, int>> counts_;  // in order of first appearance
};

// The feasible node with the highest weighted score of the profile's
// scorers for task `t` (ties: lowest node index), or kNoNode (also when
// its job's queue has no quota for it). Candidates
// come from the free-GPU index, so nodes without enough GPUs are never
// visited. Records every candidate into `trace` when given; counts why
// every other node failed into `failures` when given (a node the GPU index
// skipped counts as "insufficient nvidia.com/gpu", an unschedulable one as
// "unschedulable").
//
// On a cluster of 100 nodes or more, the profile's percentageOfNodesToScore
// limits the search as kube-scheduler's does: when more nodes have the
// GPUs than NodesToScore allows, nodes are looked at in index order from
// where the last such search stopped (Memos::next_start_node) until
// that many feasible ones are found, and only those are scored.
NodeIndex SelectNode(const CycleContext& ctx, TaskRef t, TaskTrace* trace,
                     NodeFailures* failures = nullptr);

// kube-scheduler's numFeasibleNodesToFind: how many feasible nodes of
// `nodes` are enough to score, for a percentage in 0..100 (0: adaptive,
// 50% at 100 nodes falling by 1 point per 125 nodes to at least 5%; never
// fewer than 100 nodes; below 100 nodes, all of them).
int NodesToScore(int percentage, int nodes);

// Places task `t` on the best node; on failure fills `reason` with the
// queue's refusal or the per-node summary.
bool PlaceTaskByScore(CycleContext& ctx, TaskRef t, std::string* reason);

// Why no node could ever take task `t`, even with the cluster empty (every
// node rejects it by a filter, or its allocatable is too small), e.g.
// "0/64 nodes could ever take a Worker: 60 too small for nvidia.com/gpu=8,
// 4 untolerated taint dedicated=infra:NoSchedule"; nullopt when one could.
std::optional<std::string> TaskNeverFits(const CycleContext& ctx, TaskRef t);

// The one answer to "can job `j`'s gang of `workers` workers ever be
// placed on this cluster?", used by every admission. Cheap checks first:
// each task's role (TaskNeverFits), then the gang's demand against the
// capacity of the schedulable nodes. With `exact`, then `packer` is tried
// on the session with every placed task evicted, and rolled back (it costs
// the running tasks; admissions ask for it only where the answer decides
// whether later jobs may start). nullopt when the gang could be placed (or,
// without `exact`, might); otherwise why not. Leaves the session as it
// found it.
std::optional<std::string> NeverFits(CycleContext& ctx, JobIndex j, int workers,
                                     const Packer& packer, bool exact);

// Lists the unplaced slots of job `j` a gang of `workers` workers needs, in
// placement order: PS, Chief, then Worker slots (lowest free index first).
void GangSlots(const ClusterState& state, JobIndex j, int workers, std::vector<TaskRef>* out);

// Sorts `jobs` per the profile's JobOrder (ties: submit time, then index).
// When `keys` is given it receives each job's key, in the sorted order.
void OrderJobs(const CycleContext& ctx, std::vector<JobIndex>* jobs,
               std::vector<double>* keys = nullptr);

// The pending jobs (ClusterState::PendingJobs) sorted as OrderJobs sorts
// them, with their keys. With a JobOrder of static keys the order is kept
// between cycles (Memos::PendingOrder): jobs gone from
// the pending phases leave it and the jobs entered since are merged in, so
// a long queue is not sorted again every cycle.
void OrderPending(CycleContext& ctx, std::vector<JobIndex>* jobs, std::vector<double>* keys);

// With a JobOrder of static keys: the kept order brought up to
// date, as OrderPending does (the jobs that left its phases, known from
// ClusterState::LeftPending, dropped; those entered merged in), and
// returned whole, so a caller visits only what it needs. A Standby job
// holding its whole gang may be among the entries: it is not pending.
std::span<Memos::OrderEntry> UpdatePendingOrder(CycleContext& ctx);

// The plan of a cycle, in the order a backend applies it: kBind/kUnbind for
// the net session steps, then the job-level actions in the order they were
// decided. Called once, by the engine, at the end of the cycle.
void EmitPlan(const Session& session, CycleState& decisions, Plan* plan);

}  // namespace dlsched::engine
