#pragma once

// The pieces of `dlsched sweep` that need no command line (cli/ internal;
// docs/sweeps.md): the grid and its cell order, load scaling, and the
// Kubernetes Indexed Job that runs the grid one cell per index.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/cli/runs.h"
#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/core/resources.h"
#include "dlsched/engine/engine.h"
#include "dlsched/sim/generate.h"

namespace dlsched::cli {

// --quota QUEUE[:RESOURCE]=V1,V2,...: one resource of one declared queue's
// nominal quota, a value per cell (docs/sweeps.md).
struct QuotaAxis {
  std::string queue;
  core::ResourceId resource = core::kGpu;
  std::vector<int64_t> values;  // canonical units, each once, as given
  // "team-a nvidia.com/gpu": sweep.csv's quota_of column.
  std::string Of() const;
  // Values[i] as a quantity ("8", "500m", "64Gi"): its cell directory.
  std::string Text(size_t i) const;
  // Values[i] in the resource's plain unit (cores for cpu): sweep.csv's
  // quota column.
  double Number(size_t i) const;
};

// profiles x quotas x loads x seeds. Cell i is profile p, quota q, load l,
// seed s with i = ((p * quotas + q) * loads + l) * seeds + s: profiles
// vary slowest, seeds fastest. Without seeds (a workload or trace file)
// the seed axis has one value, and without --quota the quota axis.
struct SweepGrid {
  std::vector<std::string> profiles;  // directory names, unique
  std::vector<double> loads;
  std::vector<uint64_t> seeds;  // empty: the jobs come from a file
  std::optional<QuotaAxis> quota{};

  struct Cell {
    size_t index = 0;
    size_t profile = 0;
    size_t quota = 0;  // 0 without --quota
    size_t load = 0;
    size_t seed = 0;  // 0 without seeds
  };
  size_t Seeds() const { return seeds.empty() ? 1 : seeds.size(); }
  size_t Quotas() const { return quota ? quota->values.size() : 1; }
  size_t size() const { return profiles.size() * Quotas() * loads.size() * Seeds(); }
  Cell At(size_t index) const;
  // "cells/<profile>[/quota-<Q>]/load-<L>[/seed-<S>]": where the cell's
  // files go under the sweep's directory.
  std::string CellDir(const Cell& cell) const;
};

// --quota's text parsed against `cluster`: QUEUE=V1,V2,... (the queue's
// nvidia.com/gpu quota) or QUEUE:RESOURCE=V1,... (a resource its quota
// lists), each value a Kubernetes quantity, none twice. Errors read
// "--quota: ...".
core::Result<QuotaAxis> ParseQuotaAxis(std::string_view text, const core::ClusterSpec& cluster);

// `cluster` with the axis's queue's nominal quota at values[i]; an error
// ("--quota V: ...") when the queue's lending limit would exceed it or
// its cohort's nominal quotas would add up past the limit.
core::Result<core::ClusterSpec> WithQuota(const core::ClusterSpec& cluster, const QuotaAxis& axis,
                                          size_t i);

// The range of a --load factor.
inline constexpr double kMinSweepLoad = 0.001;
inline constexpr double kMaxSweepLoad = 1e6;

// --load: each factor from 0.001 to 1e6, none twice (as sweep.csv prints
// them, to 6 decimals). Errors read
// "--load: ...".
core::Status CheckLoads(std::span<const double> loads);
// --seeds: none twice.
core::Status CheckSeeds(std::span<const uint64_t> seeds);

// The runs of `cells`: each its profile's engine (engines[cell.profile])
// on clusters[cell.quota], and its jobs made when it starts (RunRequest::make_workload)
// on the thread that runs it: the workload of `gen` with the cell's seed,
// without `base`, else a copy of `base` with its arrivals scaled (`base`
// itself at load 1). So a batch holds the workloads of the cells in flight,
// not of the grid.
std::vector<RunRequest> CellRuns(const SweepGrid& grid, std::span<const SweepGrid::Cell> cells,
                                 std::span<const core::ClusterSpec> clusters,
                                 std::span<const engine::Engine* const> engines,
                                 const config::WorkloadSpec* base, const sim::GenerateOptions& gen);

// Whether `scaled` (a workload whose arrivals were divided by `load`)
// keeps the limits of every workload: "--load L: SOURCE: FIELD: WHAT (the
// factor divides every arrival)" if not.
core::Status CheckScaledArrivals(const config::WorkloadSpec& scaled, double load);

// The workload at load factor `load`: every submit time divided by it (2
// makes arrivals twice as dense, 0.5 half as dense). Nothing else changes:
// job sizes, steps, deadlines (relative to submit) and the cluster's node
// events keep their values.
config::WorkloadSpec ScaleArrivals(const config::WorkloadSpec& workload, double load);
// The same, in place.
void ScaleArrivalsInPlace(config::WorkloadSpec& workload, double load);

// What the Indexed Job runs and where.
struct K8sJobOptions {
  std::string name = "dlsched-sweep";
  std::string image;  // default dlsched:<version>
  std::string pvc = "dlsched-sweep";
  std::string mount = "/data";  // the volume's path in the pod, its working directory
  int parallelism = 0;          // 0: min(cells, 10)
  int backoff_limit = 6;
  int backoff_limit_per_index = -1;  // -1: not set
};

// A batch/v1 Job (completionMode Indexed, one completion per cell) whose
// pods run `dlsched <args>` in `mount` (the volume) with $(JOB_COMPLETION_INDEX)
// expanded by Kubernetes; `args` holds it where the cell index goes. Every
// string is written as a double-quoted YAML scalar. `comment` lines open
// the file, each prefixed with "# ".
std::string K8sJobManifest(const K8sJobOptions& options, size_t cells,
                           std::span<const std::string> args, std::span<const std::string> comment);

}  // namespace dlsched::cli
