#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "dlsched/core/time.h"
#include "dlsched/engine/cluster_state.h"

namespace dlsched::engine {

// A pod waiting to be scheduled on its own (per-pod admission, the
// Kubernetes default).
struct PendingPod {
  TaskRef task;
  core::Time not_before = 0;  // in backoff until then
  int attempts = 0;           // failed attempts so far
  // The RoomEpoch() of the cycle that last tried it (0: never tried). While
  // RoomEpoch() stays there, no room was freed since: the pod is parked
  // (kube's unschedulable pods), and not tried again.
  uint64_t tried_epoch = 0;
  std::string last_failure{};  // why its last attempt failed
  bool unresolvable = false;   // ... and no node could ever take it
  bool Parked(uint64_t room_epoch) const { return tried_epoch == room_epoch; }
};

// The scheduling queue of per-pod admission: the pods of jobs still
// gathering them, in creation order (kube-scheduler's scheduling queue,
// its active, backoff and unschedulable pods in one list told apart by
// their fields). JobLifecycle keeps it (pods created, bound, lost, backed
// off); the engine reads it in a cycle. Not part of the cache: ClusterState
// holds the cluster, this the work waiting for it.
class PodQueue {
 public:
  using const_iterator = std::vector<PendingPod>::const_iterator;
  const_iterator begin() const { return pods_.begin(); }
  const_iterator end() const { return pods_.end(); }
  size_t size() const { return pods_.size(); }
  bool empty() const { return pods_.empty(); }
  const PendingPod& operator[](size_t i) const { return pods_[i]; }
  const PendingPod& back() const { return pods_.back(); }

  // A pod created (or created again) at `now`: at the back, due at once.
  void Add(TaskRef t, core::Time now) { pods_.push_back(PendingPod{.task = t, .not_before = now}); }
  // Drops the pods `drop` says so of, keeping the others' order.
  template <typename Pred>
  void DropIf(Pred drop) {
    std::erase_if(pods_, std::move(drop));
  }
  // Pod `i` (from begin()) to change: its backoff, attempts, last failure.
  PendingPod& At(size_t i) { return pods_[i]; }

  // Some pod has not been tried since room was last freed.
  bool AnyUntried(uint64_t room_epoch) const;
  // The first backoff flush after `now` at which a pod not parked comes
  // due (kube-scheduler moves pods whose backoff completed to its active
  // queue once a second), or kNever.
  core::Time NextRetry(uint64_t room_epoch, core::Time now) const;

 private:
  std::vector<PendingPod> pods_;
};

}  // namespace dlsched::engine
