#include "dlsched/policy/queues/queue_orders.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dlsched/core/queue.h"
#include "dlsched/engine/cluster_state.h"

namespace dlsched::policy {

using engine::ClusterState;
using engine::QueueHead;

namespace {

double Priority(const ClusterState& st, const QueueHead& h) {
  return static_cast<double>(st.Job(h.job).spec->priority);
}

// A share divided by a weight: a weight of 0 makes any share infinite.
double Weighted(double share, double weight) {
  if (weight > 0) return share / weight;
  return share > 0 ? std::numeric_limits<double>::infinity() : 0;
}

// Rounding slack when shares become whole units.
constexpr double kEps = 1e-6;

// Below this an amount of resource `id` counts as none, as Volcano's 0.1
// of its units: millicores and bytes, thousandths of a device.
double Tolerance(core::ResourceId id) {
  return id == core::kCpu || id == core::kMemory ? 0.1 : 1e-4;
}

// The resources the Volcano shares are worked out over: the cluster's, and
// any a queue asks for (`asked`, the sum of what they ask) or is
// guaranteed.
std::vector<core::ResourceId> Dims(const ClusterState& st, core::Resources asked) {
  asked += st.Capacity();
  for (int q = 0; q < st.Quotas().NumQueues(); ++q) asked += st.Quotas().Spec(q).guarantee;
  std::vector<core::ResourceId> dims;
  core::FirstId(asked, [&](core::ResourceId id) {
    // Per-GPU-type lines (R@T) are Kueue's; Volcano shares R itself.
    if (asked[id] > 0 && !core::SplitFlavor(core::ResourceName(id))) dims.push_back(id);
    return false;
  });
  return dims;
}

// Volcano's realCapability of each queue over `dims`, queue q's amount of
// dims[k] at [q * dims.size() + k]: what the cluster has beyond every
// queue's guarantee, plus its own, at most its capability.
std::vector<double> RealCapability(const ClusterState& st, std::span<const core::ResourceId> dims) {
  const engine::QuotaBook& book = st.Quotas();
  const size_t d = dims.size();
  std::vector<double> guaranteed(d, 0);
  for (int q = 0; q < book.NumQueues(); ++q) {
    for (size_t k = 0; k < d; ++k) {
      guaranteed[k] += static_cast<double>(book.Spec(q).guarantee[dims[k]]);
    }
  }
  std::vector<double> rc(static_cast<size_t>(book.NumQueues()) * d);
  for (int q = 0; q < book.NumQueues(); ++q) {
    const core::QueueSpec& spec = book.Spec(q);
    for (size_t k = 0; k < d; ++k) {
      double v = std::max(0.0, static_cast<double>(st.Capacity()[dims[k]]) - guaranteed[k]) +
                 static_cast<double>(spec.guarantee[dims[k]]);
      for (const auto& [id, limit] : spec.capability) {
        if (id == dims[k]) v = std::min(v, static_cast<double>(limit));
      }
      rc[static_cast<size_t>(q) * d + k] = v;
    }
  }
  return rc;
}

// Amounts per queue over `dims`, queue q's of dims[k] at
// [q * dims.size() + k]; `has[q]` false for a queue that has none.
struct Table {
  std::vector<core::ResourceId> dims;
  std::vector<double> amount;
  std::vector<bool> has;
};

// Each row of `t` rounded down to whole units: the caps.
std::vector<core::ResourceLimits> Floor(const Table& t) {
  const size_t d = t.dims.size();
  std::vector<core::ResourceLimits> caps(t.has.size());
  for (size_t q = 0; q < t.has.size(); ++q) {
    if (!t.has[q]) continue;
    caps[q].reserve(d);
    for (size_t k = 0; k < d; ++k) {
      caps[q].emplace_back(t.dims[k], static_cast<int64_t>(std::floor(t.amount[q * d + k] + kEps)));
    }
  }
  return caps;
}

// The largest, over `cap`'s resources with some amount, of what queue `q`
// holds over it; `none` when it has none.
double ShareOf(const ClusterState& st, int q, const core::ResourceLimits& cap, double none) {
  double share = -1;
  for (const auto& [id, amount] : cap) {
    if (amount <= 0) continue;
    share = std::max(share,
                     static_cast<double>(st.Quotas().Usage(q)[id]) / static_cast<double>(amount));
  }
  return share < 0 ? none : share;
}

}  // namespace

engine::QueueKey NoQueueOrder::Key(const ClusterState& state, const QueueHead& head) const {
  (void)state;
  (void)head;
  return {};  // the position decides
}

engine::QueueKey KueueQueueOrder::Key(const ClusterState& state, const QueueHead& h) const {
  const bool borrows = h.queue >= 0 && state.Quotas().Borrows(h.queue, h.need);
  return {borrows ? 1.0 : 0.0, -Priority(state, h), 0, 0};
}

engine::QueueKey KueueFairSharingQueueOrder::Key(const ClusterState& state,
                                                 const QueueHead& h) const {
  if (h.queue < 0) return {0, 0, 0, -Priority(state, h)};
  const engine::QuotaBook& book = state.Quotas();
  const double share = book.DominantShare(h.queue, h.need);
  // Two queues of weight 0 that borrow (both infinite) compare unweighted.
  return {book.Borrows(h.queue, h.need) ? 1.0 : 0.0, Weighted(share, book.Spec(h.queue).weight),
          share, -Priority(state, h)};
}

engine::QueueKey DrfQueueOrder::Key(const ClusterState& state, const QueueHead& h) const {
  if (h.queue < 0) return {-1, -Priority(state, h), 0, 0};  // outside the shares: first
  const engine::QuotaBook& book = state.Quotas();
  const core::Resources& capacity = state.Capacity();
  const core::Resources& usage = book.Usage(h.queue);
  double dominant = 0;
  core::FirstId(capacity, [&](core::ResourceId id) {
    if (capacity[id] > 0) {
      dominant =
          std::max(dominant, static_cast<double>(usage[id]) / static_cast<double>(capacity[id]));
    }
    return false;
  });
  return {Weighted(dominant, book.Spec(h.queue).weight), -Priority(state, h), 0, 0};
}

namespace {

// Volcano's deserved shares: each queue's by weight, capped at what it asks
// for and its real capability, at least its guarantee.
Table ProportionTable(const ClusterState& st) {
  const engine::QuotaBook& book = st.Quotas();
  const int n = book.NumQueues();
  // What each queue asks for: what its jobs hold, what its pending jobs
  // ask, and what its running elastic jobs below their maximum would take
  // (Volcano counts their pending pods, the replicas above minAvailable).
  std::vector<core::Resources> request(n);
  Table t;
  t.has.assign(n, false);
  core::Resources all;
  for (int q = 0; q < n; ++q) {
    request[q] = book.Usage(q);
    t.has[q] = !request[q].IsZero();
    request[q] += st.ElasticRest(q);
  }
  std::vector<engine::JobIndex> pending;
  st.PendingJobs(&pending);
  for (const engine::JobIndex j : pending) {
    const engine::JobState& js = st.Job(j);
    if (js.queue < 0) continue;
    request[js.queue] += js.spec->Demand(js.target_workers);
    t.has[js.queue] = true;
  }
  for (int q = 0; q < n; ++q) all += request[q];
  t.dims = Dims(st, std::move(all));
  const size_t d = t.dims.size();
  const std::vector<double> rc = RealCapability(st, t.dims);
  const size_t cells = static_cast<size_t>(n) * d;
  std::vector<double>& deserved = t.amount;
  deserved.assign(cells, 0);
  std::vector<double> asked(cells), least(cells);
  for (int q = 0; q < n; ++q) {
    for (size_t k = 0; k < d; ++k) {
      asked[static_cast<size_t>(q) * d + k] = static_cast<double>(request[q][t.dims[k]]);
      least[static_cast<size_t>(q) * d + k] =
          static_cast<double>(book.Spec(q).guarantee[t.dims[k]]);
    }
  }
  std::vector<bool> met(n, true);
  for (int q = 0; q < n; ++q) met[q] = !t.has[q];
  std::vector<double> tolerance(d);
  for (size_t k = 0; k < d; ++k) tolerance[k] = Tolerance(t.dims[k]);
  std::vector<double> remaining(d);
  for (size_t k = 0; k < d; ++k) remaining[k] = static_cast<double>(st.Capacity()[t.dims[k]]);
  std::vector<double> increased(d), decreased(d);
  for (int round = 0; round < 1000; ++round) {
    double weights = 0;
    for (int q = 0; q < n; ++q) weights += met[q] ? 0 : book.Spec(q).weight;
    if (weights <= 0) break;
    std::fill(increased.begin(), increased.end(), 0);
    std::fill(decreased.begin(), decreased.end(), 0);
    for (int q = 0; q < n; ++q) {
      if (met[q]) continue;
      const double share = book.Spec(q).weight / weights;
      bool asked_met = true;
      bool unchanged = true;
      for (size_t k = 0; k < d; ++k) {
        const size_t i = static_cast<size_t>(q) * d + k;
        const double old = deserved[i];
        double v = old + remaining[k] * share;
        v = std::min(v, rc[i]);
        v = std::min(v, asked[i]);
        v = std::max(v, least[i]);
        deserved[i] = v;
        if (asked[i] > v + tolerance[k]) asked_met = false;
        if (std::abs(v - old) > tolerance[k]) unchanged = false;
        if (v > old) {
          increased[k] += v - old;
        } else {
          decreased[k] += old - v;
        }
      }
      met[q] = asked_met || unchanged;
    }
    bool empty = true;
    bool same = true;
    for (size_t k = 0; k < d; ++k) {
      const double next = std::max(0.0, remaining[k] + decreased[k] - increased[k]);
      if (next > tolerance[k]) empty = false;
      if (std::abs(next - remaining[k]) > tolerance[k]) same = false;
      remaining[k] = next;
    }
    if (empty || same) break;
  }
  return t;
}

}  // namespace

Shares ProportionDeserved(const ClusterState& st) {
  const Table t = ProportionTable(st);
  const size_t d = t.dims.size();
  Shares out(t.has.size());
  for (size_t q = 0; q < t.has.size(); ++q) {
    if (!t.has[q]) continue;
    for (size_t k = 0; k < d; ++k) out[q].emplace_back(t.dims[k], t.amount[q * d + k]);
  }
  return out;
}

std::vector<core::ResourceLimits> VolcanoProportionQueueOrder::Caps(const ClusterState& st) const {
  return Floor(ProportionTable(st));
}

engine::QueueKey VolcanoProportionQueueOrder::Key(const ClusterState& state,
                                                  const QueueHead& h) const {
  if (h.queue < 0) return {};
  const engine::QuotaBook& book = state.Quotas();
  return {-static_cast<double>(book.Spec(h.queue).priority),
          ShareOf(state, h.queue, book.CycleCap(h.queue), 0), 0, 0};
}

std::vector<core::ResourceLimits> VolcanoCapacityQueueOrder::Caps(const ClusterState& st) const {
  Table t;
  t.dims = Dims(st, {});
  t.amount = RealCapability(st, t.dims);
  t.has.assign(static_cast<size_t>(st.Quotas().NumQueues()), true);
  return Floor(t);
}

engine::QueueKey VolcanoCapacityQueueOrder::Key(const ClusterState& state,
                                                const QueueHead& h) const {
  if (h.queue < 0) return {};
  const engine::QuotaBook& book = state.Quotas();
  const core::Resources& deserved = book.Spec(h.queue).deserved;
  core::ResourceLimits limits;
  core::FirstId(deserved, [&](core::ResourceId id) {
    if (deserved[id] > 0) limits.emplace_back(id, deserved[id]);
    return false;
  });
  // A queue with nothing deserved is best effort: it counts as full, and
  // goes after one with a share.
  return {-static_cast<double>(book.Spec(h.queue).priority), ShareOf(state, h.queue, limits, 1.0),
          limits.empty() ? 1.0 : 0.0, 0};
}

}  // namespace dlsched::policy
