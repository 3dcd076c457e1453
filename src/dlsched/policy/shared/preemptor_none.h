#pragma once

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Never preempts: a job that does not fit waits.
class NoPreemptor final : public engine::Preemptor {
 public:
  bool Preempt(engine::CycleContext&, engine::JobIndex, int, const engine::Packer&,
               std::string*) const override {
    return false;
  }
  bool MayEvict() const override { return false; }
};

}  // namespace dlsched::policy
