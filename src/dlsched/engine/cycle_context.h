#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlsched/engine/cycle_state.h"
#include "dlsched/engine/memos.h"
#include "dlsched/engine/plan.h"
#include "dlsched/engine/pod_queue.h"
#include "dlsched/engine/session.h"

namespace dlsched::engine {

class Profile;

// Everything a policy may look at or change during one cycle.
struct CycleContext {
  Session& session;
  // What this cycle's stages decide and compute for each other; with the
  // session's steps, it becomes the cycle's plan.
  CycleState& decisions;
  // Per-pod admission's queue of pods (empty under any other admission).
  const PodQueue& pods;
  // What the engine remembers between cycles (engine::Memos): a policy
  // reads the cache through `session` only, and keeps its memos here.
  Memos& memos;
  const Profile& profile;
  core::Time now = 0;
  int64_t cycle = 0;
  // `dlsched explain`: the job whose decisions are recorded (or -1), and
  // where its traces go.
  JobIndex trace_job = -1;
  std::vector<JobTrace>* traces = nullptr;

  const ClusterState& state() const { return session.state(); }

  // Starts a trace of job `j` for this cycle if it is the traced job;
  // returns nullptr otherwise.
  JobTrace* BeginTrace(JobIndex j, int position) {
    return j != trace_job || traces == nullptr ? nullptr : StartTrace(position);
  }
  // The open trace of job `j` in this cycle, or nullptr.
  JobTrace* TraceOf(JobIndex j) {
    return j != trace_job || traces == nullptr ? nullptr : OpenTrace();
  }

 private:
  JobTrace* StartTrace(int position);
  JobTrace* OpenTrace();

 public:
  // A job-level action no later stage revisits (kStarve, kStop).
  // `by`: the job it makes room for (kStop), or -1.
  void AddAction(ActionKind kind, JobIndex j, std::string reason, int workers = 0,
                 JobIndex by = -1) {
    decisions.Add(kind, TaskRef{j, core::Role::kWorker, 0}, std::move(reason), workers,
                  WaitStatus::kUnschedulable, by);
  }
};

}  // namespace dlsched::engine
