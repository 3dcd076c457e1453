#pragma once

#include <span>

#include <vector>

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Volcano-like priority preemption (the baseline of the CPS experiment,
// docs/policies/cps-volcano-affinity.md): a job whose gang does not fit may
// evict whole running jobs of strictly lower priority class.
//
// Victims are tried lowest priority first; among equals the most recently
// (re)started first (latest JobState::phase_since, i.e. the one that loses
// the least work), then the highest job index. They are evicted one at a
// time on the Session and after each eviction the packer tries the gang.
// When it fits, each earlier victim is given back if the gang still fits
// without it (so no victim is evicted that was not needed given the
// others), and every victim gets a Stop action
// "preempted by <job>: priority high > low". When even evicting every
// candidate does not make room, everything is rolled back.
//
// Candidates are jobs in Running; with `skip_frozen` false also those in
// RunningProtected (frozen, core::IsFrozen). Jobs in Launching,
// Checkpointing, Stopping or Standby are never evicted: the life cycle has
// no way to stop a job in the middle of a transition.
class PriorityEvictionPreemptor final : public engine::Preemptor {
 public:
  explicit PriorityEvictionPreemptor(bool skip_frozen) : skip_frozen_(skip_frozen) {}
  bool Preempt(engine::CycleContext& ctx, engine::JobIndex j, int workers,
               const engine::Packer& packer, std::string* reason) const override;

 private:
  // From `mark`: evicts the victims not spared, then places the gang.
  static bool TryWith(engine::CycleContext& ctx, engine::Session::Mark mark,
                      std::span<const engine::JobIndex> victims, std::span<const uint8_t> spared,
                      engine::JobIndex j, int workers, const engine::Packer& packer,
                      std::string* reason);
  // With the gang placed after evicting `victims` in turn: gives back each
  // earlier victim the gang does not need (`spared`), leaving the session
  // with the gang placed; false if it no longer places.
  static bool SpareUnneeded(engine::CycleContext& ctx, engine::Session::Mark mark,
                            std::span<const engine::JobIndex> victims, engine::JobIndex j,
                            int workers, const engine::Packer& packer, std::vector<uint8_t>* spared,
                            std::string* why);

  bool skip_frozen_;
};

}  // namespace dlsched::policy
