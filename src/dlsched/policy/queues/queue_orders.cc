#include "dlsched/policy/queues/queue_orders.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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
// any a queue asks for or is guaranteed.
std::vector<core::ResourceId> Dims(const ClusterState& st,
                                   std::span<const core::Resources> requests) {
  std::vector<core::ResourceId> dims;
  auto add = [&](const core::Resources& r) {
    core::FirstId(r, [&](core::ResourceId id) {
      if (r[id] > 0 && std::find(dims.begin(), dims.end(), id) == dims.end()) dims.push_back(id);
      return false;
    });
  };
  add(st.Capacity());
  for (const core::Resources& r : requests) add(r);
  for (int q = 0; q < st.Quotas().NumQueues(); ++q) add(st.Quotas().Spec(q).guarantee);
  std::sort(dims.begin(), dims.end());
  return dims;
}

// Volcano's realCapability of each queue over `dims`: what the cluster
// has beyond every queue's guarantee, plus its own, at most its capability.
std::vector<std::vector<double>> RealCapability(const ClusterState& st,
                                                std::span<const core::ResourceId> dims) {
  const engine::QuotaBook& book = st.Quotas();
  std::vector<double> guaranteed(dims.size(), 0);
  for (int q = 0; q < book.NumQueues(); ++q) {
    for (size_t k = 0; k < dims.size(); ++k) {
      guaranteed[k] += static_cast<double>(book.Spec(q).guarantee[dims[k]]);
    }
  }
  std::vector<std::vector<double>> rc(book.NumQueues(), std::vector<double>(dims.size()));
  for (int q = 0; q < book.NumQueues(); ++q) {
    const core::QueueSpec& spec = book.Spec(q);
    for (size_t k = 0; k < dims.size(); ++k) {
      double v = std::max(0.0, static_cast<double>(st.Capacity()[dims[k]]) - guaranteed[k]) +
                 static_cast<double>(spec.guarantee[dims[k]]);
      for (const auto& [id, limit] : spec.capability) {
        if (id == dims[k]) v = std::min(v, static_cast<double>(limit));
      }
      rc[q][k] = v;
    }
  }
  return rc;
}

// Per queue, `shares` rounded down to whole units: the caps.
std::vector<core::ResourceLimits> Floor(const Shares& shares) {
  std::vector<core::ResourceLimits> caps(shares.size());
  for (size_t q = 0; q < shares.size(); ++q) {
    for (const auto& [id, amount] : shares[q]) {
      caps[q].emplace_back(id, static_cast<int64_t>(std::floor(amount + kEps)));
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

Shares ProportionDeserved(const ClusterState& st) {
  const engine::QuotaBook& book = st.Quotas();
  const int n = book.NumQueues();
  // What each queue asks for: what its jobs hold and its pending jobs ask.
  std::vector<core::Resources> request(n);
  std::vector<bool> has_jobs(n, false);
  for (int q = 0; q < n; ++q) {
    request[q] = book.Usage(q);
    has_jobs[q] = !request[q].IsZero();
  }
  std::vector<engine::JobIndex> pending;
  st.PendingJobs(&pending);
  for (const engine::JobIndex j : pending) {
    const engine::JobState& js = st.Job(j);
    if (js.queue < 0) continue;
    request[js.queue] += js.spec->Demand(js.target_workers);
    has_jobs[js.queue] = true;
  }
  // A running elastic job below its maximum asks for the rest, as
  // Volcano counts its pending pods (replicas above minAvailable).
  for (const engine::JobIndex j : st.JobsInPhase(core::JobPhase::kRunning)) {
    const engine::JobState& js = st.Job(j);
    if (js.queue < 0) continue;
    const core::RoleSpec& w = js.spec->role(core::Role::kWorker);
    const int more = w.max_replicas - js.placed_workers;
    if (more > 0) request[js.queue] += w.resources * more;
  }
  const std::vector<core::ResourceId> dims = Dims(st, request);
  const size_t d = dims.size();
  const std::vector<std::vector<double>> rc = RealCapability(st, dims);
  std::vector<std::vector<double>> deserved(n, std::vector<double>(d, 0));
  std::vector<bool> met(n, true);
  for (int q = 0; q < n; ++q) met[q] = !has_jobs[q];
  std::vector<double> tolerance(d);
  for (size_t k = 0; k < d; ++k) tolerance[k] = Tolerance(dims[k]);
  std::vector<double> remaining(d);
  for (size_t k = 0; k < d; ++k) remaining[k] = static_cast<double>(st.Capacity()[dims[k]]);
  for (int round = 0; round < 1000; ++round) {
    double weights = 0;
    for (int q = 0; q < n; ++q) weights += met[q] ? 0 : book.Spec(q).weight;
    if (weights <= 0) break;
    std::vector<double> increased(d, 0), decreased(d, 0);
    for (int q = 0; q < n; ++q) {
      if (met[q]) continue;
      const core::QueueSpec& spec = book.Spec(q);
      const std::vector<double> old = deserved[q];
      bool asked_met = true;
      bool unchanged = true;
      for (size_t k = 0; k < d; ++k) {
        double& v = deserved[q][k];
        v += remaining[k] * spec.weight / weights;
        v = std::min(v, rc[q][k]);
        v = std::min(v, static_cast<double>(request[q][dims[k]]));
        v = std::max(v, static_cast<double>(spec.guarantee[dims[k]]));
        if (static_cast<double>(request[q][dims[k]]) > v + tolerance[k]) asked_met = false;
        if (std::abs(v - old[k]) > tolerance[k]) unchanged = false;
        if (v > old[k]) {
          increased[k] += v - old[k];
        } else {
          decreased[k] += old[k] - v;
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
  Shares out(n);
  for (int q = 0; q < n; ++q) {
    if (!has_jobs[q]) continue;
    for (size_t k = 0; k < d; ++k) out[q].emplace_back(dims[k], deserved[q][k]);
  }
  return out;
}

std::vector<core::ResourceLimits> VolcanoProportionQueueOrder::Caps(const ClusterState& st) const {
  return Floor(ProportionDeserved(st));
}

engine::QueueKey VolcanoProportionQueueOrder::Key(const ClusterState& state,
                                                  const QueueHead& h) const {
  if (h.queue < 0) return {};
  const engine::QuotaBook& book = state.Quotas();
  return {-static_cast<double>(book.Spec(h.queue).priority),
          ShareOf(state, h.queue, book.CycleCap(h.queue), 0), 0, 0};
}

std::vector<core::ResourceLimits> VolcanoCapacityQueueOrder::Caps(const ClusterState& st) const {
  const std::vector<core::ResourceId> dims = Dims(st, {});
  const std::vector<std::vector<double>> rc = RealCapability(st, dims);
  Shares shares(rc.size());
  for (size_t q = 0; q < rc.size(); ++q) {
    for (size_t k = 0; k < dims.size(); ++k) shares[q].emplace_back(dims[k], rc[q][k]);
  }
  return Floor(shares);
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
