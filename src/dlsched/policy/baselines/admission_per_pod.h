#pragma once

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// The Kubernetes default: no gang. Pods are tried one at a time in the
// order their controllers created them (the backend's pod queue), each on
// the best-scored node; a pod that cannot be placed gets a kBackoff action
// (the backend backs it off 1 s doubling to 10 s) while newer pods go on. A
// job starts only when all its pods are bound; pods already bound hold their
// resources meanwhile, which is how per-pod scheduling deadlocks.
class PerPodAdmission final : public engine::Admission {
 public:
  void Admit(engine::CycleContext& ctx, const engine::Profile& profile) const override;
  bool UsesPodQueue() const override { return true; }
};

}  // namespace dlsched::policy
