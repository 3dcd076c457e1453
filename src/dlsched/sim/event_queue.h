#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "dlsched/core/time.h"

namespace dlsched::sim {

enum class EventKind : uint8_t {
  kArrival,         // job submitted
  kLaunchDone,      // Launching -> RunningProtected / Running
  kProtectEnd,      // RunningProtected -> Running
  kCompletion,      // all steps done (valid only for the job's current epoch)
  kCheckpointDone,  // Checkpointing -> Stopping -> Standby
  kTaintEviction,   // a NoExecute taint's tolerationSeconds may have run out
  kDeadline,        // the job fails unless finished
  kNode,            // a node event of the cluster file (job = its index)
  kTaskFailure,     // a failure the workload schedules (epoch = its index in the job's)
  kTick,            // wake the scheduler (per-pod backoff expiry)
};

struct Event {
  core::Time time = 0;
  uint64_t seq = 0;  // insertion order: ties at one instant keep it
  EventKind kind = EventKind::kTick;
  int32_t job = -1;
  uint64_t epoch = 0;  // kCompletion / kLaunchDone: ignored if the job moved on
};

// A binary heap keyed by (time, sequence), so runs are deterministic.
class EventQueue {
 public:
  void Push(core::Time time, EventKind kind, int32_t job = -1, uint64_t epoch = 0) {
    heap_.push(Event{time, next_seq_++, kind, job, epoch});
  }
  bool Empty() const { return heap_.empty(); }
  const Event& Top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  size_t Size() const { return heap_.size(); }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace dlsched::sim
