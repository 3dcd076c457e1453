#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlsched/core/error.h"

namespace dlsched::config {

// Alibaba's cluster-trace-gpu-v2023 ("openb", the trace of the FGD paper;
// data/openb/, docs/sharing.md): a node list and pod lists, CSV files with
// a header. Errors are one line naming the file, the line and the column:
//   "openb_pod_list_default.csv:17: gpu_milli: expected an integer in
//   [0, 1000], got 'x'".

// openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model.
struct OpenbNode {
  std::string name;        // sn
  int64_t cpu_milli = 0;   // CPU, millicores
  int64_t memory_mib = 0;  // memory, MiB
  int gpus = 0;            // gpu: devices
  std::string model;       // the GPU type ("" without GPUs)
};

// openb_pod_list_*.csv: name,cpu_milli,memory_mib,num_gpu,gpu_milli and,
// when the file has the column, gpu_spec (the GPU types it may use, "T4" or
// "V100M16|V100M32"; empty: any). The other columns (qos, phase, times) are
// not read: the FGD experiment places pods in order and none leaves.
struct OpenbPod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;    // 0..8 in the trace
  int gpu_milli = 0;  // per GPU: 1000 whole, 1..999 a share of one GPU
  std::vector<std::string> gpu_spec;
};

// Reads a node list. Fails on the first bad row, and when there is no node.
core::Result<std::vector<OpenbNode>> LoadOpenbNodes(const std::string& path);

// Reads a pod list. A pod asks for no GPU (num_gpu 0, gpu_milli 0), a
// share of one GPU (num_gpu 1, gpu_milli in [1, 999]) or whole GPUs
// (gpu_milli 1000); anything else is a bad row. Fails on the first bad
// row, and when there is no pod.
core::Result<std::vector<OpenbPod>> LoadOpenbPods(const std::string& path);

}  // namespace dlsched::config
