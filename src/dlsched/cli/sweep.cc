#include "dlsched/cli/sweep.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "dlsched/core/limits.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/core/text.h"
#include "dlsched/report/format.h"

namespace dlsched::cli {
namespace {

constexpr int kDefaultParallelism = 10;

// A double-quoted YAML scalar: JSON's string syntax is YAML's.
std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string QuotaAxis::Of() const {
  return fmt::format("{} {}", queue, core::ResourceName(resource));
}

std::string QuotaAxis::Text(size_t i) const {
  return core::FormatResourceAmount(resource, values[i]);
}

double QuotaAxis::Number(size_t i) const {
  const double v = static_cast<double>(values[i]);
  return resource == core::kCpu ? v / 1000 : v;  // millicores: cores
}

SweepGrid::Cell SweepGrid::At(size_t index) const {
  Cell c;
  c.index = index;
  c.seed = index % Seeds();
  c.load = index / Seeds() % loads.size();
  c.quota = index / Seeds() / loads.size() % Quotas();
  c.profile = index / Seeds() / loads.size() / Quotas();
  return c;
}

std::string SweepGrid::CellDir(const Cell& cell) const {
  std::string dir = fmt::format("cells/{}", profiles[cell.profile]);
  if (quota) dir += fmt::format("/quota-{}", quota->Text(cell.quota));
  dir += fmt::format("/load-{}", report::FormatNumber(loads[cell.load]));
  if (!seeds.empty()) dir += fmt::format("/seed-{}", seeds[cell.seed]);
  return dir;
}

namespace {

// Whether `cluster` may take the axis's value `i`: the queue's lending
// limit at most the new nominal, its cohort's nominal quotas within the
// limit. Reads the cluster, copies nothing.
core::Status CheckQuotaValue(const core::ClusterSpec& cluster, const QuotaAxis& axis, size_t i) {
  const int64_t value = axis.values[i];
  const std::string resource(core::ResourceName(axis.resource));
  std::string cohort;
  for (const core::QueueSpec& q : cluster.queues) {
    if (q.name != axis.queue) continue;
    cohort = q.cohort;
    const core::QuotaLine* l = q.Line(axis.resource);
    if (l != nullptr && l->lending_limit && *l->lending_limit > value) {
      return core::Errorf("--quota {}: queue {}'s {} lendingLimit {} is more than that nominal",
                          axis.Text(i), q.name, resource,
                          core::FormatResourceAmount(axis.resource, *l->lending_limit));
    }
  }
  int64_t total = 0;  // the cohort's nominal quotas, with the new value
  for (const core::QueueSpec& q : cluster.queues) {
    const bool member = cohort.empty() ? q.name == axis.queue : q.cohort == cohort;
    const core::QuotaLine* l = q.Line(axis.resource);
    if (member && l != nullptr) total += q.name == axis.queue ? value : l->nominal;
  }
  if (total > core::kMaxTotalAmount) {
    return core::Errorf("--quota {}: the nominal {} quotas of cohort {} add up to more than {}",
                        axis.Text(i), resource, cohort,
                        core::FormatResourceAmount(axis.resource, core::kMaxTotalAmount));
  }
  return {};
}

}  // namespace

core::Result<QuotaAxis> ParseQuotaAxis(std::string_view text, const core::ClusterSpec& cluster) {
  const size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0) {
    return core::Errorf(
        "--quota: expected QUEUE=V1,V2,... or QUEUE:RESOURCE=V1,V2,... (e.g. "
        "team-a=4,8,16), got '{}'",
        core::EscapeText(text));
  }
  QuotaAxis axis;
  std::string_view target = text.substr(0, eq);
  std::string resource = "nvidia.com/gpu";
  if (const size_t colon = target.rfind(':'); colon != std::string_view::npos) {
    resource = std::string(target.substr(colon + 1));
    target = target.substr(0, colon);
  }
  axis.queue = std::string(target);
  const core::QueueSpec* queue = nullptr;
  for (const core::QueueSpec& q : cluster.queues) {
    if (q.name == axis.queue) queue = &q;
  }
  if (queue == nullptr) {
    if (cluster.queues.empty()) {
      return core::Errorf("--quota: the cluster declares no queues (docs/queues.md)");
    }
    std::vector<std::string> names;
    for (const core::QueueSpec& q : cluster.queues) names.push_back(q.name);
    return core::Errorf("--quota: the cluster declares no queue '{}' (it has: {})",
                        core::EscapeText(axis.queue),
                        core::EscapeText(fmt::format("{}", fmt::join(names, ", "))));
  }
  const int id = core::FindResource(resource);
  if (id < 0 || queue->Line(static_cast<core::ResourceId>(id)) == nullptr) {
    return core::Errorf(
        "--quota: queue {} has no {} quota to vary (its quota lists the resources it limits)",
        axis.queue, core::EscapeText(resource));
  }
  axis.resource = static_cast<core::ResourceId>(id);
  std::string_view list = text.substr(eq + 1);
  std::set<int64_t> seen;
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    auto v = core::ParseResourceAmount(axis.resource, item);
    if (!v) {
      return core::Errorf("--quota: {}", v.error().message);
    }
    if (*v > core::kMaxAmount) {
      return core::Errorf("--quota: {} is more than the limit of {}", core::EscapeText(item),
                          core::FormatResourceAmount(axis.resource, core::kMaxAmount));
    }
    if (!seen.insert(*v).second) {
      return core::Errorf("--quota: {} is given twice",
                          core::FormatResourceAmount(axis.resource, *v));
    }
    axis.values.push_back(*v);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  for (size_t i = 0; i < axis.values.size(); ++i) DLSCHED_TRY(CheckQuotaValue(cluster, axis, i));
  return axis;
}

core::Result<core::ClusterSpec> WithQuota(const core::ClusterSpec& cluster, const QuotaAxis& axis,
                                          size_t i) {
  DLSCHED_TRY(CheckQuotaValue(cluster, axis, i));
  core::ClusterSpec out = cluster;
  for (core::QueueSpec& q : out.queues) {
    if (q.name != axis.queue) continue;
    for (core::QuotaLine& l : q.quota) {
      if (l.id == axis.resource) l.nominal = axis.values[i];
    }
  }
  return out;
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
                                 std::span<const core::ClusterSpec> clusters,
                                 std::span<const engine::Engine* const> engines,
                                 const config::WorkloadSpec* base,
                                 const sim::GenerateOptions& gen) {
  std::vector<RunRequest> runs;
  runs.reserve(cells.size());
  for (const SweepGrid::Cell& c : cells) {
    RunRequest& r = runs.emplace_back();
    r.cluster = &clusters[c.quota];
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
