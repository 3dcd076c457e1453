#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "dlsched/core/error.h"

namespace dlsched::core {

// Resource names are interned to small integer ids so resource vectors are
// fixed-size arrays (no heap, no hashing in the scheduling hot loop). The
// first three ids are fixed; extended names get the next free id in order of
// first use. The table is process-wide and append-only.
using ResourceId = uint8_t;
inline constexpr ResourceId kCpu = 0;     // millicores
inline constexpr ResourceId kMemory = 1;  // bytes
inline constexpr ResourceId kGpu = 2;     // whole devices ("nvidia.com/gpu")
inline constexpr int kMaxResources = 8;

// Returns the id of `name`, interning it if new. Fails when more than
// kMaxResources distinct names are used, or when `name` is empty or contains
// a space or control character.
Result<ResourceId> InternResource(std::string_view name);
// Returns the id of an already interned name, or -1.
int FindResource(std::string_view name);
// The name of an interned id (valid for the life of the process), or "" for an
// id that has not been interned. All four functions are thread-safe.
std::string_view ResourceName(ResourceId id);
// Number of names interned so far (ids are 0..NumResources()-1).
int NumResources();

// Converts a Kubernetes quantity string to the canonical integer unit of the
// resource: millicores for cpu, whole units (rounded up) for everything else.
// A negative amount is rejected. The error message is the reason only.
Result<int64_t> ParseResourceAmount(ResourceId id, std::string_view text);
// Formats a canonical amount back to a readable quantity ("500m", "2Gi", "4").
std::string FormatResourceAmount(ResourceId id, int64_t amount);

// A vector of amounts indexed by ResourceId.
struct Resources {
  std::array<int64_t, kMaxResources> v{};

  int64_t& operator[](ResourceId id) { return v[id]; }
  int64_t operator[](ResourceId id) const { return v[id]; }

  Resources& operator+=(const Resources& o) {
    for (int i = 0; i < kMaxResources; ++i) v[i] += o.v[i];
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    for (int i = 0; i < kMaxResources; ++i) v[i] -= o.v[i];
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  friend Resources operator*(Resources a, int64_t k) {
    for (auto& x : a.v) x *= k;
    return a;
  }
  friend bool operator==(const Resources&, const Resources&) = default;
  // Per resource, the larger amount.
  friend Resources Max(Resources a, const Resources& b) {
    for (int i = 0; i < kMaxResources; ++i) a.v[i] = std::max(a.v[i], b.v[i]);
    return a;
  }

  // True when every component of *this is <= the same component of `o`.
  bool FitsIn(const Resources& o) const {
    for (int i = 0; i < kMaxResources; ++i) {
      if (v[i] > o.v[i]) return false;
    }
    return true;
  }
  bool IsZero() const {
    for (auto x : v) {
      if (x != 0) return false;
    }
    return true;
  }
};

// "cpu=2, memory=4Gi, nvidia.com/gpu=1" (non-zero entries only).
std::string FormatResources(const Resources& r);

}  // namespace dlsched::core
