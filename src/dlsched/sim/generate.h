#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"

namespace dlsched::sim {

// Synthetic workloads and clusters, for scale tests and benchmarks.
//
// The generator draws every number from one std::mt19937_64 with its own
// integer-based distributions (std::uniform_*_distribution and friends are
// implementation-defined and differ between standard libraries), so a seed
// gives the same workload everywhere. Arrival times are whole milliseconds
// and totalSteps whole numbers, so the YAML holds them exactly.
// Most jobs `dlsched generate` writes (its YAML is built in memory).
inline constexpr int kMaxGeneratedJobs = 1'000'000;

struct GenerateOptions {
  int jobs = 100;
  uint64_t seed = 1;
  // Inter-arrival times are exponential with this mean (a Poisson process),
  // in seconds; 0 makes every job arrive at time 0.
  double mean_interarrival = 60;
  // Workers per job are drawn in [1, max_workers] with 1, 2, 4 and 8 most
  // likely (as in the Philly and Helios traces); each worker takes 1 GPU.
  int max_workers = 8;
  // Share of jobs that are elastic (minReplicas < maxReplicas).
  double elastic_fraction = 0.2;
  // totalSteps is log-uniform in [min_steps, max_steps]: many short jobs,
  // a long tail of long ones.
  double min_steps = 1000;
  double max_steps = 100000;
  std::string name_prefix = "job";
  // The cluster's GPU types (ClusterOptions::gpu_types) and the share of
  // jobs whose workers require one of them, drawn uniformly (a required
  // node affinity on core::kGpuTypeLabel). 0 draws nothing more: a seed
  // gives the workload it gave before.
  std::vector<std::string> gpu_types;
  double typed_fraction = 0;
  // The share of jobs whose workers each ask for a share of one GPU
  // (dlsched.io/gpu-milli: 100, 250, 500 or 750, drawn uniformly) instead
  // of a whole one; the cluster's nodes then take shares
  // (ClusterOptions::shared_gpus). 0 draws nothing more.
  double shared_fraction = 0;
  // kGavel: the jobs of Gavel's continuous traces (its scheduler/utils.py,
  // generate_job; docs/policies/gavel.md): no PS, a scale factor of 1, 2,
  // 4 or 8 one-GPU workers (70/10/15/5 %; capped at max_workers, so 1
  // gives its single-GPU trace), a model of its job types (the zoo's
  // entries in the proportion of Gavel's job templates: ResNet-18 5,
  // ResNet-50 4, Transformer 5, LM 5, Recommendation 5, A3C 1, CycleGAN 1;
  // at more than one GPU only the first four), and a duration of 10^x
  // minutes on v100s at its size, x uniform in [1.5, 3] (80 %) or [3, 4]
  // (20 %), as totalSteps. elastic_fraction, min_steps, max_steps and
  // typed_fraction do not apply.
  enum class Shape { kDefault, kGavel };
  Shape shape = Shape::kDefault;
};

// `options.jobs` jobs with 0-2 PS (cpu and memory only) and 1..max_workers
// workers of 1 GPU each, models from the model zoo (throughput tables filled
// in, as sim::LoadWorkload does), sorted by arrival. Errors name the option.
core::Result<config::WorkloadSpec> GenerateWorkload(const GenerateOptions& options);
// The checks of GenerateWorkload's options alone (its only errors), without
// making the jobs.
core::Status CheckGenerateOptions(const GenerateOptions& options);

// The load `workload` offers a cluster of `gpus` GPUs: the GPU-seconds its
// jobs ask for (each job's GPUs at its requested size times its running
// time there, alone, at full speed) over `gpus` times the span of its
// arrivals. 0 when it asks for no GPU; infinity when every job arrives at
// once.
double OfferedLoad(const config::WorkloadSpec& workload, int64_t gpus);

// `workload` with its arrivals scaled (around the first) so that it offers
// `load` to `gpus` GPUs; unchanged when it offers 0 or infinity.
config::WorkloadSpec WithLoad(const config::WorkloadSpec& workload, double load, int64_t gpus);

// The workload in the YAML format config::ParseWorkload reads. A job whose
// throughput is a model-zoo entry is written as {model: <name>}, any other as
// a table, a job given by its duration by `duration` (and `scaling`).
// Fields at their defaults are left out.
std::string WorkloadToYaml(const config::WorkloadSpec& workload);

// A cluster in the YAML format config::ParseCluster reads: one entry per
// node (no `count:` groups), `reserved` where set; events are not written.
std::string ClusterToYaml(const core::ClusterSpec& cluster);

// The nodes yaml-cpp counts in YAML these writers made (WorkloadToYaml,
// ClusterToYaml, ClusterYaml, with comment lines before them): one pass
// over the bytes, where config::internal::CountYamlNodes runs yaml-cpp's
// event parser (1.7 s per million nodes). Exact for what they write only:
// whole-line comments, plain scalars without ": ", ",", "[" or "]",
// double-quoted scalars, flow maps of key: value, flow lists
// (roundtrip_test.cc checks it against CountYamlNodes).
int64_t WrittenYamlNodes(std::string_view yaml);

// Whether dlsched reads back YAML these writers made: at most
// core::kMaxInputBytes, at most core::kMaxYamlNodes nodes (as every load
// checks a file). Errors read "<source>: ...".
core::Status CheckWrittenYaml(std::string_view yaml, std::string_view source);

struct ClusterOptions {
  int nodes = 16;
  int gpus_per_node = 8;
  int cpus_per_node = 64;
  int memory_gi_per_node = 512;
  int nodes_per_rack = 32;
  int racks_per_zone = 8;
  std::string gpu_model = "v100";
  // GPU types (a node's `gpuType`): the nodes are split into as many equal
  // groups (the first ones one node more), each in racks of its own, and
  // gpu-model is each group's type. Empty: no type, every rack gpu_model.
  std::vector<std::string> gpu_types;
  // Nodes take GPU shares: each lists dlsched.io/gpu-milli, 1000 per GPU.
  bool shared_gpus = false;
  // The command named in the file's first line.
  std::string generator = "dlsched generate";
};

// A cluster in the YAML format config::ParseCluster reads: one `count:`
// entry per rack, nodes named r<rack>-<i>, labelled with zone, rack and
// gpu-model, with a `gpuType` per rack when `gpu_types` are given. Errors
// name the option.
core::Result<std::string> ClusterYaml(const ClusterOptions& options);

}  // namespace dlsched::sim
