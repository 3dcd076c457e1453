#include "dlsched/engine/plan.h"

namespace dlsched::engine {

std::string_view WaitStatusName(WaitStatus s) {
  switch (s) {
    case WaitStatus::kUnschedulable:
      return "Unschedulable";
    case WaitStatus::kUnschedulableUnresolvable:
      return "UnschedulableAndUnresolvable";
    case WaitStatus::kError:
      return "Error";
  }
  return "?";
}

bool Plan::ChangesState() const {
  for (const auto& a : actions) {
    if (a.kind != ActionKind::kWait && a.kind != ActionKind::kBackoff &&
        a.kind != ActionKind::kStarve && a.kind != ActionKind::kSetRecord) {
      return true;
    }
  }
  return false;
}

}  // namespace dlsched::engine
