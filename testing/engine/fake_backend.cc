#include "engine/fake_backend.h"

#include <algorithm>

namespace dlsched::testing {

void FakeBackend::SetTimer(core::Time at, engine::TimerKind kind, engine::JobIndex j,
                           uint64_t epoch) {
  timers.push_back({at, kind, j, epoch});
}

void FakeBackend::Settle(engine::TaskRef t, const std::function<void(engine::TaskRef)>& hook,
                         void (engine::ClusterState::*fallback)(engine::TaskRef)) {
  if (hook) {
    hook(t);
  } else if (state_ != nullptr) {
    (state_->*fallback)(t);
  }
}

void FakeBackend::Bind(engine::TaskRef t, engine::NodeIndex n) {
  log.push_back("bind " + Name(t) + " " + std::to_string(n));
  if (confirm_binds) Settle(t, on_bind_confirmed, &engine::ClusterState::ConfirmTask);
}

void FakeBackend::Unbind(engine::TaskRef t, engine::NodeIndex n) {
  log.push_back("unbind " + Name(t) + " " + std::to_string(n));
  if (pods_vanish) Settle(t, on_pod_gone, &engine::ClusterState::TaskGone);
}

void FakeBackend::CreateTask(engine::TaskRef t) { log.push_back("create " + Name(t)); }

void FakeBackend::DeleteTask(engine::TaskRef t) { log.push_back("delete " + Name(t)); }

void FakeBackend::OnProgressChange(engine::JobIndex j) {
  ++progress_changes[j];
  ++progress_calls;
  if (on_progress_change) on_progress_change(j);
}

void FakeBackend::OnPhase(engine::JobIndex j, core::JobPhase from) {
  if (state_ == nullptr) return;
  phases.push_back(std::string(core::PhaseName(from)) + "->" +
                   std::string(core::PhaseName(state_->Job(j).phase)));
}

std::string FakeBackend::Name(engine::TaskRef t) const {
  const std::string job = state_ != nullptr ? state_->Job(t.job).spec->name : std::to_string(t.job);
  return job + "/" + std::string(core::RoleName(t.role)) + std::to_string(t.index);
}

std::optional<FakeBackend::Timer> FakeBackend::TakeDue(core::Time t) {
  auto it = std::min_element(timers.begin(), timers.end(),
                             [](const Timer& a, const Timer& b) { return a.at < b.at; });
  if (it == timers.end() || it->at > t) return std::nullopt;
  const Timer timer = *it;
  timers.erase(it);
  return timer;
}

}  // namespace dlsched::testing
