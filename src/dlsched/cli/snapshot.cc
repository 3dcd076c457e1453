#include "dlsched/cli/snapshot.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/inputs.h"
#include "dlsched/core/limits.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {

core::Result<DecodedSnapshot> DecodeSnapshot(std::string_view body, const std::string& from,
                                             const std::string& out) {
  using nlohmann::json;
  // No exceptions: a malformed body (or a number beyond a double's range)
  // is a discarded value.
  const json root = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  const auto string_at = [&](const char* key) {
    const auto it = root.find(key);
    return it != root.end() && it->is_string();
  };
  if (!root.is_object() || !string_at("cluster") || !string_at("workload")) {
    return core::Errorf(
        "--from {}: /snapshot: expected a JSON object with cluster and workload YAML; is this a "
        "dlsched operator?",
        from);
  }
  DecodedSnapshot d;
  d.cluster_yaml = root["cluster"].get<std::string>();
  d.workload_yaml = root["workload"].get<std::string>();
  // Files dlsched would refuse to read are not written.
  for (const auto& [name, text] :
       {std::pair{"cluster", &d.cluster_yaml}, {"workload", &d.workload_yaml}}) {
    if (text->size() > core::kMaxInputBytes) {
      return core::Errorf(
          "--from {}: /snapshot: its {} YAML has {} bytes; dlsched reads input files of at most "
          "{} MiB",
          from, name, text->size(), core::kMaxInputBytes >> 20);
    }
  }
  // What is written must read back: the replay starts from these files.
  DLSCHED_TRY_LET(cluster, config::ParseCluster(d.cluster_yaml, out + "/cluster.yaml"));
  d.cluster = std::move(*cluster);
  if (d.workload_yaml == "jobs:\n" || d.workload_yaml.ends_with("\njobs:\n")) {
    return core::Errorf("--from {}: the operator has no unfinished TrainingJob: nothing to replay",
                        from);
  }
  DLSCHED_TRY_LET(workload, config::ParseWorkload(d.workload_yaml, out + "/workload.yaml"));
  d.workload = std::move(*workload);
  // ... and a run starts from them as `simulate` starts it: its models
  // known, its jobs able to finish, each placed job on a node with room.
  // (Their messages name OUT/workload.yaml, the workload's source.)
  DLSCHED_TRY(sim::ResolveWorkload(d.workload));
  DLSCHED_TRY_LET(engine, LoadEngine("gang-binpack"));
  DLSCHED_TRY(sim::CheckStart(d.cluster, d.workload, **engine));
  if (const auto it = root.find("withoutProgress"); it != root.end() && it->is_array()) {
    d.without_progress = it->size();
    if (!it->empty()) {
      d.without_progress_example = (*it)[0].dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  return d;
}

}  // namespace dlsched::cli
