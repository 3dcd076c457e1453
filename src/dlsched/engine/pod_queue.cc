#include "dlsched/engine/pod_queue.h"

#include <algorithm>
#include <cmath>

namespace dlsched::engine {
namespace {

// The backoff queue's flush at or after `t`: kube-scheduler moves pods
// whose backoff completed to its active queue once a second
// (flushBackoffQCompleted); times are whole seconds since the run began.
core::Time BackoffFlush(core::Time t) { return std::ceil(t - 1e-9); }

}  // namespace

bool PodQueue::AnyUntried(uint64_t room_epoch) const {
  for (const auto& pod : pods_) {
    if (pod.tried_epoch != room_epoch) return true;
  }
  return false;
}

core::Time PodQueue::NextRetry(uint64_t room_epoch, core::Time now) const {
  core::Time wake = core::kNever;
  for (const auto& pod : pods_) {
    if (pod.tried_epoch != room_epoch && pod.not_before > now) {
      wake = std::min(wake, BackoffFlush(pod.not_before));
    }
  }
  return wake;
}

}  // namespace dlsched::engine
