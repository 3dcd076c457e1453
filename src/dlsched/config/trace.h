#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/affinity.h"
#include "dlsched/core/error.h"
#include "dlsched/core/job.h"
#include "dlsched/core/node.h"

namespace dlsched::config {

// Public job traces, read as workloads (docs/traces.md). Every importer
// streams its file line by line (no document tree) and turns each row into
// a gang of one-GPU workers that runs the row's duration at the row's size
// (JobSpec::duration); a Pollux job instead progresses as Pollux's
// measurements say (totalSteps and a throughput table), and a native row
// states its own job. Errors are one line naming the file and line:
//   "philly.csv:17: num_gpus: expected an integer in [1, 100000], got 'x'".
enum class TraceFormat { kTiresias, kPhilly, kPollux, kNative };
std::string_view TraceFormatName(TraceFormat f);  // "tiresias", "philly", "pollux", "native"

struct TraceOptions {
  TraceFormat format = TraceFormat::kNative;
  std::string path;
  // Skip a malformed row (and count it) instead of failing on it.
  bool skip_bad_rows = false;
  // philly: keep only rows of these virtual clusters (empty: all) submitted
  // in [from, until), in seconds since the Unix epoch (UTC).
  std::vector<std::string> virtual_clusters;
  std::optional<int64_t> from;
  std::optional<int64_t> until;
  // At most this many jobs, the first kept rows in file order (0: all).
  int64_t limit = 0;
  // Trace jobs (not native, which states its own): a job of n GPUs gets
  // minReplicas max(1, ceil(n * min_factor)) and maxReplicas
  // max(n, floor(n * max_factor)) workers; at other sizes it runs at the
  // scaling curve's speed.
  double min_factor = 1;
  double max_factor = 1;
  core::ScalingCurve scaling;
  // When it becomes true (Ctrl-C), the load stops within kStopCheckRows
  // rows and fails with "<file>:<line>: interrupted while reading"; a
  // trace of 10^6 rows takes seconds to read.
  const std::atomic<bool>* stop = nullptr;
  // pollux: the directory of Pollux's measurements (<application>/
  // placements.csv, scalability.csv, validation-*.csv); empty: `traces`
  // beside the workload's directory (data/pollux/workloads/x.csv ->
  // data/pollux/traces).
  std::string pollux_traces;
};

// How often a load looks at TraceOptions::stop, in rows.
inline constexpr int64_t kStopCheckRows = 1024;

struct TraceLoad {
  WorkloadSpec workload;
  int64_t rows = 0;           // data rows read
  int64_t skipped = 0;        // malformed rows skipped (skip_bad_rows)
  int64_t filtered = 0;       // rows left out by the filters or the limit
  std::string first_skipped;  // the error of the first skipped row
};

// Reads `options.path` in `options.format`. Fails on the first bad row
// unless skip_bad_rows, and when no job is left.
core::Result<TraceLoad> LoadTrace(const TraceOptions& options);

// The directory of Pollux's measurements a pollux trace reads:
// `options.pollux_traces`, else `traces` beside the trace's directory.
std::string PolluxTracesDir(const TraceOptions& options);

// "FORMAT:FILE" as `--trace` takes it (tiresias:, philly:, pollux:, native:).
core::Result<TraceOptions> ParseTraceArg(std::string_view arg);

// --elastic "MIN:MAX" factors, e.g. "0.5:2" (0 < MIN <= 1 <= MAX).
core::Status ParseElastic(std::string_view text, TraceOptions& options);

// "2017-10-03", "2017-10-03 14:00:00" or "2017-10-03T14:00:00" (UTC) as
// seconds since the Unix epoch; the error is the reason only.
core::Result<int64_t> ParseTimestamp(std::string_view text);

// A cluster from a Tiresias cluster spec CSV
// (num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node):
// num_switch x num_node_p_switch nodes "s<switch>-n<node>" with the GPUs,
// cpus and GiB of memory per node, labelled with their switch
// (`dlsched.io/switch`).
core::Result<core::ClusterSpec> LoadTiresiasCluster(const std::string& path);

// The row of a Tiresias cluster spec.
struct TiresiasShape {
  int64_t switches = 1;          // num_switch
  int64_t nodes_per_switch = 1;  // num_node_p_switch
  int64_t gpus = 0;              // num_gpu_p_node
  int64_t cpus = 1;              // num_cpu_p_node
  int64_t memory_gi = 1;         // mem_p_node
};
// The cluster of `shape`, checked as LoadTiresiasCluster checks a file's
// row (each column's range, the node count, the cluster's limits); errors
// read "<column>: <what>".
core::Result<core::ClusterSpec> TiresiasCluster(const TiresiasShape& shape);
// `shape` as a Tiresias cluster spec (header and row).
std::string TiresiasClusterCsv(const TiresiasShape& shape);

// The native format (docs/traces.md): one job a line,
//   name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling
// with gpus/cpu/memory per worker as quantities (cpu and memory may be
// empty: unset; gpus below 1, as 0.5 or 500m, is a share of one GPU,
// dlsched.io/gpu-milli), optionally followed by the columns
//   ps,ps_cpu,ps_memory,steps,model,queue,gpu_type
// for parameter servers (count, cpu and memory per PS), for a job given
// by its total steps and a model-zoo model instead of its duration, for
// its team's queue (empty: "default") and for the GPU types its workers
// require ("v100" or "v100|p100"; empty: any). A row is as the YAML job
// with the same fields: `ps: {replicas: N, resources: {cpu, memory}}`,
// `totalSteps`, `throughput: {model: M}`, `queue` and the workers'
// required node affinity `nvidia.com/gpu.product In [v100, p100]`.
inline constexpr std::string_view kNativeHeader =
    "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling";
inline constexpr std::string_view kNativeWideHeader =
    "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling,ps,ps_cpu,"
    "ps_memory,steps,model";
inline constexpr std::string_view kNativeQueueHeader =
    "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling,ps,ps_cpu,"
    "ps_memory,steps,model,queue";
inline constexpr std::string_view kNativeGpuTypeHeader =
    "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling,ps,ps_cpu,"
    "ps_memory,steps,model,queue,gpu_type";

// Required node affinity on the GPU type label: `nvidia.com/gpu.product In
// [types]` (the native `gpu_type` column; generated jobs that require a type).
core::NodeSelectorTerm GpuTypeTerm(std::vector<std::string> types);

// The model zoo's profile of a model name, or nullptr (sim::FindModel; the
// zoo is not config/'s).
using ModelLookup = const core::ThroughputProfile* (*)(std::string_view name);

// The workload in the native format: kNativeHeader when every job is given
// by its duration without PS (byte for byte what the format always wrote),
// kNativeGpuTypeHeader when a job's workers require GPU types, kNativeQueueHeader when a job
// names a queue, kNativeWideHeader otherwise. Only workers and PS with gpus (workers only), cpu
// and memory, no Chief, no node constraints (but the workers' GPU types: a nodeSelector of the
// type label alone, or one required term of one `In` on it) or containers, default
// priority and namespace, no delays, deadline or progress; the work a duration (and scaling), or
// steps and a model-zoo model: a throughput that is the model's own (a job read from YAML before
// the model is resolved, or whose table `find_model` says is the model's). Any other job is an
// error naming it and why.
core::Result<std::string> ToNativeCsv(const WorkloadSpec& workload,
                                      ModelLookup find_model = nullptr);

}  // namespace dlsched::config
