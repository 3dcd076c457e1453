#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// Amounts of some resources, ascending by id; a resource not listed is not
// limited (unlike Resources, where a missing id means 0).
using ResourceLimits = std::vector<std::pair<ResourceId, int64_t>>;

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
  friend bool operator==(const QueueSpec&, const QueueSpec&) = default;

  const QuotaLine* Line(ResourceId id) const {
    for (const QuotaLine& l : quota) {
      if (l.id == id) return &l;
    }
    return nullptr;
  }
};

}  // namespace dlsched::core
