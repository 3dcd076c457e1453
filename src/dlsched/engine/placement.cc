#include "dlsched/engine/placement.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement_internal.h"
#include "dlsched/engine/profile.h"

// Whether a node may take a task, and the words for why not. The node
// search is in placement_search.cc, a gang's slots and whether it could
// ever fit in placement_gang.cc, the order of jobs in placement_order.cc.

namespace dlsched::engine {

std::string StaticFailure(const CycleContext& ctx, TaskRef t, NodeIndex n) {
  const ClusterState& st = ctx.state();
  if (!st.Schedulable(n)) return "unschedulable";
  for (const auto& f : ctx.profile.filters) {
    std::string why = f->Filter(st, t, n);
    if (!why.empty()) return why;
  }
  return {};
}

bool Fits(const CycleContext& ctx, TaskRef t, NodeIndex n) {
  const ClusterState& st = ctx.state();
  if (!st.QuotaAdmits(t.job, st.Request(t))) return false;
  return internal::FitsKnown(ctx, t, n, internal::Filtered(ctx, t));
}

namespace internal {

std::string_view Insufficient(const core::Resources& need, const core::Resources& have,
                              Shortfall word) {
  const int r = core::FirstId(need, have, [&](core::ResourceId id) { return need[id] > have[id]; });
  if (r < 0) return {};
  thread_local std::vector<std::string> worded[2];
  std::vector<std::string>& cache = worded[static_cast<int>(word)];
  if (cache.size() <= static_cast<size_t>(r)) cache.resize(static_cast<size_t>(r) + 1);
  if (cache[r].empty()) {
    cache[r] = fmt::format("{} {}", word == Shortfall::kTooSmall ? "too small for" : "insufficient",
                           core::ResourceName(static_cast<core::ResourceId>(r)));
  }
  return cache[r];
}

}  // namespace internal

void NodeFailures::Add(std::string_view reason, int count) {
  if (count <= 0) return;
  for (auto& [r, c] : counts_) {
    if (r == reason) {
      c += count;
      return;
    }
  }
  counts_.emplace_back(std::string(reason), count);
}

int NodeFailures::Count() const {
  int n = 0;
  for (const auto& [r, c] : counts_) n += c;
  return n;
}

std::string NodeFailures::Summary(TaskRef t, int nodes, int fit) const {
  std::vector<std::pair<std::string, int>> sorted = counts_;
  // Most nodes first; ties by reason, so the message does not depend on
  // the order nodes were visited in.
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::string out = fmt::format("{}/{} nodes fit {}", fit, nodes, core::RoleName(t.role));
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += fmt::format("{}{} {}", i == 0 ? ": " : ", ", sorted[i].second, sorted[i].first);
  }
  return out;
}

}  // namespace dlsched::engine
