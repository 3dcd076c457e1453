#include "dlsched/core/policy_state.h"

#include <algorithm>
#include <cmath>

#include "dlsched/core/limits.h"

namespace dlsched::core {

double ClampState(StateKind kind, double v, double attained) {
  switch (kind) {
    case StateKind::kLevel:
      return std::clamp(std::floor(v), 0.0, static_cast<double>(kMaxLevel));
    case StateKind::kTime:
      return std::clamp(v, 0.0, kMaxTime);
    case StateKind::kGpuSeconds:
      return std::clamp(v, 0.0, attained);
    case StateKind::kPlace:
      return std::clamp(v, -kMaxLevelPlace, kMaxLevelPlace);
  }
  return v;
}

}  // namespace dlsched::core
