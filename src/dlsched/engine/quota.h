#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlsched/core/queue.h"
#include "dlsched/core/resources.h"

namespace dlsched::engine {

// The queues' quotas and what each queue's placed tasks use, with Kueue's
// arithmetic for a cohort of queues (a flat cohort, no quota of its own):
//   local(q)     = nominal - lendingLimit (0 without a lending limit): kept
//                  for q alone;
//   pool(c)      = sum over c's queues of (nominal - local): what they lend;
//   used(c)      = sum over c's queues of max(0, usage - local): usage inside
//                  a queue's local part does not reach the cohort;
//   Available(q) = max(0, local - usage)
//                  + min(pool - used(c),
//                        nominal - local - max(0, usage - local) + borrowingLimit)
//                  (the min only with a borrowing limit);
//   MaxCapacity(q) = local + pool, at most nominal + borrowingLimit.
// A queue without a cohort is a cohort of its own: Available = nominal -
// usage. Only the resources a queue's quota lists are counted; any other
// resource is not limited by the quota. On top of the quota, a queue's
// capability (QueueSpec::capability) and this cycle's cap (SetCycleCaps)
// limit its usage outright.
class QuotaBook {
 public:
  QuotaBook() = default;
  explicit QuotaBook(std::span<const core::QueueSpec> queues);

  bool Empty() const { return queues_.empty(); }
  int NumQueues() const { return static_cast<int>(queues_.size()); }
  // The queue named `name`, or -1.
  int Find(std::string_view name) const;
  const core::QueueSpec& Spec(int q) const { return queues_[q].spec; }
  // What queue `q`'s placed tasks request, every resource (listed or not).
  const core::Resources& Usage(int q) const { return queues_[q].usage; }
  // How many placed tasks queue `q`'s jobs hold.
  int64_t Tasks(int q) const { return queues_[q].tasks; }
  // Counts the changes of queue `q`'s usage; of every queue's.
  uint64_t Version(int q) const { return queues_[q].version; }
  uint64_t TotalVersion() const { return total_version_; }

  // Queue `q`'s tasks took `r` more / gave `r` back (one task each).
  void Add(int q, const core::Resources& r) { Change(q, r, 1); }
  void Sub(int q, const core::Resources& r) { Change(q, r, -1); }

  // How much more of resource `id` queue `q` may take now (0 when it is
  // over; a resource its quota does not list: INT64_MAX).
  int64_t Available(int q, core::ResourceId id) const;
  // The most of `id` queue `q` could ever hold, whatever the others use.
  int64_t MaxCapacity(int q, core::ResourceId id) const;
  // True when queue `q` taking `extra` more would hold more than its
  // nominal quota of some resource its quota lists (it would borrow).
  bool Borrows(int q, const core::Resources& extra) const;
  // Kueue's dominant resource share of queue `q` with `extra` more: the
  // largest, over the resources its quota lists that its cohort lends,
  // of (usage + extra - nominal, if > 0) * 1000 / what the cohort lends; 0
  // for a queue without a cohort or not borrowing. Not divided by weight.
  double DominantShare(int q, const core::Resources& extra) const;

  // True when queue `q` may take `r` more now: within its quota (above),
  // its capability and, if `capped`, this cycle's cap.
  bool Admits(int q, const core::Resources& r, bool capped = true) const;

  // This cycle's limit on each queue's usage beyond its quota and
  // capability (a queue order's: Volcano's deserved share): caps[q] for
  // queue q, none when empty. Returns true when some queue may now hold
  // more than under the caps before (room the wait memos did not see).
  bool SetCycleCaps(std::vector<core::ResourceLimits> caps);
  // Queue `q`'s cap this cycle (empty: none).
  const core::ResourceLimits& CycleCap(int q) const { return caps_[q]; }
  // Why queue `q` may not take `r` more now, or nullopt:
  // "queue team-a's quota: needs 4 nvidia.com/gpu, 2 available (nominal 8,
  // in use 6, cohort research lends 0)".
  std::optional<std::string> Refusal(int q, const core::Resources& r, bool capped = true) const;
  // Why queue `q` could never hold `r`, or nullopt.
  std::optional<std::string> NeverHolds(int q, const core::Resources& r) const;

 private:
  struct Line {
    core::ResourceId id = 0;
    int64_t nominal = 0;
    int64_t local = 0;             // kept for the queue alone
    int64_t borrowing_limit = -1;  // -1: none
    int64_t usage = 0;
    int pool = 0;  // index into its cohort's pools
  };
  struct Queue {
    core::QueueSpec spec;
    int cohort = 0;
    std::vector<Line> lines;
    core::Resources usage;
    int64_t tasks = 0;
    uint64_t version = 0;
  };
  struct Pool {
    core::ResourceId id = 0;
    int64_t lendable = 0;
    int64_t used = 0;
  };
  struct Cohort {
    std::string name;  // "" for a queue's own
    std::vector<Pool> pools;
  };
  void Change(int q, const core::Resources& r, int sign);
  int64_t LineAvailable(const Queue& q, const Line& l) const;
  std::string Words(int q, const Line& l, bool usage) const;

  // Why queue `q` may not take `r` more under `limits` (its capability or
  // cap, named `what`), or nullopt.
  std::optional<std::string> OverLimit(int q, const core::Resources& r,
                                       const core::ResourceLimits& limits,
                                       std::string_view what) const;

  std::vector<Queue> queues_;
  std::vector<Cohort> cohorts_;
  std::vector<core::ResourceLimits> caps_;
  uint64_t total_version_ = 0;
  std::unordered_map<std::string, int> by_name_;
};

}  // namespace dlsched::engine
