#include "dlsched/engine/plan.h"

namespace dlsched::engine {

bool Plan::ChangesState() const {
  for (const auto& a : actions) {
    if (a.kind != ActionKind::kWait && a.kind != ActionKind::kBackoff &&
        a.kind != ActionKind::kStarve) {
      return true;
    }
  }
  return false;
}

}  // namespace dlsched::engine
