#pragma once

// Decoding the answer of a dlsched operator's GET /snapshot, for `dlsched
// snapshot` (cli/ internal; the command itself, which fetches it, is in
// snapshot_run.cc). Pure: no network, no files, so the tests and the fuzz
// target run it on any bytes in process.

#include <cstddef>
#include <string>
#include <string_view>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/core/node.h"

namespace dlsched::cli {

struct DecodedSnapshot {
  std::string cluster_yaml;   // written as OUT/cluster.yaml
  std::string workload_yaml;  // written as OUT/workload.yaml
  core::ClusterSpec cluster;  // both, read back as simulate will read them
  config::WorkloadSpec workload;
  // Jobs the operator knows no progress model for (written to never
  // finish): how many, and the first as JSON.
  size_t without_progress = 0;
  std::string without_progress_example;
};

// The body {"start", "cluster", "workload", "withoutProgress"} checked, its
// YAML parsed, and its run set up as `simulate` sets it up (the model zoo,
// sim::CheckStart: every placed job on a node with room for it), so that
// what `snapshot` writes runs. `from` (the --from address) and `out` (the directory the
// files go to) name the answer and the files in errors, which are one line:
// "--from X: /snapshot: expected a JSON object with cluster and workload
// YAML; ...", "--from X: /snapshot: its workload YAML has N bytes; ..."
// (over core::kMaxInputBytes, what dlsched reads back), "--from X: the
// operator has no unfinished TrainingJob: ...", or the YAML's or the run's
// own error naming OUT/cluster.yaml or OUT/workload.yaml.
core::Result<DecodedSnapshot> DecodeSnapshot(std::string_view body, const std::string& from,
                                             const std::string& out);

}  // namespace dlsched::cli
