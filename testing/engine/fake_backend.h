#pragma once

// A backend for the engine's life cycle and scheduler loop in tests: it
// records what it is asked, acts as the simulator does by default (binds
// are confirmed and pods gone at once) and leaves timers to the test.
// Test-only code.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/lifecycle.h"

namespace dlsched::testing {

class FakeBackend final : public engine::Backend {
 public:
  struct Timer {
    core::Time at;
    engine::TimerKind kind;
    engine::JobIndex job;
    uint64_t epoch;
  };

  // Without a state, only hooks act on binds and unbinds, and the log
  // names tasks by their indices.
  FakeBackend() = default;
  // Binds confirm their task in `state` and unbinds let it go (unless
  // told otherwise below); the log names tasks by their job's name.
  explicit FakeBackend(engine::ClusterState& state) : state_(&state) {}

  core::Time Now() const override { return now; }
  void SetTimer(core::Time at, engine::TimerKind kind, engine::JobIndex j, uint64_t epoch) override;
  void Bind(engine::TaskRef t, engine::NodeIndex n) override;
  void Unbind(engine::TaskRef t, engine::NodeIndex n) override;
  void CreateTask(engine::TaskRef t) override;
  void DeleteTask(engine::TaskRef t) override;
  void OnProgressChange(engine::JobIndex j) override;
  void OnPhase(engine::JobIndex j, core::JobPhase from) override;
  bool WantsTimeline() const override { return keep_timeline; }
  void OnTimeline(engine::TimelineEvent event) override { timeline.push_back(std::move(event)); }

  // "<job>/<role><index>".
  std::string Name(engine::TaskRef t) const;
  // The earliest timer due at or before `t` (the first set of equals),
  // taken off the list.
  std::optional<Timer> TakeDue(core::Time t);

  core::Time now = 0;
  // Whether a bind is confirmed at once (else it stays assumed), and
  // whether an unbound task's pod is gone at once (else it is releasing).
  bool confirm_binds = true;
  bool pods_vanish = true;
  // What confirming a bind and a pod gone do; by default the state's
  // ConfirmTask and TaskGone.
  std::function<void(engine::TaskRef)> on_bind_confirmed, on_pod_gone;
  // Called after the change is counted.
  std::function<void(engine::JobIndex)> on_progress_change;

  std::vector<Timer> timers;
  // "bind <task> <node>", "unbind <task> <node>", "create <task>",
  // "delete <task>", in order.
  std::vector<std::string> log;
  // "<from>-><to>" per phase change (with a state only).
  std::vector<std::string> phases;
  std::map<engine::JobIndex, int> progress_changes;  // per job
  int progress_calls = 0;                            // in all
  // The rows of every job's timeline, in order, when keep_timeline.
  bool keep_timeline = false;
  std::vector<engine::TimelineEvent> timeline;

 private:
  // `hook`, or else `fallback` on the state.
  void Settle(engine::TaskRef t, const std::function<void(engine::TaskRef)>& hook,
              void (engine::ClusterState::*fallback)(engine::TaskRef));

  engine::ClusterState* state_ = nullptr;
};

}  // namespace dlsched::testing
