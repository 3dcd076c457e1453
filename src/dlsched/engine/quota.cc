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
    queues_.push_back(std::move(q));
  }
}

int QuotaBook::Find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

void QuotaBook::Change(int q, const core::Resources& r, int sign) {
  Queue& qu = queues_[q];
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

int64_t QuotaBook::Borrowed(int q, core::ResourceId id) const {
  for (const Line& l : queues_[q].lines) {
    if (l.id == id) return std::max<int64_t>(0, l.usage - l.nominal);
  }
  return 0;
}

bool QuotaBook::Admits(int q, const core::Resources& r) const {
  const Queue& qu = queues_[q];
  return std::all_of(qu.lines.begin(), qu.lines.end(), [&](const Line& l) {
    const int64_t amount = r[l.id];
    return amount <= 0 || amount <= LineAvailable(qu, l);
  });
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

std::optional<std::string> QuotaBook::Refusal(int q, const core::Resources& r) const {
  const Queue& qu = queues_[q];
  for (const Line& l : qu.lines) {
    const int64_t amount = r[l.id];
    const int64_t available = LineAvailable(qu, l);
    if (amount <= 0 || amount <= available) continue;
    return fmt::format("queue {}'s quota: needs {} {}, {} available ({})", qu.spec.name,
                       core::FormatResourceAmount(l.id, amount), core::ResourceName(l.id),
                       core::FormatResourceAmount(l.id, available), Words(q, l, true));
  }
  return std::nullopt;
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
  return std::nullopt;
}

}  // namespace dlsched::engine
