#include "dlsched/engine/quota.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "dlsched/core/limits.h"

namespace dlsched::engine {

namespace {

// `a` + `b`, at most core::kMaxTotalAmount (Kueue's saturating sums).
int64_t SatAdd(int64_t a, int64_t b) {
  return a > core::kMaxTotalAmount - b ? core::kMaxTotalAmount : a + b;
}

}  // namespace

const QuotaBook::Line* QuotaBook::Node::Find(core::ResourceId id) const {
  for (const Line& l : lines) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

QuotaBook::QuotaBook(std::span<const core::QueueSpec> queues,
                     std::span<const core::CohortSpec> cohorts) {
  std::unordered_map<std::string, int> cohort_node;
  auto cohort = [&](const std::string& name) {
    auto [it, inserted] = cohort_node.emplace(name, 0);
    if (inserted) {
      it->second = static_cast<int>(nodes_.size());
      nodes_.push_back(Node{name, -1, 1, {}});
    }
    return it->second;
  };
  auto lines = [](std::span<const core::QuotaLine> quota) {
    std::vector<Line> out;
    for (const core::QuotaLine& ql : quota) {
      Line l;
      l.id = ql.id;
      l.nominal = ql.nominal;
      l.borrowing_limit = ql.borrowing_limit.value_or(-1);
      l.lending_limit = ql.lending_limit.value_or(-1);
      out.push_back(l);
    }
    return out;
  };
  for (const core::QueueSpec& spec : queues) {
    by_name_.emplace(spec.name, static_cast<int>(queues_.size()));
    caps_.emplace_back();
    queues_.push_back(Queue{spec, {}, 0, 0});
    nodes_.push_back(Node{spec.name, -1, spec.weight, lines(spec.quota)});
  }
  for (size_t q = 0; q < queues.size(); ++q) {
    if (!queues[q].cohort.empty()) nodes_[q].parent = cohort(queues[q].cohort);
  }
  for (const core::CohortSpec& c : cohorts) {
    const int n = cohort(c.name);
    nodes_[n].weight = c.weight;
    nodes_[n].lines = lines(c.quota);
    if (!c.parent.empty()) {
      const int p = cohort(c.parent);
      nodes_[n].parent = p;
    }
  }
  // Subtree quotas, leaves first: a node's children come before it in a
  // post-order of the tree. The config rejects cycles.
  children_.assign(nodes_.size(), {});
  std::vector<std::vector<int>>& children = children_;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].parent >= 0) children[nodes_[n].parent].push_back(static_cast<int>(n));
  }
  std::vector<int> order;
  std::vector<std::pair<int, size_t>> stack;
  for (size_t root = 0; root < nodes_.size(); ++root) {
    if (nodes_[root].parent >= 0) continue;
    stack.push_back({static_cast<int>(root), 0});
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < children[n].size()) {
        const int c = children[n][next++];
        stack.push_back({c, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  for (const int n : order) {
    Node& node = nodes_[n];
    for (Line& l : node.lines) l.subtree = l.nominal;
    for (const int c : children[n]) {
      for (const Line& cl : nodes_[c].lines) {
        Line* l = node.Find(cl.id);
        if (l == nullptr) {
          node.lines.push_back(Line{cl.id});
          std::sort(node.lines.begin(), node.lines.end(),
                    [](const Line& a, const Line& b) { return a.id < b.id; });
          l = node.Find(cl.id);
        }
        l->subtree = SatAdd(l->subtree, cl.subtree - cl.local);
      }
    }
    for (Line& l : node.lines) {
      l.local = l.lending_limit >= 0 ? std::max<int64_t>(0, l.subtree - l.lending_limit) : 0;
    }
  }
}

int QuotaBook::Find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

void QuotaBook::ClearUsage() {
  for (Queue& q : queues_) {
    q.usage = {};
    q.tasks = 0;
    ++q.version;
  }
  for (Node& n : nodes_) {
    for (Line& l : n.lines) l.usage = 0;
  }
  ++total_version_;
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
  for (const Line& ql : nodes_[q].lines) {
    int64_t delta = sign * r[ql.id];
    // Up the tree while the change reaches past a node's local quota.
    for (int n = q; n >= 0 && delta != 0; n = nodes_[n].parent) {
      Line& l = *nodes_[n].Find(ql.id);
      const int64_t before = std::max<int64_t>(0, l.usage - l.local);
      l.usage += delta;
      delta = std::max<int64_t>(0, l.usage - l.local) - before;
    }
  }
}

int64_t QuotaBook::UsageWith(int n, int q, core::ResourceId id, int64_t extra) const {
  int m = q;
  for (; m >= 0 && m != n && extra != 0; m = nodes_[m].parent) {
    const Line* l = nodes_[m].Find(id);
    if (l == nullptr) return nodes_[n].Find(id) == nullptr ? 0 : nodes_[n].Find(id)->usage;
    extra = std::max<int64_t>(0, l->usage + extra - l->local) -
            std::max<int64_t>(0, l->usage - l->local);
  }
  const Line* l = nodes_[n].Find(id);
  return l == nullptr ? 0 : l->usage + (m == n ? extra : 0);
}

int64_t QuotaBook::LineAvailable(int n, core::ResourceId id) const {
  const Node& node = nodes_[n];
  const Line& l = *node.Find(id);
  if (node.parent < 0) return l.subtree - l.usage;
  int64_t from_parent = LineAvailable(node.parent, id);
  if (l.borrowing_limit >= 0) {
    from_parent =
        std::min(from_parent,
                 l.subtree - l.local - std::max<int64_t>(0, l.usage - l.local) + l.borrowing_limit);
  }
  return std::max<int64_t>(0, l.local - l.usage) + from_parent;
}

int64_t QuotaBook::LineMax(int n, core::ResourceId id) const {
  const Node& node = nodes_[n];
  const Line& l = *node.Find(id);
  if (node.parent < 0) return l.subtree;
  const int64_t most = SatAdd(l.local, LineMax(node.parent, id));
  return l.borrowing_limit >= 0 ? std::min(most, SatAdd(l.subtree, l.borrowing_limit)) : most;
}

int64_t QuotaBook::Available(int q, core::ResourceId id) const {
  if (nodes_[q].Find(id) == nullptr) return std::numeric_limits<int64_t>::max();
  return std::max<int64_t>(0, LineAvailable(q, id));
}

int64_t QuotaBook::MaxCapacity(int q, core::ResourceId id) const {
  if (nodes_[q].Find(id) == nullptr) return std::numeric_limits<int64_t>::max();
  return LineMax(q, id);
}

int QuotaBook::CommonAncestor(int a, int b) const {
  for (int x = nodes_[a].parent; x >= 0; x = nodes_[x].parent) {
    for (int y = nodes_[b].parent; y >= 0; y = nodes_[y].parent) {
      if (x == y) return x;
    }
  }
  return -1;
}

bool QuotaBook::Over(int n, std::span<const core::ResourceId> ids) const {
  return std::any_of(ids.begin(), ids.end(), [&](core::ResourceId id) {
    const Line* l = nodes_[n].Find(id);
    return l != nullptr && l->usage > l->subtree;
  });
}

bool QuotaBook::FitsBelow(int q, const core::Resources& r, int below) const {
  core::Resources remaining = r;
  for (int n = q; n >= 0 && n != below; n = nodes_[n].parent) {
    bool fits = true;
    for (const Line& l : nodes_[n].lines) {
      const int64_t need = remaining[l.id];
      if (need <= 0) continue;
      if (l.usage + need > l.subtree) fits = false;
      remaining[l.id] = std::max<int64_t>(0, need - std::max<int64_t>(0, l.local - l.usage));
    }
    if (fits) return true;
  }
  return false;
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
  const std::vector<Line>& lines = nodes_[q].lines;
  return std::all_of(lines.begin(), lines.end(),
                     [&](const Line& l) {
                       const int64_t amount = r[l.id];
                       return amount <= 0 || amount <= LineAvailable(q, l.id);
                     }) &&
         WithinLimits(qu.usage, r, qu.spec.capability) &&
         (!capped || WithinLimits(qu.usage, r, caps_[q]));
}

bool QuotaBook::Borrows(int q, const core::Resources& extra) const {
  const std::vector<Line>& lines = nodes_[q].lines;
  return std::any_of(lines.begin(), lines.end(),
                     [&](const Line& l) { return l.usage + extra[l.id] > l.nominal; });
}

double QuotaBook::DominantShare(int n, int q, const core::Resources& extra) const {
  const Node& node = nodes_[n];
  if (node.parent < 0) return 0;
  double share = 0;
  for (const Line& l : node.lines) {
    const int64_t borrowed = (q >= 0 ? UsageWith(n, q, l.id, extra[l.id]) : l.usage) - l.subtree;
    if (borrowed <= 0) continue;
    const int64_t lendable = LineMax(node.parent, l.id);
    if (lendable <= 0) continue;
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
  auto amount = [&](int64_t a) { return core::FormatResourceAmount(l.id, a); };
  std::string words = fmt::format("nominal {}", amount(l.nominal));
  if (usage) words += fmt::format(", {} in use", amount(l.usage));
  auto limits = [&](const Line& k) {
    if (k.borrowing_limit >= 0)
      words += fmt::format(", borrowing limit {}", amount(k.borrowing_limit));
    if (k.local > 0) words += fmt::format(", lending limit {}", amount(k.subtree - k.local));
  };
  limits(l);
  // Every cohort over the queue: what it lends its members, and its own
  // limits towards its parent.
  for (int n = nodes_[q].parent; n >= 0; n = nodes_[n].parent) {
    const Line& c = *nodes_[n].Find(l.id);
    words += usage ? fmt::format(", cohort {} lends {}, {} of it in use", nodes_[n].name,
                                 amount(c.subtree), amount(c.usage))
                   : fmt::format(", cohort {} lends {}", nodes_[n].name, amount(c.subtree));
    limits(c);
  }
  return words;
}

std::optional<std::string> QuotaBook::Refusal(int q, const core::Resources& r, bool capped) const {
  const Queue& qu = queues_[q];
  for (const Line& l : nodes_[q].lines) {
    const int64_t amount = r[l.id];
    const int64_t available = Available(q, l.id);
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
  for (const Line& l : nodes_[q].lines) {
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
