#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlsched/core/error.h"

namespace dlsched::core {

// Resource names are interned to small integer ids so the amounts of the
// common resources sit in a fixed-size array (no heap, no hashing in the
// scheduling hot loop). The first three ids are fixed; other names get the
// next free id in order of first use, with no limit but the id type: a real
// node lists ephemeral-storage, hugepages, MIG profiles, RDMA devices and
// whatever its device plugins advertise. The table is process-wide and
// append-only.
using ResourceId = uint16_t;
inline constexpr ResourceId kCpu = 0;     // millicores
inline constexpr ResourceId kMemory = 1;  // bytes
inline constexpr ResourceId kGpu = 2;     // whole devices ("nvidia.com/gpu")
// A share of one GPU device in thousandths ("dlsched.io/gpu-milli"): a task
// asking for 1..999 of it runs on one device beside other shares (see
// ClusterState). A node takes shares when its allocatable lists it.
inline constexpr ResourceId kGpuMilli = 3;
inline constexpr int64_t kMilliPerGpu = 1000;
// Ids below this are stored inline in every Resources; the rest, only where
// they are used (see Resources::more).
inline constexpr int kInlineResources = 8;
// Distinct names one process can intern (every ResourceId value).
inline constexpr int kMaxResourceNames = 65536;

// Returns the id of `name`, interning it if new. Fails when `name` is empty
// or contains a space or control character, or when kMaxResourceNames
// distinct names are used already.
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

// A vector of amounts indexed by ResourceId; an id it does not hold is 0.
// Ids below kInlineResources live in `v`; the others in `more`, sorted by id
// and only once set, so a request or node that uses none of them copies and
// compares as a fixed array plus an empty vector, and one that uses a few of
// a cluster's many names pays for those few.
struct Resources {
  std::array<int64_t, kInlineResources> v{};
  // (id, amount) for ids >= kInlineResources, ascending by id. An amount
  // may be 0 (set, then cleared); every comparison treats it as absent.
  std::vector<std::pair<ResourceId, int64_t>> more;

  // Inserts `id` with amount 0 when it is not held: a reference into `more`
  // is valid until the next insertion, so do not hold two at once.
  int64_t& operator[](ResourceId id) {
    if (id < kInlineResources) return v[id];
    return MoreSlot(id);
  }
  int64_t operator[](ResourceId id) const {
    if (id < kInlineResources) return v[id];
    return MoreValue(id);
  }

  // Each operation runs over the inline ids; the ids in `more` (of either
  // side) take a call out of line, so the common case stays small enough
  // to inline where it is used.
  Resources& operator+=(const Resources& o) {
    for (int i = 0; i < kInlineResources; ++i) v[i] += o.v[i];
    if (!o.more.empty()) AddMore(o, 1);
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    for (int i = 0; i < kInlineResources; ++i) v[i] -= o.v[i];
    if (!o.more.empty()) AddMore(o, -1);
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  // *this += o * k, without building o * k.
  Resources& AddTimes(const Resources& o, int64_t k) {
    for (int i = 0; i < kInlineResources; ++i) v[i] += o.v[i] * k;
    if (!o.more.empty()) AddMore(o, k);
    return *this;
  }
  friend Resources operator*(Resources a, int64_t k) {
    for (auto& x : a.v) x *= k;
    for (auto& e : a.more) e.second *= k;
    return a;
  }
  friend bool operator==(const Resources& a, const Resources& b) {
    if (a.v != b.v) return false;
    return (a.more.empty() && b.more.empty()) || a.MoreEqual(b);
  }
  // Per resource, the larger amount.
  friend Resources Max(Resources a, const Resources& b) {
    for (int i = 0; i < kInlineResources; ++i) a.v[i] = std::max(a.v[i], b.v[i]);
    if (!a.more.empty() || !b.more.empty()) a.MaxMore(b);
    return a;
  }

  // True when every component of *this is <= the same component of `o`.
  bool FitsIn(const Resources& o) const {
    for (int i = 0; i < kInlineResources; ++i) {
      if (v[i] > o.v[i]) return false;
    }
    return (more.empty() && o.more.empty()) || MoreFitsIn(o);
  }
  // FitsIn(a - b) without building the difference (a node's free room is
  // its allocatable minus what it holds): the scan over nodes asks it of
  // every node it visits.
  bool FitsInDifference(const Resources& a, const Resources& b) const {
    for (int i = 0; i < kInlineResources; ++i) {
      if (v[i] > a.v[i] - b.v[i]) return false;
    }
    return (more.empty() && a.more.empty() && b.more.empty()) || MoreFitsIn(a - b);
  }
  bool IsZero() const {
    for (auto x : v) {
      if (x != 0) return false;
    }
    for (const auto& e : more) {
      if (e.second != 0) return false;
    }
    return true;
  }
  // One past the largest id held (at least kInlineResources): a loop over
  // ids below it visits every non-zero amount.
  int Width() const { return more.empty() ? kInlineResources : more.back().first + 1; }

 private:
  int64_t MoreValue(ResourceId id) const;
  int64_t& MoreSlot(ResourceId id);
  // The `more` halves of +=/-= (sign 1 or -1), ==, Max and FitsIn.
  void AddMore(const Resources& o, int64_t sign);
  bool MoreEqual(const Resources& o) const;
  void MaxMore(const Resources& b);
  bool MoreFitsIn(const Resources& o) const;
};

// Calls fn(id) for every id at which `a` or `b` may hold a non-zero amount
// (the inline ids, then the ids of either's `more`), in ascending order,
// until fn returns true; returns that id, or -1. A loop over two vectors
// costs what they hold, not every name the process has interned. fn may
// read `a` and `b` through their non-const operator[] (which inserts): the
// next id is looked up by value, never through an iterator kept across fn.
template <typename Fn>
int FirstId(const Resources& a, const Resources& b, Fn fn) {
  for (int i = 0; i < kInlineResources; ++i) {
    if (fn(static_cast<ResourceId>(i))) return i;
  }
  int last = kInlineResources - 1;
  const auto after = [&last](const Resources& r) {
    auto it = std::upper_bound(r.more.begin(), r.more.end(), last,
                               [](int key, const auto& e) { return key < e.first; });
    return it == r.more.end() ? kMaxResourceNames : int{it->first};
  };
  while (true) {
    const int id = std::min(after(a), after(b));
    if (id == kMaxResourceNames) return -1;
    if (fn(static_cast<ResourceId>(id))) return id;
    last = id;
  }
}
// The same over one vector's ids.
template <typename Fn>
int FirstId(const Resources& r, Fn fn) {
  return FirstId(r, r, fn);
}

// Why a task's request `r` is not a valid GPU share, or "" when it is one
// or asks for no share: a share is 1..999 thousandths of one device
// (kGpuMilli), and a task asking for one asks for no whole GPU.
std::string GpuShareProblem(const Resources& r);
// Why a cluster file's node `allocatable` does not state shares as
// dlsched's model has them, or "": dlsched.io/gpu-milli absent, 0, or 1000
// per nvidia.com/gpu.
std::string NodeShareProblem(const Resources& allocatable);

// "cpu=2, memory=4Gi, nvidia.com/gpu=1" (non-zero entries only).
std::string FormatResources(const Resources& r);

}  // namespace dlsched::core
