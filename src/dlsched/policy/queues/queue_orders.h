#pragma once

#include <span>
#include <utility>
#include <vector>

#include "dlsched/engine/extension_points.h"

// The queue orders (engine::QueueOrder, docs/queues.md): which team's job
// goes next, as the batch schedulers teams run decide it.

namespace dlsched::policy {

// The profile's JobOrder across queues too: no interleaving.
class NoQueueOrder final : public engine::QueueOrder {
 public:
  bool Interleaves() const override { return false; }
  engine::QueueKey Key(const engine::ClusterState& state,
                       const engine::QueueHead& head) const override;
};

// Kueue's classical order of the queues' heads (its scheduler without fair
// sharing): a head its queue can take without borrowing first, then the
// higher job priority, then the earlier in the JobOrder.
class KueueQueueOrder final : public engine::QueueOrder {
 public:
  engine::QueueKey Key(const engine::ClusterState& state,
                       const engine::QueueHead& head) const override;
};

// Kueue's fair sharing (a cohort's tournament): a head its queue can take
// without borrowing first, then the lowest dominant resource share of its
// queue once it runs (QuotaBook::DominantShare) divided by the queue's
// weight (a weight of 0 that borrows: infinite), then priority, then the
// JobOrder.
class KueueFairSharingQueueOrder final : public engine::QueueOrder {
 public:
  engine::QueueKey Key(const engine::ClusterState& state,
                       const engine::QueueHead& head) const override;
};

// Dominant resource fairness across queues (Ghodsi et al., 2011): the head
// of the queue whose dominant share of the cluster (the largest, over the
// resources, of what its jobs hold over the cluster's capacity) divided by
// its weight is the lowest goes next; then priority, then the JobOrder.
// Jobs of no declared queue are outside the shares and go first.
class DrfQueueOrder final : public engine::QueueOrder {
 public:
  engine::QueueKey Key(const engine::ClusterState& state,
                       const engine::QueueHead& head) const override;
};

// Volcano's proportion plugin: each queue with jobs deserves a share of
// the cluster by weight, water-filled: no more than it asks for (what its
// jobs hold, what its pending jobs ask, and the workers its running
// elastic jobs could still grow by), its capability and what the
// other queues' guarantees leave, and at least its guarantee. A queue
// never holds more than it deserves this cycle (its cap). Queues of higher
// priority go first, then the one holding the least of what it deserves.
class VolcanoProportionQueueOrder final : public engine::QueueOrder {
 public:
  engine::QueueKey Key(const engine::ClusterState& state,
                       const engine::QueueHead& head) const override;
  std::vector<core::ResourceLimits> Caps(const engine::ClusterState& state) const override;
};

// Volcano's capacity plugin: each queue's `deserved` is configured; a
// queue may hold up to its real capability (its capability, and what the
// other queues' guarantees leave), beyond its deserved share. Queues of
// higher priority go first, then the one holding the least of what it
// deserves (a queue with nothing deserved counts as holding all of it),
// then one with a deserved share.
class VolcanoCapacityQueueOrder final : public engine::QueueOrder {
 public:
  engine::QueueKey Key(const engine::ClusterState& state,
                       const engine::QueueHead& head) const override;
  std::vector<core::ResourceLimits> Caps(const engine::ClusterState& state) const override;
};

// Amounts per queue, per resource, in canonical units (not yet whole).
using Shares = std::vector<std::vector<std::pair<core::ResourceId, double>>>;

// Volcano's deserved shares (VolcanoProportionQueueOrder::Caps) of each
// queue (empty for one without jobs).
Shares ProportionDeserved(const engine::ClusterState& state);

}  // namespace dlsched::policy
