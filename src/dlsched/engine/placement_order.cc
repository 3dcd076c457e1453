#include "dlsched/engine/placement.h"

#include <algorithm>
#include <vector>

#include "dlsched/engine/profile.h"

// Jobs in the profile's order (OrderJobs), and the pending queue kept in
// order between cycles when the order's keys are static (OrderPending).

namespace dlsched::engine {

namespace {

struct OrderedJob {
  double key;
  core::Time submit;
  JobIndex job;
};

bool Before(const OrderedJob& a, const OrderedJob& b) {
  if (a.key != b.key) return a.key < b.key;
  if (a.submit != b.submit) return a.submit < b.submit;
  return a.job < b.job;
}

// Sorts `entries` (Before: a total order, so the result does not depend on
// how it is reached), starting from the last sort's order (Memos::
// LastOrder): the jobs it had in their places there, the others sorted
// and merged in. From one cycle to the next few jobs change places, so an
// insertion sort of the old ones moves few; past a budget of moves it
// gives up for a full sort.
void SortFromLastOrder(Memos::LastOrder& last, std::vector<OrderedJob>& entries) {
  const size_t n = entries.size();
  std::vector<int32_t> at(last.size, -1);  // place in the last order -> entry
  std::vector<OrderedJob> old;
  std::vector<OrderedJob> fresh;
  old.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto j = static_cast<size_t>(entries[i].job);
    if (j < last.place.size() && last.place[j].first == last.generation && last.generation != 0 &&
        last.place[j].second < last.size) {
      at[last.place[j].second] = static_cast<int32_t>(i);
    } else {
      fresh.push_back(entries[i]);
    }
  }
  for (const int32_t i : at) {
    if (i >= 0) old.push_back(entries[static_cast<size_t>(i)]);
  }
  size_t budget = 4 * n + 64;  // element moves
  for (size_t i = 1; i < old.size() && budget > 0; ++i) {
    const OrderedJob x = old[i];
    size_t k = i;
    for (; k > 0 && Before(x, old[k - 1]) && budget > 0; --k, --budget) old[k] = old[k - 1];
    old[k] = x;
    if (budget == 0) {
      std::sort(old.begin(), old.end(), Before);
      break;
    }
  }
  std::sort(fresh.begin(), fresh.end(), Before);
  std::merge(old.begin(), old.end(), fresh.begin(), fresh.end(), entries.begin(), Before);
  // This order, for the next sort.
  if (++last.generation == 0) {
    last.generation = 1;
    last.place.assign(last.place.size(), {0, 0});
  }
  last.size = static_cast<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const auto j = static_cast<size_t>(entries[i].job);
    if (j >= last.place.size()) last.place.resize(j + 1);
    last.place[j] = {last.generation, static_cast<uint32_t>(i)};
  }
}

}  // namespace

void OrderJobs(const CycleContext& ctx, std::vector<JobIndex>* jobs,
               std::vector<double>* keys_out) {
  const ClusterState& st = ctx.state();
  std::vector<double> keys(jobs->size());
  ctx.profile.order->Keys(st, *jobs, ctx.now, keys);
  // Sorted as one contiguous array: no job's spec is read during the sort.
  std::vector<OrderedJob> entries(jobs->size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const JobIndex j = (*jobs)[i];
    entries[i] = {keys[i], st.Job(j).spec->submit_time, j};
  }
  SortFromLastOrder(ctx.memos.last_order(), entries);
  for (size_t i = 0; i < entries.size(); ++i) (*jobs)[i] = entries[i].job;
  if (keys_out != nullptr) {
    keys_out->resize(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) (*keys_out)[i] = entries[i].key;
  }
}

// Up to this many jobs leaving or entering the kept order are found by a
// binary search each; more, by a pass over the whole order.
constexpr size_t kFewChanges = 8;

std::span<Memos::OrderEntry> UpdatePendingOrder(CycleContext& ctx) {
  const ClusterState& st = ctx.state();
  Memos& memos = ctx.memos;
  using Entry = Memos::OrderEntry;
  auto before = [](const Entry& a, const Entry& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.job < b.job;
  };
  auto pending_phase = [&](JobIndex j) {
    const JobState& js = st.Job(j);
    return !js.removed && InPendingPhase(js.phase);
  };
  Memos::PendingOrder& order = memos.pending_order();
  std::vector<Entry>& kept = order.entries;
  // The jobs that left since go, read from the cache's list rather than
  // from every kept job's state. One that left and came back goes too and
  // is merged in again below, unmarked: its reason changed meanwhile.
  if (order.valid && !st.LeftPending().empty()) {
    std::vector<JobIndex> gone;
    for (JobIndex j : st.LeftPending()) {
      Memos::JobMemos& m = memos.Job(j);
      if (!m.in_pending_order) continue;  // listed twice, or never merged in
      m.in_pending_order = false;
      gone.push_back(j);
    }
    if (gone.size() <= kFewChanges) {
      // Found by their keys (static: the same as when they came in).
      std::vector<double> gone_keys(gone.size());
      ctx.profile.order->Keys(st, gone, ctx.now, gone_keys);
      for (size_t i = 0; i < gone.size(); ++i) {
        const Entry e{gone_keys[i], st.Job(gone[i]).spec->submit_time, gone[i]};
        auto it = std::lower_bound(kept.begin(), kept.end(), e, before);
        if (it == kept.end() || it->job != gone[i]) {
          // Not where its key puts it (an order whose keys are not static
          // after all): looked for.
          it = std::find_if(kept.begin(), kept.end(),
                            [&](const Entry& k) { return k.job == gone[i]; });
        }
        if (it != kept.end()) kept.erase(it);
      }
    } else {
      std::sort(gone.begin(), gone.end());
      std::erase_if(kept, [&](const Entry& e) {
        return std::binary_search(gone.begin(), gone.end(), e.job);
      });
    }
  }
  // The jobs to merge in: every one in a pending phase when the order is
  // new, else those that entered one since and are not in it.
  std::vector<JobIndex> added;
  if (!order.valid) {
    for (core::JobPhase p :
         {core::JobPhase::kWaiting, core::JobPhase::kStarving, core::JobPhase::kStandby}) {
      const auto& in = st.JobsInPhase(p);
      added.insert(added.end(), in.begin(), in.end());
    }
    order.valid = true;
  } else {
    // A job may have entered more than once since (Waiting, then Standby).
    for (JobIndex j : st.EnteredPending()) {
      if (memos.Job(j).in_pending_order || !pending_phase(j)) continue;
      memos.Job(j).in_pending_order = true;
      added.push_back(j);
    }
  }
  if (added.empty()) return kept;
  std::vector<double> added_keys(added.size());
  ctx.profile.order->Keys(st, added, ctx.now, added_keys);
  std::vector<Entry> fresh(added.size());
  for (size_t i = 0; i < added.size(); ++i) {
    const JobIndex j = added[i];
    fresh[i] = {added_keys[i], st.Job(j).spec->submit_time, j};
    memos.Job(j).in_pending_order = true;
  }
  std::sort(fresh.begin(), fresh.end(), before);
  if (fresh.size() <= kFewChanges) {
    for (const Entry& e : fresh)
      kept.insert(std::upper_bound(kept.begin(), kept.end(), e, before), e);
    return kept;
  }
  const size_t middle = kept.size();
  kept.insert(kept.end(), fresh.begin(), fresh.end());
  std::inplace_merge(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(middle), kept.end(),
                     before);
  return kept;
}

void OrderPending(CycleContext& ctx, std::vector<JobIndex>* jobs, std::vector<double>* keys) {
  const ClusterState& st = ctx.state();
  if (!ctx.profile.order->StaticKeys()) {
    st.PendingJobs(jobs);
    OrderJobs(ctx, jobs, keys);
    return;
  }
  jobs->clear();
  keys->clear();
  for (const Memos::OrderEntry& e : UpdatePendingOrder(ctx)) {
    if (!st.Job(e.job).IsPending()) continue;  // a Standby job holding its gang
    jobs->push_back(e.job);
    keys->push_back(e.key);
  }
}

}  // namespace dlsched::engine
