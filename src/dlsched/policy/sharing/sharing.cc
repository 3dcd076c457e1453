#include "dlsched/policy/sharing/sharing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

namespace dlsched::policy::sharing {

int64_t Node::FreeGpuMilli() const {
  return std::accumulate(gpu_left.begin(), gpu_left.end(), int64_t{0});
}

namespace {

std::string TypesKey(const Task& t) { return fmt::format("{}", fmt::join(t.gpu_types, "|")); }

// The class key's order: cpu, gpu_milli, num_gpu, then the types as written.
auto KeyOf(const Task& t) { return std::make_tuple(t.cpu, t.gpu_milli, t.num_gpu, TypesKey(t)); }

}  // namespace

std::vector<TaskClass> TargetWorkload(std::span<const Task> tasks, double threshold) {
  std::map<std::tuple<int64_t, int, int, std::string>, TaskCount> counts;
  for (const Task& t : tasks) {
    Task c = t;
    c.memory = 0;
    TaskCount& e = counts[KeyOf(c)];
    e.task = std::move(c);
    ++e.count;
  }
  std::vector<TaskCount> sorted;
  for (auto& [key, c] : counts) sorted.push_back(std::move(c));
  return TargetWorkload(sorted, threshold);
}

std::vector<TaskClass> TargetWorkload(std::vector<TaskCount> counts, double threshold) {
  // Most frequent first; ties: the larger key first.
  std::stable_sort(counts.begin(), counts.end(), [](const TaskCount& a, const TaskCount& b) {
    if (a.count != b.count) return a.count > b.count;
    return KeyOf(a.task) > KeyOf(b.task);
  });
  int64_t total = 0;
  for (const TaskCount& c : counts) total += c.count;
  const double need = threshold * static_cast<double>(total);
  int64_t kept = 0;
  size_t k = 0;
  while (k < counts.size() && static_cast<double>(kept) < need) kept += counts[k++].count;
  std::vector<TaskClass> out;
  for (size_t i = 0; i < k; ++i) {
    out.push_back(
        {counts[i].task, static_cast<double>(counts[i].count) / static_cast<double>(kept)});
  }
  return out;
}

bool Accessible(std::string_view gpu_type, const Task& task) {
  bool any = false;
  for (const std::string& t : task.gpu_types) {
    if (t.empty()) continue;
    any = true;
    if (!gpu_type.empty() && t == gpu_type) return true;
  }
  return !any;
}

namespace {

// Devices with at least `milli` free.
int DevicesWithRoom(std::span<const int> gpu_left, int milli) {
  return static_cast<int>(
      std::count_if(gpu_left.begin(), gpu_left.end(), [&](int g) { return g >= milli; }));
}

}  // namespace

bool Fits(const Node& node, const Task& task) {
  if (node.cpu_left < task.cpu || node.memory_left < task.memory) return false;
  if (!task.UsesGpu()) return true;
  return !node.gpu_left.empty() && Accessible(node.gpu_type, task) &&
         DevicesWithRoom(node.gpu_left, task.gpu_milli) >= task.num_gpu;
}

double Fragmentation(int64_t cpu_left, std::string_view gpu_type, std::span<const int> gpu_left,
                     std::span<const TaskClass> workload) {
  const double free = std::accumulate(gpu_left.begin(), gpu_left.end(), 0.0);
  if (free <= 0) return 0;
  double f = 0;
  for (const TaskClass& c : workload) {
    const Task& m = c.task;
    const bool runs = m.gpu_milli > 0 && Accessible(gpu_type, m) && cpu_left >= m.cpu &&
                      DevicesWithRoom(gpu_left, m.gpu_milli) >= m.num_gpu;
    if (!runs) {
      f += c.popularity * free;
      continue;
    }
    double small = 0;
    for (int g : gpu_left) {
      if (g < m.gpu_milli) small += g;
    }
    f += c.popularity * small;
  }
  return f;
}

double FragmentationMemo::Of(int64_t cpu_left, std::string_view gpu_type,
                             std::span<const int> gpu_left) {
  sorted_.assign(gpu_left.begin(), gpu_left.end());
  std::sort(sorted_.begin(), sorted_.end(), std::greater<>());
  // The key: the CPU left, the device count and the shares as raw bytes,
  // then the type.
  key_.assign(reinterpret_cast<const char*>(&cpu_left), sizeof cpu_left);
  key_.push_back(static_cast<char>(sorted_.size()));
  for (int g : sorted_) {
    const auto v = static_cast<int16_t>(g);
    key_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  key_.append(gpu_type);
  auto [it, fresh] = cache_.try_emplace(key_, 0.0);
  if (fresh) it->second = Fragmentation(cpu_left, gpu_type, gpu_left, workload_);
  return it->second;
}

namespace {

constexpr std::array<Policy, 6> kPolicies = {Policy::kRandom,     Policy::kDotProduct,
                                             Policy::kClustering, Policy::kPacking,
                                             Policy::kBestFit,    Policy::kFgd};
constexpr std::array<std::string_view, 6> kNames = {"random",  "dotprod", "clustering",
                                                    "packing", "bestfit", "fgd"};

// The lowest-index unused devices, `n` of them (fewer if there are not).
std::vector<int> UnusedDevices(const Node& node, int n) {
  std::vector<int> out;
  for (int g = 0; g < static_cast<int>(node.gpu_left.size()) && static_cast<int>(out.size()) < n;
       ++g) {
    if (node.gpu_left[g] == kMilli) out.push_back(g);
  }
  return out;
}

// The shape tag of a task for the clustering baseline: 0 shared, k whole
// GPUs; -1 no GPU.
int Tag(const Task& t) {
  if (!t.UsesGpu()) return -1;
  return t.Shared() ? 0 : t.num_gpu;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

double FgdQuantise(double increase) { return std::floor(100 * Sigmoid(-increase / kMilli)); }

std::string_view PolicyName(Policy p) { return kNames[static_cast<size_t>(p)]; }

std::span<const Policy> AllPolicies() { return kPolicies; }

bool ParsePolicy(std::string_view name, Policy* out) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) {
      *out = kPolicies[i];
      return true;
    }
  }
  return false;
}

std::vector<int> TightestDevices(const Node& node, const Task& task) {
  if (!task.UsesGpu()) return {};
  if (!task.Shared()) return UnusedDevices(node, task.num_gpu);
  int best = -1;
  for (int g = 0; g < static_cast<int>(node.gpu_left.size()); ++g) {
    const int left = node.gpu_left[g];
    if (left >= task.gpu_milli && (best < 0 || left < node.gpu_left[best])) best = g;
  }
  return best < 0 ? std::vector<int>{} : std::vector<int>{best};
}

Score BestFitScore(const Node& node, const Task& task) {
  const double raw = 0.5 * static_cast<double>(node.cpu_left - task.cpu) / kRefCpu +
                     0.5 * static_cast<double>(node.FreeGpuMilli() - task.GpuMilli()) / kRefGpu;
  return {std::trunc(100 * (1 - raw)), TightestDevices(node, task)};
}

Score PackingScore(const Node& node, const Task& task) {
  Score s{0, TightestDevices(node, task)};
  if (!task.UsesGpu()) return s;
  const int devices = static_cast<int>(node.gpu_left.size());
  const int unused =
      static_cast<int>(std::count(node.gpu_left.begin(), node.gpu_left.end(), kMilli));
  if (unused == devices) {
    s.score = std::max(33 - devices, devices);
    return s;
  }
  // The devices it would take, least room first (stable), and how many of
  // them were unused.
  std::vector<int> order(node.gpu_left.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return node.gpu_left[a] < node.gpu_left[b]; });
  int taken = 0;
  int fresh = 0;
  int64_t room = 0;
  for (int g : order) {
    if (taken == task.num_gpu) break;
    const int left = node.gpu_left[g];
    if (left < task.gpu_milli) continue;
    ++taken;
    if (left == kMilli) ++fresh;
    room += left * 100 / kMilli;
  }
  s.score = fresh > 0 ? std::max<int64_t>(50 - fresh, 33) : std::max<int64_t>(100 - room / 10, 50);
  return s;
}

Score ClusteringScore(const Node& node, const Task& task) {
  Score s{0, TightestDevices(node, task)};
  const int tag = Tag(task);
  if (tag < 0) return s;
  const int64_t base =
      25 * (static_cast<int64_t>(kRefGpu) - node.FreeGpuMilli()) / static_cast<int64_t>(kRefGpu);
  int kinds = 0;
  bool has = false;
  for (const auto& [t, n] : node.tags) {
    if (n <= 0) continue;
    ++kinds;
    has = has || t == tag;
  }
  if (has) {
    s.score = static_cast<double>(base + (kinds == 1 ? 75 : 50));
  } else {
    s.score = static_cast<double>(base + (kinds == 0 ? 25 : 0));
  }
  return s;
}

Score DotProductScore(const Node& node, const Task& task) {
  const double d =
      (static_cast<double>(node.cpu_left) / kRefCpu * (static_cast<double>(task.cpu) / kRefCpu) +
       static_cast<double>(node.FreeGpuMilli()) / kRefGpu *
           (static_cast<double>(task.GpuMilli()) / kRefGpu)) /
      2;
  return {std::trunc(100 * (1 - d)), TightestDevices(node, task)};
}

Score FgdScore(const Node& node, const Task& task, FragmentationMemo& memo, bool exact) {
  const double before = memo.Of(node.cpu_left, node.gpu_type, node.gpu_left);
  const int64_t cpu_after = node.cpu_left - task.cpu;
  std::vector<int> left = node.gpu_left;
  const auto score = [&](double after) {
    const double increase = after - before;
    return exact ? -increase : FgdQuantise(increase);
  };
  if (!task.Shared()) {
    Score s{0, UnusedDevices(node, task.UsesGpu() ? task.num_gpu : 0)};
    for (int g : s.devices) left[g] = 0;
    s.score = score(memo.Of(cpu_after, node.gpu_type, left));
    return s;
  }
  Score best{-1e300, {}};
  for (int g = 0; g < static_cast<int>(left.size()); ++g) {
    if (left[g] < task.gpu_milli) continue;
    // A device with the same room as an earlier one leaves the same shares
    // (fragmentation reads their multiset): it would tie, and lose.
    if (std::find(left.begin(), left.begin() + g, left[g]) != left.begin() + g) continue;
    left[g] -= task.gpu_milli;
    const double s = score(memo.Of(cpu_after, node.gpu_type, left));
    left[g] += task.gpu_milli;
    if (best.devices.empty() || s > best.score) best = {s, {g}};
  }
  return best;
}

Choice Choose(std::span<const Node> nodes, std::span<const int> rank, const Task& task,
              Policy policy, FragmentationMemo& memo, std::mt19937_64& rng, bool exact) {
  Choice out;
  if (policy == Policy::kRandom) {
    std::vector<int> feasible;
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
      if (Fits(nodes[n], task)) feasible.push_back(n);
    }
    if (feasible.empty()) return out;
    out.node = feasible[std::uniform_int_distribution<size_t>(0, feasible.size() - 1)(rng)];
    const Node& node = nodes[out.node];
    if (!task.Shared()) {
      out.devices = TightestDevices(node, task);
      return out;
    }
    std::vector<int> room;
    for (int g = 0; g < static_cast<int>(node.gpu_left.size()); ++g) {
      if (node.gpu_left[g] >= task.gpu_milli) room.push_back(g);
    }
    out.devices = {room[std::uniform_int_distribution<size_t>(0, room.size() - 1)(rng)]};
    return out;
  }
  double best = 0;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    const Node& node = nodes[n];
    if (!Fits(node, task)) continue;
    Score s;
    switch (policy) {
      case Policy::kDotProduct:
        s = DotProductScore(node, task);
        break;
      case Policy::kClustering:
        s = ClusteringScore(node, task);
        break;
      case Policy::kPacking:
        s = PackingScore(node, task);
        break;
      case Policy::kBestFit:
        s = BestFitScore(node, task);
        break;
      case Policy::kFgd:
        s = FgdScore(node, task, memo, exact);
        break;
      case Policy::kRandom:
        break;
    }
    if (out.node < 0 || s.score > best || (s.score == best && rank[n] < rank[out.node])) {
      out.node = n;
      out.devices = std::move(s.devices);
      best = s.score;
    }
  }
  return out;
}

void Take(Node& node, const Task& task, std::span<const int> devices) {
  node.cpu_left -= task.cpu;
  node.memory_left -= task.memory;
  for (int g : devices) node.gpu_left[g] -= task.gpu_milli;
  const int tag = Tag(task);
  if (tag >= 0) ++node.tags[tag];
}

}  // namespace dlsched::policy::sharing
