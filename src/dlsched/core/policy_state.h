#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace dlsched::core {

// What a scheduling policy keeps about a job from one cycle to the next
// (Tiresias' queue level, since when, its place in that queue's list), as
// the job formats carry it: by field name, so that a snapshot taken under
// one policy restores the state of that policy, and no type of the core
// names a policy's fields. The policy that keeps a field declares it (and
// what it means) in its own unit (engine::RecordField); this file only
// says which names the formats carry and how each is bounded.
enum class StateKind : uint8_t {
  kLevel,       // an integer 0..kMaxLevel
  kTime,        // seconds, 0..kMaxTime
  kGpuSeconds,  // GPU-seconds, 0 up to the job's attained service
  kPlace,       // a place in a list, -kMaxLevelPlace..kMaxLevelPlace
};

struct StateField {
  std::string_view name;  // the key in a snapshot and in TrainingJob status
  StateKind kind;
};

// The fields of policy state the job formats carry, in the order a
// snapshot writes them and a reader checks them. A policy whose state must
// survive a snapshot or an operator restart adds its fields here.
inline constexpr StateField kStateFields[] = {
    {"level", StateKind::kLevel},
    {"levelSince", StateKind::kTime},
    {"levelBaseGpuSeconds", StateKind::kGpuSeconds},
    {"ranSince", StateKind::kTime},
    {"levelPlace", StateKind::kPlace},
    // Gavel's round-based mechanism (policy/gavel/gavel.h): the window of
    // time received, up to when it is counted, seconds run per GPU type.
    {"gavelWindow", StateKind::kTime},
    {"gavelCounted", StateKind::kTime},
    {"gavelSeconds0", StateKind::kTime},
    {"gavelSeconds1", StateKind::kTime},
    {"gavelSeconds2", StateKind::kTime},
    {"gavelSeconds3", StateKind::kTime},
    {"gavelSeconds4", StateKind::kTime},
    {"gavelSeconds5", StateKind::kTime},
    {"gavelSeconds6", StateKind::kTime},
    {"gavelSeconds7", StateKind::kTime},
};

// The field of kStateFields named `name` (a name not there fails the build).
consteval StateField CarriedField(std::string_view name) {
  for (const StateField& f : kStateFields) {
    if (f.name == name) return f;
  }
  throw "not a field of core::kStateFields";
}

// A job's policy state by field name (only fields of kStateFields).
using PolicyState = std::map<std::string, double, std::less<>>;

// `v` brought within the bounds of `kind` (a restarted operator's reading
// of a value it wrote), for a job that has attained `attained`.
double ClampState(StateKind kind, double v, double attained);

}  // namespace dlsched::core
