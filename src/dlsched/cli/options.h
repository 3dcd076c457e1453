#pragma once

// Options several subcommands share, so that each means one thing
// everywhere, and the checks every number and list flag goes through
// (cli/ internal).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "dlsched/cli/report_command.h"
#include "dlsched/core/error.h"
#include "dlsched/sim/generate.h"

namespace dlsched::cli {

// -q/--quiet, on every command that takes it: no tables and no progress
// line; the line saying where the results went, and errors, still print.
CLI::Option* AddQuietOption(CLI::App* cmd, bool* quiet);

// The check of a number flag, as CLI11 reads it: a finite number (NaN and
// the infinities are refused; CLI::Range let NaN through) from `min` to
// `max`, which the error states as people write them, e.g. "--resync:
// expected a number from 0.1 to 3600, got 'nan'" (CLI::NonNegativeNumber
// printed its bound, DBL_MAX, in 300 digits).
CLI::Validator NumberIn(double min, double max);
// The same for a whole number: "--k8s-parallelism: expected an integer from
// 0 to 1000000, got '-1'".
CLI::Validator IntegerIn(int64_t min, int64_t max);

// --threads/-j of compare, sweep and rerun: runs at once, 0 (one per core)
// to kMaxThreads (cli/runs.h).
CLI::Option* AddThreadsOption(CLI::App* cmd, int* threads, const std::string& help);

// A comma-separated list as a list flag takes it ("fifo,las"): its items,
// each non-empty. Errors read "<flag>: expected a comma-separated list
// without empty items, got ',,,'".
core::Result<std::vector<std::string>> SplitList(std::string_view flag, std::string_view text);

// A list flag: comma-separated items, the flag repeatable (-p a,b -p c, or
// -p a b). Every item must be there: CLI11's own delimiter dropped empty
// items, so `-p ,,,` had no value and took the next option (-o) as one.
// Items convert to T (std::string, double or uint64_t), with errors that
// name the flag and the item.
template <typename T>
CLI::Option* AddListOption(CLI::App* cmd, const std::string& names, std::vector<T>* items,
                           const std::string& description);

// Where a run's jobs come from: a workload YAML or a trace (docs/traces.md).
struct JobSource {
  std::string workload;
  std::string trace;  // FORMAT:FILE
  std::string vcs;    // philly virtual clusters, comma-separated
  std::string from;
  std::string until;
  std::string elastic;
  std::string scaling;  // empty: linear
  std::string pollux_traces;
  int64_t limit = 0;
  bool skip_bad_rows = false;
  std::optional<double> launch_delay;      // --launch-delay
  std::optional<double> checkpoint_delay;  // --checkpoint-delay
};

// What a run of simulate, explain, compare or sweep is given.
struct RunArgs {
  std::string cluster;
  JobSource jobs;
  std::string profile = "gang-binpack";
  std::vector<std::string> overrides;  // --set PATH=VALUE, for every profile
  std::string report;                  // --report FILE of simulate, compare and sweep
  PageArgs page;                       // --log-axis, --baseline (with --report)
  std::string window;                  // --window FROM:TO
  bool alone = false;                  // --alone
};

// --alone of simulate, compare and sweep: finish-time fairness.
void AddAloneOption(CLI::App* cmd, bool* alone);

// --window's help on simulate, compare and sweep (each adds its own end).
inline constexpr std::string_view kRunWindowHelp =
    "Measure the run over the jobs submitted in [FROM, TO) (seconds; FROM: runs to the end, "
    "e.g. 3600: drops a first hour of warm-up): JCT, slowdown, counts and the rest count those "
    "jobs only, utilisation is averaged over [FROM, TO]; the window is recorded in "
    "summary.json";

// --workload or --trace and the trace's options (--vc, --from, --until,
// --limit, --elastic, --scaling, --pollux-traces, --skip-bad-rows).
void AddJobSourceOptions(CLI::App* cmd, JobSource* s);

// --set PATH=VALUE, repeatable.
void AddSetOption(CLI::App* cmd, std::vector<std::string>* overrides);

// --cluster (required), the job source, --profile and --set.
void AddRunOptions(CLI::App* cmd, RunArgs* a);

// The shape of a generated workload: generate's options, which sweep
// shares (its --jobs and --seeds are its own). Returns them, so that sweep
// can make them need its --jobs.
std::vector<CLI::Option*> AddWorkloadShapeOptions(CLI::App* cmd, sim::GenerateOptions* gen);

}  // namespace dlsched::cli
