#include "dlsched/cli/sweep.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/core/spec_limits.h"
#include "dlsched/report/format.h"

namespace dlsched::cli {
namespace {

constexpr int kDefaultParallelism = 10;

// A double-quoted YAML scalar: JSON's string syntax is YAML's.
std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

SweepGrid::Cell SweepGrid::At(size_t index) const {
  Cell c;
  c.index = index;
  c.seed = index % Seeds();
  c.load = index / Seeds() % loads.size();
  c.profile = index / Seeds() / loads.size();
  return c;
}

std::string SweepGrid::CellDir(const Cell& cell) const {
  std::string dir = fmt::format("cells/{}/load-{}", profiles[cell.profile],
                                report::FormatNumber(loads[cell.load]));
  if (!seeds.empty()) dir += fmt::format("/seed-{}", seeds[cell.seed]);
  return dir;
}

core::Status CheckLoads(std::span<const double> loads) {
  std::set<double> seen;
  for (double l : loads) {
    if (!std::isfinite(l) || l < kMinSweepLoad || l > kMaxSweepLoad) {
      return core::Errorf("--load: expected factors from {:g} to {:g}, got {}", kMinSweepLoad,
                          kMaxSweepLoad, l);
    }
    // Two factors that print alike would share a cell directory.
    if (!seen.insert(report::RoundForOutput(l)).second) {
      return core::Errorf("--load: {} is given twice", report::FormatNumber(l));
    }
  }
  return {};
}

core::Status CheckSeeds(std::span<const uint64_t> seeds) {
  std::set<uint64_t> seen;
  for (uint64_t s : seeds) {
    if (!seen.insert(s).second) return core::Errorf("--seeds: {} is given twice", s);
  }
  return {};
}

std::vector<RunRequest> CellRuns(const SweepGrid& grid, std::span<const SweepGrid::Cell> cells,
                                 const core::ClusterSpec& cluster,
                                 std::span<const engine::Engine* const> engines,
                                 const config::WorkloadSpec* base,
                                 const sim::GenerateOptions& gen) {
  std::vector<RunRequest> runs;
  runs.reserve(cells.size());
  for (const SweepGrid::Cell& c : cells) {
    RunRequest& r = runs.emplace_back();
    r.cluster = &cluster;
    r.engine = engines[c.profile];
    const double load = grid.loads[c.load];
    if (base == nullptr) {
      sim::GenerateOptions options = gen;
      if (!grid.seeds.empty()) options.seed = grid.seeds[c.seed];
      r.jobs = static_cast<size_t>(options.jobs);
      r.make_workload = [options, load]() -> core::Result<config::WorkloadSpec> {
        auto w = sim::GenerateWorkload(options);
        if (!w) return w;
        ScaleArrivalsInPlace(*w, load);
        DLSCHED_TRY(CheckScaledArrivals(*w, load));
        return w;
      };
    } else if (load == 1) {
      r.workload = base;
    } else {
      r.jobs = base->jobs.size();
      r.make_workload = [base, load]() -> core::Result<config::WorkloadSpec> {
        return ScaleArrivals(*base, load);
      };
    }
  }
  return runs;
}

core::Status CheckScaledArrivals(const config::WorkloadSpec& scaled, double load) {
  if (auto p = core::CheckJobsLimits(scaled.jobs, scaled.start)) {
    return core::Errorf("--load {}: {}: {}: {} (the factor divides every arrival)",
                        report::FormatNumber(load), scaled.source, p->field, p->what);
  }
  return {};
}

config::WorkloadSpec ScaleArrivals(const config::WorkloadSpec& workload, double load) {
  config::WorkloadSpec out = workload;
  ScaleArrivalsInPlace(out, load);
  return out;
}

void ScaleArrivalsInPlace(config::WorkloadSpec& workload, double load) {
  // Division keeps the order of arrivals, so the jobs stay sorted.
  for (auto& job : workload.jobs) job.submit_time /= load;
}

std::string K8sJobManifest(const K8sJobOptions& o, size_t cells, std::span<const std::string> args,
                           std::span<const std::string> comment) {
  std::string y;
  for (const auto& line : comment) y += "# " + line + "\n";
  const int parallelism = o.parallelism > 0
                              ? o.parallelism
                              : static_cast<int>(std::min<size_t>(cells, kDefaultParallelism));
  const std::string labels = fmt::format(
      "    app.kubernetes.io/name: dlsched\n"
      "    app.kubernetes.io/component: sweep\n"
      "    app.kubernetes.io/instance: {}\n",
      Quote(o.name));
  y += "apiVersion: batch/v1\nkind: Job\nmetadata:\n";
  y += fmt::format("  name: {}\n  labels:\n{}", Quote(o.name), labels);
  y += "spec:\n  completionMode: Indexed\n";
  y += fmt::format("  completions: {}\n  parallelism: {}\n  backoffLimit: {}\n", cells, parallelism,
                   o.backoff_limit);
  if (o.backoff_limit_per_index >= 0) {
    y += fmt::format("  backoffLimitPerIndex: {}\n", o.backoff_limit_per_index);
  }
  y += "  template:\n    metadata:\n      labels:\n";
  for (size_t at = 0, next; at < labels.size(); at = next + 1) {
    next = labels.find('\n', at);
    y += "    " + labels.substr(at, next - at + 1);
  }
  y += "    spec:\n      restartPolicy: Never\n";
  // The image runs as 65532 (deploy/Dockerfile): the volume is made
  // writable for that group.
  y += "      securityContext:\n        fsGroup: 65532\n";
  y += "      containers:\n      - name: sweep\n";
  y += fmt::format("        image: {}\n", Quote(o.image));
  y += "        command: [\"dlsched\"]\n        args:\n";
  for (const auto& a : args) y += "        - " + Quote(a) + "\n";
  y += fmt::format("        workingDir: {}\n", Quote(o.mount));
  // Kubernetes sets it in Indexed Jobs; declared here too, from the pod's
  // annotation, so that $(JOB_COMPLETION_INDEX) in args expands on any
  // version that has Indexed Jobs.
  y += "        env:\n        - name: JOB_COMPLETION_INDEX\n          valueFrom:\n";
  y += "            fieldRef:\n";
  y +=
      "              fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']\n";
  y += "        resources:\n          requests:\n            cpu: \"1\"\n";
  y += "        volumeMounts:\n        - name: data\n";
  y += fmt::format("          mountPath: {}\n", Quote(o.mount));
  y += "      volumes:\n      - name: data\n        persistentVolumeClaim:\n";
  y += fmt::format("          claimName: {}\n", Quote(o.pvc));
  return y;
}

}  // namespace dlsched::cli
