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
// arithmetic for a tree of cohorts (Kueue's hierarchical cohorts). Every
// node (a queue, or a cohort) has a quota per resource (a cohort's own
// may be empty) and, unless it is a root, a parent cohort:
//   subtree(n) = n's nominal + sum over its children c of
//                (subtree(c) - local(c));
//   local(n)   = max(0, subtree(n) - lendingLimit) (0 without a lending
//                limit): kept for n's subtree alone;
//   usage(n)   = a queue's own usage; a cohort's, sum over its children c
//                of max(0, usage(c) - local(c)): usage inside a child's
//                local part does not reach the parent;
//   Available(n) = subtree - usage for a root, else
//                max(0, local - usage)
//                + min(Available(parent),
//                      subtree - local - max(0, usage - local) + borrowingLimit)
//                  (the min only with a borrowing limit);
//   MaxCapacity(n) = subtree for a root, else local + MaxCapacity(parent),
//                at most subtree + borrowingLimit.
// A flat cohort (a root without quota of its own) lends what its queues
// do not keep back; a queue without a cohort is a root: Available =
// nominal - usage. Only the resources a queue's quota lists are counted;
// any other resource is not limited by the quota. On top of the quota, a
// queue's capability (QueueSpec::capability) and this cycle's cap
// (SetCycleCaps) limit its usage outright.
//
// Nodes are numbered: the queues first (node q is queue q), then the
// cohorts.
class QuotaBook {
 public:
  QuotaBook() = default;
  // `cohorts`: those declared (a quota of their own or a parent); a
  // cohort named only by a queue or as a parent is added, empty.
  explicit QuotaBook(std::span<const core::QueueSpec> queues,
                     std::span<const core::CohortSpec> cohorts = {});

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

  // Versions go on from `v`: a book that replaces one whose TotalVersion
  // was `v` counts on from there, so no version repeats.
  void ContinueVersions(uint64_t v) {
    total_version_ = v + 1;
    for (Queue& q : queues_) q.version = v + 1;
  }

  // Every queue's and cohort's usage back to none (each version moves on).
  void ClearUsage();
  // The resources node `n` (a queue or a cohort) has a line for: a
  // queue's own, a cohort's own and its members'.
  std::vector<core::ResourceId> LineIds(int n) const {
    std::vector<core::ResourceId> ids;
    for (const Line& l : nodes_[n].lines) ids.push_back(l.id);
    return ids;
  }

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
  // Kueue's dominant resource share of node `n` (a queue or a cohort)
  // when queue `q` (in n's subtree, or -1) takes `extra` more (gives back,
  // when negative): the largest, over the resources n counts, of
  // (usage - subtree, if > 0) * 1000 / MaxCapacity(parent); 0 for a root
  // or a node not borrowing. Not divided by weight.
  double DominantShare(int n, int q, const core::Resources& extra) const;
  double DominantShare(int q, const core::Resources& extra) const {
    return DominantShare(q, q, extra);
  }

  // The tree: how many nodes, a node's parent (-1: a root), name and
  // fair-sharing weight.
  int NumNodes() const { return static_cast<int>(nodes_.size()); }
  int Parent(int n) const { return nodes_[n].parent; }
  // Node `n`'s children, ascending.
  const std::vector<int>& Children(int n) const { return children_[n]; }
  const std::string& NodeName(int n) const { return nodes_[n].name; }
  double Weight(int n) const { return nodes_[n].weight; }
  // The lowest cohort over both `a` and `b`, or -1 (different trees).
  int CommonAncestor(int a, int b) const;
  // True when node `n` holds more than its subtree quota of one of `ids`
  // (it borrows from its parent).
  bool Over(int n, std::span<const core::ResourceId> ids) const;
  // Kueue's hierarchical advantage: true when queue `q` taking `r` more
  // fits within the quota of q or of a cohort over q below `below` (the
  // part that fits in each node's local quota taken off on the way up).
  bool FitsBelow(int q, const core::Resources& r, int below) const;

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
    int64_t nominal = 0;           // its own
    int64_t subtree = 0;           // its own, and what its children lend it
    int64_t local = 0;             // kept for its subtree alone
    int64_t borrowing_limit = -1;  // -1: none
    int64_t lending_limit = -1;    // -1: none
    int64_t usage = 0;
  };
  struct Node {
    std::string name;
    int parent = -1;
    double weight = 1;
    std::vector<Line> lines;  // ascending by id
    const Line* Find(core::ResourceId id) const;
    Line* Find(core::ResourceId id) {
      return const_cast<Line*>(static_cast<const Node*>(this)->Find(id));
    }
  };
  struct Queue {
    core::QueueSpec spec;
    core::Resources usage;
    int64_t tasks = 0;
    uint64_t version = 0;
  };
  void Change(int q, const core::Resources& r, int sign);
  int64_t LineAvailable(int n, core::ResourceId id) const;
  int64_t LineMax(int n, core::ResourceId id) const;
  // Node `n`'s usage of `id` once queue `q` under it takes `extra` more.
  int64_t UsageWith(int n, int q, core::ResourceId id, int64_t extra) const;
  std::string Words(int q, const Line& l, bool usage) const;

  // Why queue `q` may not take `r` more under `limits` (its capability or
  // cap, named `what`), or nullopt.
  std::optional<std::string> OverLimit(int q, const core::Resources& r,
                                       const core::ResourceLimits& limits,
                                       std::string_view what) const;

  std::vector<Queue> queues_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> children_;  // by node
  std::vector<core::ResourceLimits> caps_;
  uint64_t total_version_ = 0;
  std::unordered_map<std::string, int> by_name_;
};

}  // namespace dlsched::engine
