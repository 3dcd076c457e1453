#include "dlsched/engine/session.h"

namespace dlsched::engine {

void Session::Assign(TaskRef t, NodeIndex n, int device) {
  state_.PlaceTask(t, n, device);
  log_.push_back({t, n, true, state_.DeviceOf(t)});
}

void Session::Evict(TaskRef t) {
  const JobState& js = state_.Job(t.job);
  const NodeIndex n = js.NodeOf(t.role, t.index);
  const int device = state_.DeviceOf(t);
  state_.RemoveTask(t);
  log_.push_back({t, n, false, device});
}

void Session::EvictJob(JobIndex j) {
  const JobState& js = state_.Job(j);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] != kNoNode) Evict(js.TaskAt(j, s));
  }
}

void Session::RollbackTo(Mark m) {
  while (log_.size() > m) {
    const Step s = log_.back();
    log_.pop_back();
    if (s.assigned) {
      state_.UnplaceTentative(s.task);
    } else {
      state_.PlaceTask(s.task, s.node, s.device);
    }
  }
}

}  // namespace dlsched::engine
