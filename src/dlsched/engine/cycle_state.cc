#include "dlsched/engine/cycle_state.h"

#include <cassert>

namespace dlsched::engine {
namespace {

Action JobAction(ActionKind kind, JobIndex j, std::string reason, int workers) {
  return Action{kind, TaskRef{j, core::Role::kWorker, 0}, kNoNode, workers, std::move(reason)};
}

}  // namespace

void CycleState::Add(ActionKind kind, TaskRef task, std::string reason, int workers) {
  actions_.push_back(Action{kind, task, kNoNode, workers, std::move(reason)});
}

size_t CycleState::Put(std::unordered_map<JobIndex, size_t>& index, Action action) {
  auto [it, fresh] = index.try_emplace(action.task.job, actions_.size());
  if (fresh) {
    actions_.push_back(std::move(action));
  } else {
    actions_[it->second] = std::move(action);
  }
  return it->second;
}

void CycleState::Start(JobIndex j, int workers, std::string reason) {
  Put(verdict_of_, JobAction(ActionKind::kStart, j, std::move(reason), workers));
}

void CycleState::Wait(JobIndex j, std::string reason, WaitStatus status) {
  Action a = JobAction(ActionKind::kWait, j, std::move(reason), 0);
  a.status = status;
  Put(verdict_of_, std::move(a));
}

const Action* CycleState::VerdictOf(JobIndex j) const {
  auto it = verdict_of_.find(j);
  return it == verdict_of_.end() ? nullptr : &actions_[it->second];
}

void CycleState::ResizeStart(JobIndex j, int workers, std::string reason) {
  auto it = verdict_of_.find(j);
  assert(it != verdict_of_.end() && actions_[it->second].kind == ActionKind::kStart);
  Action& a = actions_[it->second];
  a.workers = workers;
  a.reason = std::move(reason);
}

void CycleState::Resize(JobIndex j, int workers, std::string reason, bool restart, bool preempted) {
  auto it = resize_of_.find(j);
  if (it == resize_of_.end()) {
    Action a = JobAction(ActionKind::kResize, j, std::move(reason), workers);
    a.restart = restart;
    a.preempted = preempted;
    Put(resize_of_, std::move(a));
    return;
  }
  Action& a = actions_[it->second];
  a.workers = workers;
  a.reason += "; " + reason;
  a.restart = a.restart || restart;
  a.preempted = a.preempted || preempted;
}

const Action* CycleState::ResizeOf(JobIndex j) const {
  auto it = resize_of_.find(j);
  return it == resize_of_.end() ? nullptr : &actions_[it->second];
}

void CycleState::SetPendingKeys(std::span<const JobIndex> jobs, std::span<const double> keys) {
  pending_keys_.clear();
  for (size_t i = 0; i < jobs.size(); ++i) pending_keys_[jobs[i]] = keys[i];
}

std::optional<double> CycleState::PendingKey(JobIndex j) const {
  auto it = pending_keys_.find(j);
  if (it == pending_keys_.end()) return std::nullopt;
  return it->second;
}

}  // namespace dlsched::engine
