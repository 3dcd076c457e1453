#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/core/resources.h"

namespace dlsched::core {

// One resource of a queue's quota (Kueue's per-resource quota of a
// ClusterQueue): what the queue is entitled to, and how much it may borrow
// from and lend to the other queues of its cohort.
struct QuotaLine {
  ResourceId id = kGpu;
  int64_t nominal = 0;  // canonical units (millicores, bytes, devices)
  // At most this much above nominal, borrowed from the cohort; nullopt:
  // whatever the cohort has unused.
  std::optional<int64_t> borrowing_limit;
  // At most this much of its unused nominal lent to the cohort; the rest
  // (nominal - lending limit) is kept for the queue alone. nullopt: all of it.
  std::optional<int64_t> lending_limit;
  friend bool operator==(const QuotaLine&, const QuotaLine&) = default;
};

// A quota line for one GPU type, Kueue's resource flavor: the quota key
// "R@T" (e.g. "nvidia.com/gpu@v100") limits resource R on the nodes whose
// GPU type (kGpuTypeLabel) is T. A task of R on such a node counts against
// both R's line and R@T's; a queue with a line R@T for some type takes R
// only on nodes of the types it lists.
struct FlavorKey {
  std::string_view resource;  // R
  std::string_view gpu_type;  // T
};
// The parts of `name` when it has the form R@T (one '@', both parts
// non-empty), else nullopt.
std::optional<FlavorKey> SplitFlavor(std::string_view name);

// Amounts of some resources, ascending by id; a resource not listed is not
// limited (unlike Resources, where a missing id means 0).
using ResourceLimits = std::vector<std::pair<ResourceId, int64_t>>;

// Which running jobs a waiting job may preempt (Kueue's ClusterQueue
// preemption policies): none; those of lower priority; those of lower
// priority or of equal priority submitted later than it; any.
enum class PreemptionPolicy : uint8_t { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };
// "Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any".
std::string_view PreemptionPolicyName(PreemptionPolicy p);

// The policy fields of a queue's `preemption`, each allowing some of the
// policies (as Kueue's).
enum class PreemptionField : uint8_t { kWithinQueue, kReclaimWithinCohort, kBorrowWithinCohort };
inline constexpr PreemptionField kPreemptionFields[] = {PreemptionField::kWithinQueue,
                                                        PreemptionField::kReclaimWithinCohort,
                                                        PreemptionField::kBorrowWithinCohort};
// "withinQueue", "reclaimWithinCohort", "borrowWithinCohort".
std::string_view PreemptionFieldKey(PreemptionField f);
// The policy named `name` if field `f` allows it, else nullopt.
std::optional<PreemptionPolicy> ParsePreemptionPolicy(PreemptionField f, std::string_view name);
// What field `f` allows, worded: "Never, LowerPriority or Any".
std::string AllowedPolicies(PreemptionField f);

// How a queue's jobs may preempt (the QueueReclaim preemptor; Kueue's
// spec.preemption). A field not given takes the preemptor's default.
struct QueuePreemption {
  // Jobs of the same queue: Never, LowerPriority or LowerOrNewerEqualPriority.
  std::optional<PreemptionPolicy> within_queue;
  // Jobs of the cohort's other queues that borrow: Never, LowerPriority or Any.
  std::optional<PreemptionPolicy> reclaim_within_cohort;
  // Whether a job that would borrow after the preemption may still preempt
  // borrowers' jobs of lower priority: Never or LowerPriority; with
  // max_priority_threshold, only those of at most that priority.
  std::optional<PreemptionPolicy> borrow_within_cohort;
  std::optional<PriorityClass> max_priority_threshold;
  std::optional<PreemptionPolicy>& Field(PreemptionField f) {
    return f == PreemptionField::kWithinQueue           ? within_queue
           : f == PreemptionField::kReclaimWithinCohort ? reclaim_within_cohort
                                                        : borrow_within_cohort;
  }
  const std::optional<PreemptionPolicy>& Field(PreemptionField f) const {
    return const_cast<QueuePreemption*>(this)->Field(f);
  }
  friend bool operator==(const QueuePreemption&, const QueuePreemption&) = default;
  bool Empty() const { return *this == QueuePreemption{}; }
};

// A team's share of the cluster (Kueue's ClusterQueue, Volcano's Queue).
// Jobs name their queue (JobSpec::queue). A queue limits only the resources
// its quota lists: a job in it may use as much of any other resource as the
// nodes have. Queues of one cohort lend each other their unused nominal
// quota; a queue without a cohort never exceeds its nominal quota.
struct QueueSpec {
  std::string name;
  std::string cohort;  // "" : none
  // Its share when queues are ordered by fair share (higher: more).
  double weight = 1;
  // The quota for any GPU type, one line per resource, ascending by id.
  std::vector<QuotaLine> quota;
  // Volcano's Queue fields, read by the Volcano queue orders:
  // queues of higher priority go first;
  int32_t priority = 0;
  // never more than this (a hard cap, whatever the order);
  ResourceLimits capability;
  // reserved for the queue: kept out of every other queue's capability;
  Resources guarantee;
  // its share of the cluster (VolcanoCapacity; VolcanoProportion computes
  // one from the weights).
  Resources deserved;
  QueuePreemption preemption;
  friend bool operator==(const QueueSpec&, const QueueSpec&) = default;

  const QuotaLine* Line(ResourceId id) const {
    for (const QuotaLine& l : quota) {
      if (l.id == id) return &l;
    }
    return nullptr;
  }
};

// A cohort of queues with a quota of its own or a parent (Kueue's Cohort
// object; the cluster file's `cohorts`). A cohort that queues name but the
// file does not declare has no quota and no parent. A cohort lends its
// parent its own quota plus what its members lend it, less what its
// lending limits keep back; it borrows from its parent up to its borrowing
// limits. Only a cohort with a parent may have borrowing or lending
// limits.
struct CohortSpec {
  std::string name;
  std::string parent;  // "": a root
  // Its share when cohorts are ordered by fair share (higher: more).
  double weight = 1;
  std::vector<QuotaLine> quota;  // ascending by id
  friend bool operator==(const CohortSpec&, const CohortSpec&) = default;
};

}  // namespace dlsched::core
