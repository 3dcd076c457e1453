#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "dlsched/core/job.h"

namespace dlsched::sim {

// The model zoo: throughput profiles (workers -> steps/s) taken from published
// measurements, compiled in. A workload names one with
// `throughput: {model: <name>}`. docs/model-zoo.md lists the entries, where
// every number comes from and how the locality sensitivity was derived.
//
// All current entries come from Gavel (Narayanan et al., OSDI'20),
// stanford-futuredata/gavel commit c4fa400, MIT licence, file
// simulation_throughputs.json (an unchanged copy is in data/gavel/):
// the throughput of the job running alone ("null") on 1, 2, 4 or 8 GPUs of
// one type, one GPU counted as one worker: the table of the entry's `gpu`,
// and one per GPU type Gavel measured (ThroughputProfile::by_gpu_type).
struct ModelInfo {
  std::string_view name;      // zoo name, e.g. "resnet50"
  std::string_view source;    // human-readable citation
  std::string_view gpu;       // Gavel GPU type the table was measured on, e.g. "v100"
  std::string_view job_type;  // Gavel job type, e.g. "ResNet-50 (batch size 64)"
  // How locality_sensitivity was obtained (formula, or why it is 0).
  std::string_view locality_note;
  const core::ThroughputProfile* profile;  // never null; lives for the whole program
};

// Every entry, sorted by name (names are unique).
std::span<const ModelInfo> Models();

// The entry or profile called `name` (exact, case-sensitive match), or
// nullptr if the zoo has no such model.
const ModelInfo* FindModelInfo(std::string_view name);
const core::ThroughputProfile* FindModel(std::string_view name);

// The names of all entries, sorted.
std::vector<std::string_view> ModelNames();

}  // namespace dlsched::sim
