#include "dlsched/sim/sharing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace dlsched::sim {

namespace sh = policy::sharing;

SharingCluster FromOpenb(const std::vector<config::OpenbNode>& nodes,
                         const std::vector<config::OpenbPod>& pods) {
  SharingCluster c;
  for (const config::OpenbNode& n : nodes) {
    sh::Node x;
    x.cpu_left = n.cpu_milli;
    x.memory_left = n.memory_mib;
    x.gpu_type = n.model;
    x.gpu_left.assign(static_cast<size_t>(n.gpus), sh::kMilli);
    c.gpu_milli += int64_t{n.gpus} * sh::kMilli;
    c.nodes.push_back(std::move(x));
  }
  for (const config::OpenbPod& p : pods) {
    sh::Task t;
    t.cpu = p.cpu_milli;
    t.memory = p.memory_mib;
    t.num_gpu = p.num_gpu;
    t.gpu_milli = p.gpu_milli;
    t.gpu_types = p.gpu_spec;
    c.tasks.push_back(std::move(t));
  }
  return c;
}

namespace {

// The trace shuffled, then grown by random draws (or shrunk by random
// removals) to `target` milli-GPU of requests: a draw that would pass it
// ends the growth.
std::vector<sh::Task> Tune(const std::vector<sh::Task>& trace, int64_t target,
                           std::mt19937_64& rng) {
  std::vector<sh::Task> tasks = trace;
  std::shuffle(tasks.begin(), tasks.end(), rng);
  int64_t total = 0;
  for (const sh::Task& t : tasks) total += t.GpuMilli();
  if (trace.empty()) return tasks;
  std::uniform_int_distribution<size_t> any(0, trace.size() - 1);
  while (total < target) {
    const sh::Task& t = trace[any(rng)];
    if (total + t.GpuMilli() > target) break;
    total += t.GpuMilli();
    tasks.push_back(t);
  }
  while (total > target && !tasks.empty()) {
    const size_t k = std::uniform_int_distribution<size_t>(0, tasks.size() - 1)(rng);
    total -= tasks[k].GpuMilli();
    tasks.erase(tasks.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return tasks;
}

}  // namespace

SharingCurve RunSharing(const SharingCluster& cluster, const SharingOptions& options) {
  std::mt19937_64 rng(options.seed);
  const double capacity = static_cast<double>(cluster.gpu_milli);
  const std::vector<sh::Task> tasks =
      Tune(cluster.tasks, static_cast<int64_t>(std::llround(options.tune * capacity)), rng);
  std::vector<sh::Node> nodes = cluster.nodes;
  // Each node's rank for ties: a random permutation, fixed for the run.
  std::vector<int> rank(nodes.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), rng);
  sh::FragmentationMemo memo(sh::TargetWorkload(cluster.tasks));
  std::vector<double> frag(nodes.size());
  double frag_total = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    frag[n] = memo.Of(nodes[n].cpu_left, nodes[n].gpu_type, nodes[n].gpu_left);
    frag_total += frag[n];
  }
  const int points = static_cast<int>(std::floor(options.tune * 100)) + 2;
  std::vector<double> alloc_sum(points, 0);
  std::vector<double> frag_sum(points, 0);
  std::vector<int> count(points, 0);
  SharingCurve out;
  out.tasks = static_cast<int64_t>(tasks.size());
  double arrived = 0;
  double allocated = 0;
  for (const sh::Task& t : tasks) {
    arrived += static_cast<double>(t.GpuMilli());
    const sh::Choice c = sh::Choose(nodes, rank, t, options.policy, memo, rng, options.exact);
    if (c.node < 0) {
      ++out.failed;
    } else {
      ++out.placed;
      sh::Node& node = nodes[static_cast<size_t>(c.node)];
      sh::Take(node, t, c.devices);
      allocated += static_cast<double>(t.GpuMilli());
      frag_total -= frag[static_cast<size_t>(c.node)];
      frag[static_cast<size_t>(c.node)] = memo.Of(node.cpu_left, node.gpu_type, node.gpu_left);
      frag_total += frag[static_cast<size_t>(c.node)];
    }
    const int x = static_cast<int>(std::nearbyint(arrived / capacity * 100));
    if (x < 0 || x >= points) continue;
    alloc_sum[x] += allocated / capacity * 100;
    frag_sum[x] += frag_total / capacity * 100;
    ++count[x];
  }
  out.allocated.assign(points, 0);
  out.fragmented.assign(points, 0);
  for (int x = 0; x < points; ++x) {
    // No event at x: its neighbours' events.
    double a = 0;
    double f = 0;
    int k = 0;
    for (int y : {x - 1, x, x + 1}) {
      if (y < 0 || y >= points || (count[x] > 0 && y != x)) continue;
      a += alloc_sum[y];
      f += frag_sum[y];
      k += count[y];
    }
    if (k > 0) {
      out.allocated[x] = a / k;
      out.fragmented[x] = f / k;
    } else if (x > 0) {
      // Nothing arrived near x: the cluster is as it was at x - 1.
      out.allocated[x] = out.allocated[x - 1];
      out.fragmented[x] = out.fragmented[x - 1];
    }
  }
  // The curve ends where the last pod arrived.
  int last = points - 1;
  while (last > 0 && count[last] == 0) --last;
  out.allocated.resize(last + 1);
  out.fragmented.resize(last + 1);
  return out;
}

}  // namespace dlsched::sim
