#pragma once

#include <cstddef>
#include <vector>

#include "dlsched/engine/cluster_state.h"

namespace dlsched::engine {

// Tentative placements and evictions over a ClusterState, with an undo log:
// a policy tries something, and if it does not work out rolls back to a mark.
// Rolling back costs the number of steps undone, never a copy of the cluster.
class Session {
 public:
  using Mark = size_t;

  explicit Session(ClusterState& state) : state_(state) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The cache, read-only: placements go through Assign and Evict.
  const ClusterState& state() const { return state_; }

  // Puts an unplaced task on node `n` (a GPU share on `device`, or with -1
  // on ClusterState::TightestDevice). The caller checks that it fits.
  void Assign(TaskRef t, NodeIndex n, int device = -1);
  // Takes a placed task off its node.
  void Evict(TaskRef t);
  // Takes every placed task of job `j` off its node.
  void EvictJob(JobIndex j);
  // True when `t`'s request fits in node `n`'s free resources.
  bool Fits(TaskRef t, NodeIndex n) const {
    return state_.Schedulable(n) && state_.FreeHolds(state_.Request(t), n);
  }

  struct Step {
    TaskRef task;
    NodeIndex node;
    bool assigned;    // true: Assign (undo = remove); false: Evict (undo = place back)
    int device = -1;  // the GPU device of its share (ClusterState::DeviceOf), or -1
  };
  // Steps taken and not rolled back, oldest first.
  const std::vector<Step>& Steps() const { return log_; }

  Mark GetMark() const { return log_.size(); }
  // Undoes every step taken after `m`, newest first.
  void RollbackTo(Mark m);
  // Forgets the log: what was done stays done.
  void Commit() { log_.clear(); }

 private:
  ClusterState& state_;
  std::vector<Step> log_;
};

}  // namespace dlsched::engine
