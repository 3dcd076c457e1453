#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dlsched::policy::sharing {

// Shared GPUs (docs/sharing.md) as pure functions of plain numbers: tasks
// that ask for a fraction of one GPU in thousandths (milli-GPU, as
// Alibaba's cluster-trace-gpu-v2023 and GPU-sharing device plugins write
// it), the fragmentation of a node's free GPU capacity against a target
// workload, and the node and device choices of Fragmentation Gradient
// Descent and of the baselines it is compared with, as Weng et al.
// ("Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent", USENIX ATC'23) define them and their
// simulator (hkust-adsl/kubernetes-scheduler-simulator) implements them.

inline constexpr int kMilli = 1000;  // one whole GPU, in milli-GPU
// The reference node size the baselines' scores divide by (the
// simulator's MaxSpecCpu and MaxSpecGpu).
inline constexpr double kRefCpu = 128000;  // millicores
inline constexpr double kRefGpu = 8000;    // milli-GPU

// A task: CPU (millicores), memory (any unit, as the node's), and either
// no GPU (num_gpu 0), a share of one GPU (num_gpu 1, 0 < gpu_milli <
// 1000) or whole GPUs (num_gpu >= 1, gpu_milli 1000). `gpu_types`: the GPU
// types it may use (empty: any).
struct Task {
  int64_t cpu = 0;
  int64_t memory = 0;
  int num_gpu = 0;
  int gpu_milli = 0;
  std::vector<std::string> gpu_types;

  bool Shared() const { return num_gpu == 1 && gpu_milli > 0 && gpu_milli < kMilli; }
  bool UsesGpu() const { return num_gpu > 0 && gpu_milli > 0; }
  int64_t GpuMilli() const { return int64_t{num_gpu} * gpu_milli; }
  friend bool operator==(const Task&, const Task&) = default;
};

// A node: what is left of its CPU and memory, its GPU type ("" for none)
// and each device's free milli-GPU (index = device id, 1000 = unused).
// `tags`: how many tasks of each GPU shape it holds (0: shared, k: k whole
// GPUs), for the clustering baseline.
struct Node {
  int64_t cpu_left = 0;
  int64_t memory_left = 0;
  std::string gpu_type;
  std::vector<int> gpu_left;
  std::map<int, int> tags;

  int64_t FreeGpuMilli() const;
};

// A class of the target workload and its share of it.
struct TaskClass {
  Task task;
  double popularity = 0;
};

// The target workload of a trace (the simulator's typical pods): its tasks
// grouped by (cpu, gpu_milli, num_gpu, gpu_types), most frequent first (ties:
// the larger cpu, then gpu_milli, then num_gpu, then types), taken until they
// cover `threshold` of the tasks; each class's popularity is its count over
// the count kept. Memory is not part of a class.
std::vector<TaskClass> TargetWorkload(std::span<const Task> tasks, double threshold = 0.95);
// The same from tasks already counted by class (each task's memory 0).
struct TaskCount {
  Task task;
  int64_t count = 0;
};
std::vector<TaskClass> TargetWorkload(std::vector<TaskCount> counts, double threshold = 0.95);

// Whether a node of `gpu_type` may run `task` (its types, if any, name it).
bool Accessible(std::string_view gpu_type, const Task& task);

// Whether `task` fits on `node`: CPU, memory, and for a GPU task an
// accessible type and num_gpu devices with gpu_milli free each.
bool Fits(const Node& node, const Task& task);

// The fragmentation of a node's free GPU capacity against `workload`
// (milli-GPU): the sum over classes of popularity x the GPU capacity that
// class cannot use there - all of it when the class cannot run on the node
// (too little CPU, too few devices with room, a type it may not use) or
// needs no GPU; otherwise the devices whose free share is below its
// per-GPU demand. Memory is not looked at.
double Fragmentation(int64_t cpu_left, std::string_view gpu_type, std::span<const int> gpu_left,
                     std::span<const TaskClass> workload);

// Remembers Fragmentation by node state (CPU left, type, free shares in
// descending order): nodes alike cost one computation.
class FragmentationMemo {
 public:
  explicit FragmentationMemo(std::vector<TaskClass> workload) : workload_(std::move(workload)) {}
  double Of(int64_t cpu_left, std::string_view gpu_type, std::span<const int> gpu_left);
  const std::vector<TaskClass>& workload() const { return workload_; }

 private:
  std::vector<TaskClass> workload_;
  std::unordered_map<std::string, double> cache_;
  std::string key_;
  std::vector<int> sorted_;
};

enum class Policy : uint8_t { kRandom, kDotProduct, kClustering, kPacking, kBestFit, kFgd };
std::string_view PolicyName(
    Policy p);  // "random", "dotprod", "clustering", "packing", "bestfit", "fgd"
// All six, in the order above.
std::span<const Policy> AllPolicies();
// A policy by its name; false when there is none.
bool ParsePolicy(std::string_view name, Policy* out);

// The devices a task takes on a node: whole GPUs, the lowest-index unused
// devices; a share, the device with the least room that takes it (ties:
// the lowest index). Empty for a task with no GPU.
std::vector<int> TightestDevices(const Node& node, const Task& task);

// A node's score for a task under a baseline (higher is better), as the
// simulator's integer score plugins compute it, and the device(s) it
// would take there. `node` must fit the task.
struct Score {
  double score = 0;
  std::vector<int> devices;
};
Score BestFitScore(const Node& node, const Task& task);
Score PackingScore(const Node& node, const Task& task);
Score ClusteringScore(const Node& node, const Task& task);
Score DotProductScore(const Node& node, const Task& task);
// FGD: the fragmentation increase d of placing the task, over its
// devices (a share: each device with room, the best kept, ties to the
// lowest index; whole GPUs: the lowest-index unused devices); the score is
// floor(100 sigmoid(-d / 1000)) as the authors' simulator quantises it,
// or -d when `exact`.
Score FgdScore(const Node& node, const Task& task, FragmentationMemo& memo, bool exact = false);
// FGD's quantised score of a fragmentation increase d (milli-GPU):
// floor(100 sigmoid(-d / 1000)), 0..100.
double FgdQuantise(double increase);

// Where `task` goes: the feasible node with the highest score, ties to the
// lowest `rank` (a permutation of the nodes, as the simulator's random
// node names order them); Random: a feasible node uniformly. node -1 when
// none fits.
struct Choice {
  int node = -1;
  std::vector<int> devices;
};
Choice Choose(std::span<const Node> nodes, std::span<const int> rank, const Task& task,
              Policy policy, FragmentationMemo& memo, std::mt19937_64& rng, bool exact = false);

// Takes `task` onto node.devices `devices` (its CPU, memory, GPU shares, tag).
void Take(Node& node, const Task& task, std::span<const int> devices);

}  // namespace dlsched::policy::sharing
