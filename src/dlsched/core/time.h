#pragma once

namespace dlsched::core {

// Simulated or wall-clock time in seconds since the start of the run. The
// engine never reads a clock: the backend passes "now" into every cycle.
using Time = double;

inline constexpr Time kNever = 1e300;

}  // namespace dlsched::core
