#pragma once

// Loading what a run needs from its flags (cli/ internal): the cluster, the
// jobs of a workload or trace, the profiles built into engines; and the
// checks of where the results go, made before anything runs.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/cli/options.h"
#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/core/node.h"
#include "dlsched/engine/engine.h"

namespace dlsched::cli {

// --cluster tiresias:FILE: a Tiresias cluster spec CSV.
inline constexpr std::string_view kTiresiasPrefix = "tiresias:";

// A built-in profile name or a profile YAML file, `overrides` (--set's
// PATH=VALUE) applied, built into an engine.
core::Result<std::unique_ptr<engine::Engine>> LoadEngine(
    const std::string& profile_arg, std::span<const std::string> overrides = {});

// --cluster: a cluster YAML, or tiresias:FILE.
core::Result<core::ClusterSpec> LoadClusterArg(const std::string& arg);

// Whether `path` names a CSV file (by its extension, in any case).
bool IsCsvName(std::string_view path);

// The jobs of a run: the workload file, or the trace with its options. A
// trace's skipped rows are reported on stderr.
core::Result<config::WorkloadSpec> LoadJobs(const JobSource& s);

// The cluster and workload of a run, loaded and validated.
struct Inputs {
  core::ClusterSpec cluster;
  config::WorkloadSpec workload;
};
core::Result<Inputs> LoadInputs(const RunArgs& a);

// Everything a simulation needs, loaded and validated.
struct Loaded {
  Inputs inputs;
  std::unique_ptr<engine::Engine> engine;
};
core::Result<Loaded> Load(const RunArgs& a);

// The engines of compare's and sweep's --profiles, and a directory name
// for each (each profile's name, with "-2", "-3", ... for a name already
// taken, so two profiles that share a name never write to the same place).
struct LoadedProfiles {
  std::vector<std::unique_ptr<engine::Engine>> engines;
  std::vector<std::string> dirs;
  // Each profile as given: the built-in name or file, and its overrides.
  std::vector<std::string> bases;
  std::vector<std::vector<std::string>> overrides;
};
// `profiles` as --profiles gives them (NAME:PATH=VALUE[:PATH=VALUE...] is
// NAME with its own overrides, after `common_overrides`, --set's).
core::Result<LoadedProfiles> LoadProfiles(const std::vector<std::string>& profiles,
                                          const std::vector<std::string>& common_overrides);

// `--out` must name a directory dlsched may replace; checked before a run,
// so a long simulation does not end in a refusal. Errors read "--out: ...".
core::Status CheckOut(const std::string& dir);

// A file to write (generate's, convert's and size's --out): a device or a
// directory is never replaced by a file. Checked before anything runs: bad
// input, not a run that cannot write at its end. "" and "-" are stdout.
core::Status CheckOutFile(std::string_view flag, const std::string& path);

}  // namespace dlsched::cli
