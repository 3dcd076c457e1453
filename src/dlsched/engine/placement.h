#pragma once

#include <span>
#include <string>

#include "dlsched/engine/cycle_context.h"

namespace dlsched::engine {

// Shared placement helpers for packers, admissions and sizers.

// The feasible node with the highest weighted score of the profile's
// scorers for task `t` (ties: lowest node index), or kNoNode. Candidates
// come from the free-GPU index, so nodes without enough GPUs are never
// visited. Records every candidate into `trace` when given.
NodeIndex SelectNode(const CycleContext& ctx, TaskRef t, TaskTrace* trace);

// Places task `t` on the best node; on failure fills `reason`.
bool PlaceTaskByScore(CycleContext& ctx, TaskRef t, std::string* reason);

// Why no node can take `t` right now, e.g.
// "Worker needs 4 nvidia.com/gpu on one node, largest free is 2".
std::string NoFitReason(const ClusterState& state, TaskRef t);

// Lists the unplaced slots of job `j` a gang of `workers` workers needs, in
// placement order: PS, Chief, then Worker slots (lowest free index first).
void GangSlots(const ClusterState& state, JobIndex j, int workers, std::vector<TaskRef>* out);

// Sorts `jobs` per the profile's JobOrder (ties: submit time, then index).
// When `keys` is given it receives each job's key, in the sorted order.
void OrderJobs(const CycleContext& ctx, std::vector<JobIndex>* jobs,
               std::vector<double>* keys = nullptr);

// The plan of a cycle, in the order a backend applies it: kBind/kUnbind for
// the net session steps, then the job-level actions in the order they were
// decided. Called once, by the engine, at the end of the cycle.
void EmitPlan(const Session& session, CycleState& decisions, Plan* plan);

}  // namespace dlsched::engine
