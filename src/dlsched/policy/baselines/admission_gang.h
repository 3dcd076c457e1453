#pragma once

#include <vector>

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Admits whole jobs (all PS and Chief replicas plus the sizer's starting
// workers, or nothing) in the profile's job order. A job that does not fit
// asks the preemptor for room. With backfill, later jobs that fit start
// while an earlier one waits; without it, the queue stops at the first job
// that cannot start (strict order).
class GangAdmission final : public engine::Admission {
 public:
  explicit GangAdmission(bool backfill) : backfill_(backfill) {}
  void Admit(engine::CycleContext& ctx, const engine::Profile& profile) const override;

 private:
  bool backfill_;
};

}  // namespace dlsched::policy
