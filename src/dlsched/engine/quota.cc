#include "dlsched/engine/quota.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace dlsched::engine {

QuotaBook::QuotaBook(std::span<const core::QueueSpec> queues) {
  for (const core::QueueSpec& spec : queues) {
    Queue q;
    q.spec = spec;
    auto c = std::find_if(cohorts_.begin(), cohorts_.end(), [&](const Cohort& k) {
      return !spec.cohort.empty() && k.name == spec.cohort;
    });
    if (c == cohorts_.end()) {
      cohorts_.push_back(Cohort{spec.cohort, {}});
      c = cohorts_.end() - 1;
    }
    q.cohort = static_cast<int>(c - cohorts_.begin());
    for (const core::QuotaLine& ql : spec.quota) {
      Line l;
      l.id = ql.id;
      l.nominal = ql.nominal;
      l.local = ql.lending_limit ? std::max<int64_t>(0, ql.nominal - *ql.lending_limit) : 0;
      l.borrowing_limit = ql.borrowing_limit.value_or(-1);
      auto p = std::find_if(c->pools.begin(), c->pools.end(),
                            [&](const Pool& k) { return k.id == ql.id; });
      if (p == c->pools.end()) {
        c->pools.push_back(Pool{ql.id, 0, 0});
        p = c->pools.end() - 1;
      }
      p->lendable += l.nominal - l.local;
      l.pool = static_cast<int>(p - c->pools.begin());
      q.lines.push_back(l);
    }
    by_name_.emplace(spec.name, static_cast<int>(queues_.size()));
    caps_.emplace_back();
    queues_.push_back(std::move(q));
  }
}

int QuotaBook::Find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

void QuotaBook::Change(int q, const core::Resources& r, int sign) {
  Queue& qu = queues_[q];
  qu.tasks += sign;
  ++qu.version;
  ++total_version_;
  if (sign > 0) {
    qu.usage += r;
  } else {
    qu.usage -= r;
  }
  Cohort& c = cohorts_[qu.cohort];
  for (Line& l : qu.lines) {
    const int64_t amount = r[l.id];
    if (amount == 0) continue;
    const int64_t before = std::max<int64_t>(0, l.usage - l.local);
    l.usage += sign * amount;
    c.pools[l.pool].used += std::max<int64_t>(0, l.usage - l.local) - before;
  }
}

int64_t QuotaBook::LineAvailable(const Queue& q, const Line& l) const {
  const Pool& p = cohorts_[q.cohort].pools[l.pool];
  int64_t from_cohort = p.lendable - p.used;
  if (l.borrowing_limit >= 0) {
    from_cohort =
        std::min(from_cohort,
                 l.nominal - l.local - std::max<int64_t>(0, l.usage - l.local) + l.borrowing_limit);
  }
  return std::max<int64_t>(0, std::max<int64_t>(0, l.local - l.usage) + from_cohort);
}

int64_t QuotaBook::Available(int q, core::ResourceId id) const {
  const Queue& qu = queues_[q];
  for (const Line& l : qu.lines) {
    if (l.id == id) return LineAvailable(qu, l);
  }
  return std::numeric_limits<int64_t>::max();
}

int64_t QuotaBook::MaxCapacity(int q, core::ResourceId id) const {
  const Queue& qu = queues_[q];
  for (const Line& l : qu.lines) {
    if (l.id != id) continue;
    const int64_t most = l.local + cohorts_[qu.cohort].pools[l.pool].lendable;
    return l.borrowing_limit >= 0 ? std::min(most, l.nominal + l.borrowing_limit) : most;
  }
  return std::numeric_limits<int64_t>::max();
}

namespace {

// True when `usage` + `r` stays within every limit `r` asks for.
bool WithinLimits(const core::Resources& usage, const core::Resources& r,
                  const core::ResourceLimits& limits) {
  return std::all_of(limits.begin(), limits.end(), [&](const auto& limit) {
    const int64_t amount = r[limit.first];
    return amount <= 0 || usage[limit.first] + amount <= limit.second;
  });
}

}  // namespace

bool QuotaBook::Admits(int q, const core::Resources& r, bool capped) const {
  const Queue& qu = queues_[q];
  return std::all_of(qu.lines.begin(), qu.lines.end(),
                     [&](const Line& l) {
                       const int64_t amount = r[l.id];
                       return amount <= 0 || amount <= LineAvailable(qu, l);
                     }) &&
         WithinLimits(qu.usage, r, qu.spec.capability) &&
         (!capped || WithinLimits(qu.usage, r, caps_[q]));
}

bool QuotaBook::Borrows(int q, const core::Resources& extra) const {
  const Queue& qu = queues_[q];
  return std::any_of(qu.lines.begin(), qu.lines.end(),
                     [&](const Line& l) { return l.usage + extra[l.id] > l.nominal; });
}

double QuotaBook::DominantShare(int q, const core::Resources& extra) const {
  const Queue& qu = queues_[q];
  if (qu.spec.cohort.empty()) return 0;
  double share = 0;
  for (const Line& l : qu.lines) {
    const int64_t borrowed = l.usage + extra[l.id] - l.nominal;
    const int64_t lendable = cohorts_[qu.cohort].pools[l.pool].lendable;
    if (borrowed <= 0 || lendable <= 0) continue;
    share = std::max(share, static_cast<double>(borrowed) * 1000 / static_cast<double>(lendable));
  }
  return share;
}

bool QuotaBook::SetCycleCaps(std::vector<core::ResourceLimits> caps) {
  caps.resize(queues_.size());
  bool grew = false;
  for (size_t q = 0; q < caps.size() && !grew; ++q) {
    // Every old limit must stand, as low or lower, in the new caps.
    for (const auto& [id, old_limit] : caps_[q]) {
      const auto it = std::find_if(caps[q].begin(), caps[q].end(),
                                   [id = id](const auto& l) { return l.first == id; });
      if (it == caps[q].end() || it->second > old_limit) grew = true;
    }
  }
  caps_ = std::move(caps);
  return grew;
}

std::optional<std::string> QuotaBook::OverLimit(int q, const core::Resources& r,
                                                const core::ResourceLimits& limits,
                                                std::string_view what) const {
  const Queue& qu = queues_[q];
  for (const auto& [id, limit] : limits) {
    const int64_t amount = r[id];
    if (amount <= 0 || qu.usage[id] + amount <= limit) continue;
    return fmt::format("queue {}'s {}: needs {} {}, {} in use of {}", qu.spec.name, what,
                       core::FormatResourceAmount(id, amount), core::ResourceName(id),
                       core::FormatResourceAmount(id, qu.usage[id]),
                       core::FormatResourceAmount(id, limit));
  }
  return std::nullopt;
}

std::string QuotaBook::Words(int q, const Line& l, bool usage) const {
  const Queue& qu = queues_[q];
  auto amount = [&](int64_t a) { return core::FormatResourceAmount(l.id, a); };
  std::string words = fmt::format("nominal {}", amount(l.nominal));
  if (usage) words += fmt::format(", {} in use", amount(l.usage));
  if (l.borrowing_limit >= 0)
    words += fmt::format(", borrowing limit {}", amount(l.borrowing_limit));
  if (l.local > 0) words += fmt::format(", lending limit {}", amount(l.nominal - l.local));
  if (!qu.spec.cohort.empty()) {
    const Pool& p = cohorts_[qu.cohort].pools[l.pool];
    words += usage ? fmt::format(", cohort {} lends {}, {} of it in use", qu.spec.cohort,
                                 amount(p.lendable), amount(p.used))
                   : fmt::format(", cohort {} lends {}", qu.spec.cohort, amount(p.lendable));
  }
  return words;
}

std::optional<std::string> QuotaBook::Refusal(int q, const core::Resources& r, bool capped) const {
  const Queue& qu = queues_[q];
  for (const Line& l : qu.lines) {
    const int64_t amount = r[l.id];
    const int64_t available = LineAvailable(qu, l);
    if (amount <= 0 || amount <= available) continue;
    return fmt::format("queue {}'s quota: needs {} {}, {} available ({})", qu.spec.name,
                       core::FormatResourceAmount(l.id, amount), core::ResourceName(l.id),
                       core::FormatResourceAmount(l.id, available), Words(q, l, true));
  }
  if (auto why = OverLimit(q, r, qu.spec.capability, "capability")) return why;
  if (!capped) return std::nullopt;
  return OverLimit(q, r, caps_[q], "share this cycle");
}

std::optional<std::string> QuotaBook::NeverHolds(int q, const core::Resources& r) const {
  const Queue& qu = queues_[q];
  for (const Line& l : qu.lines) {
    const int64_t amount = r[l.id];
    const int64_t most = MaxCapacity(q, l.id);
    if (amount <= 0 || amount <= most) continue;
    return fmt::format("queue {} can never hold {} {}: at most {} ({})", qu.spec.name,
                       core::FormatResourceAmount(l.id, amount), core::ResourceName(l.id),
                       core::FormatResourceAmount(l.id, most), Words(q, l, false));
  }
  for (const auto& [id, limit] : qu.spec.capability) {
    if (r[id] <= limit) continue;
    return fmt::format("queue {} can never hold {} {}: its capability is {}", qu.spec.name,
                       core::FormatResourceAmount(id, r[id]), core::ResourceName(id),
                       core::FormatResourceAmount(id, limit));
  }
  return std::nullopt;
}

}  // namespace dlsched::engine
