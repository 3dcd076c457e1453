// `dlsched snapshot` itself: the Kubernetes client asks the operator.
// Linked into dlsched-k8s only (see operator_exec.cc).
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/snapshot.h"
#include "dlsched/cli/snapshot_command.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/rest_client.h"
#include "dlsched/k8s/rest_config.h"
#include "dlsched/report/output_dir.h"

namespace dlsched::cli {

int TakeSnapshot(const SnapshotArgs& a, int /*argc*/, char** /*argv*/) {
  k8s::RestConfig config;
  config.server = a.from;
  if (config.server.find("://") == std::string::npos) config.server = "http://" + config.server;
  while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
  config.timeout_seconds = a.timeout;
  config.max_response_bytes = a.max_response_bytes;
  k8s::RestClient client(config);
  auto response = client.Request("GET", "/snapshot");
  if (!response) {
    PrintError(fmt::format("--from {}: {}", a.from, response.error().message));
    return kRunFailed;
  }
  if (response->status != 200) {
    PrintError(fmt::format("--from {}: /snapshot answered HTTP {}: {}", a.from, response->status,
                           core::EscapeText(response->body, 200)));
    return kRunFailed;
  }
  auto snap = DecodeSnapshot(response->body, a.from, a.out);
  if (!snap) return RunFailed(snap.error());
  const std::string cluster_file = a.out + "/cluster.yaml";
  const std::string workload_file = a.out + "/workload.yaml";
  auto out = report::OutputDir::Open(a.out);
  if (!out) return BadInput(out.error());
  for (auto [name, text] :
       {std::pair{"cluster.yaml", &snap->cluster_yaml}, {"workload.yaml", &snap->workload_yaml}}) {
    if (auto st = out->Add(name, *text); !st) return RunFailed(st.error());
  }
  if (auto st = out->Commit(); !st) return RunFailed(st.error());
  int running = 0;
  for (const core::JobSpec& job : snap->workload.jobs) running += job.initial ? 1 : 0;
  std::printf("%s: %zu nodes\n%s: %zu jobs (%d placed, %zu waiting), continuing at t=%s s\n",
              cluster_file.c_str(), snap->cluster.nodes.size(), workload_file.c_str(),
              snap->workload.jobs.size(), running, snap->workload.jobs.size() - running,
              fmt::format("{:g}", snap->workload.start).c_str());
  if (snap->without_progress > 0) {
    std::fprintf(stderr,
                 "dlsched: note: %zu job(s) give no totalSteps or throughput table (e.g. %s): "
                 "written to train 1 step/s for 1e9 steps, so they never finish in a replay\n",
                 snap->without_progress,
                 core::EscapeText(snap->without_progress_example, 200).c_str());
  }
  return kOk;
}

}  // namespace dlsched::cli
