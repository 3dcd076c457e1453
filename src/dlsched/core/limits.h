#pragma once

#include <cstddef>
#include <cstdint>

namespace dlsched::core {

// Limits on what dlsched accepts, checked when a file or flag is read, so
// that nothing later overflows, allocates without bound or reaches the
// internal "never" time. Each is far above any real cluster or workload;
// docs/reliability.md lists them with the reason for each.

// Nodes in a cluster (the largest Kubernetes clusters run about 65,000).
inline constexpr int kMaxNodes = 200'000;
// Queues one cluster declares.
inline constexpr int kMaxQueues = 10'000;
// A queue's fair-sharing weight.
inline constexpr double kMaxQueueWeight = 1e6;
// nvidia.com/gpu on one node: the free-GPU index keeps one bucket per count.
inline constexpr int64_t kMaxGpusPerNode = 1024;
// Any resource of one node or one task, in canonical units (millicores,
// bytes, devices): 2^50 is 1 PiB of memory or 1.1e12 cores.
inline constexpr int64_t kMaxAmount = int64_t{1} << 50;
// A cluster's capacity of one resource, and a job's request of one resource
// at maxReplicas. Any sum of two such totals still fits in int64, so
// capacities, free room and demands never overflow.
inline constexpr int64_t kMaxTotalAmount = int64_t{1} << 62;
// Tasks of one job: PS + Chief + maxReplicas workers. A job keeps one slot
// per task, so this bounds a job's memory.
inline constexpr int kMaxTasksPerJob = 100'000;
// Task slots of a whole workload (the sum of the above over its jobs).
inline constexpr int64_t kMaxWorkloadTasks = 100'000'000;
// Arrivals, deadlines, launch and checkpoint delays, and the time a job
// needs at its minimum size, in seconds: about 31.7 years. The simulator's
// "never" (kNever, 1e300) stays out of reach of any sum of these.
inline constexpr double kMaxTime = 1e9;
// A job's maxWaitMinutes.
inline constexpr double kMaxWaitMinutes = 1e7;
// totalSteps of one job.
inline constexpr double kMaxSteps = 1e15;
// GPU-seconds a job has attained or spent launching (a snapshot's
// attainedGpuSeconds, launchGpuSeconds): every task for kMaxTime.
inline constexpr double kMaxAttained = kMaxTime * kMaxTasksPerJob;
// A job's level in a levelled order (a Tiresias queue), and its place in
// that level's list (a snapshot's level, levelPlace).
inline constexpr int kMaxLevel = 1000;
inline constexpr double kMaxLevelPlace = 1e15;
// A job's backoffLimit (restarts for failures before it fails).
inline constexpr int kMaxBackoffLimit = 1'000'000;
// A toleration's tolerationSeconds, either way (a negative one counts as 0).
inline constexpr int64_t kMaxTolerationSeconds = 1'000'000'000;
// Task failures a workload file schedules for one job.
inline constexpr int kMaxFailures = 10'000;
// A throughput table's rates in steps/s: 0 (cannot run at that size) or
// within [kMinRate, kMaxRate].
inline constexpr double kMinRate = 1e-6;
inline constexpr double kMaxRate = 1e12;
// Names of jobs, nodes, namespaces, queues and labels, in bytes (Kubernetes'
// limit for object names).
inline constexpr size_t kMaxNameBytes = 253;
// An input file (YAML), in bytes. Files larger than kYamlScanBytes are
// scanned first and refused past kMaxYamlNodes nodes, since yaml-cpp needs
// about 500 bytes of memory per node whatever the file's size.
inline constexpr size_t kMaxInputBytes = size_t{64} << 20;
inline constexpr size_t kYamlScanBytes = size_t{4} << 20;
inline constexpr int64_t kMaxYamlNodes = 5'000'000;
// A CSV input (a trace, a Tiresias cluster, Pollux's measurements), in
// bytes. It is streamed a line at a time (a line is at most 64 KiB), so
// this bounds the rows read, not the memory of the text: a trace of 10^6
// jobs in the native format is about 38 MB.
inline constexpr uint64_t kMaxCsvBytes = uint64_t{256} << 20;

}  // namespace dlsched::core
