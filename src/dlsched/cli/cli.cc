#include "dlsched/cli/cli.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <ranges>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "dlsched/cli/operator_command.h"
#include "dlsched/cli/options.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/cli/report_command.h"
#include "dlsched/cli/rerun_command.h"
#include "dlsched/cli/runs.h"
#include "dlsched/cli/size.h"
#include "dlsched/cli/sweep.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/core/text.h"
#include "dlsched/engine/engine.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/policy/registry.h"
#include "dlsched/report/format.h"
#include "dlsched/report/json_writer.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/report/outputs.h"
#include "dlsched/report/provenance.h"
#include "dlsched/report/sweep.h"
#include "dlsched/report/table.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

constexpr int kOk = 0;
constexpr int kRunFailed = 1;
constexpr int kBadInput = 2;
constexpr int kInterrupted = 130;  // 128 + SIGINT, as shells report it

// Messages echo user text (file names, field names, values): escaped, so
// each is one line whatever the input held.
constexpr size_t kMaxMessageBytes = 4096;

void PrintError(std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "dlsched: %s\n", core::EscapeMessage(message, kMaxMessageBytes).c_str());
}

int BadInput(const core::Error& e) {
  PrintError(e.message);
  return kBadInput;
}

int RunFailed(const core::Error& e) {
  PrintError(e.message);
  return kRunFailed;
}

// The inputs did not load: bad input, or a Ctrl-C that stopped a trace's
// load (exit 130, as a run interrupted).
int LoadFailed(const core::Error& e) {
  if (!StopSignals::Stopped()) return BadInput(e);
  PrintError(e.message + "; nothing was run or written");
  return kInterrupted;
}

// `--out` must name a directory dlsched may replace; checked before a run,
// so a long simulation does not end in a refusal.
core::Status CheckOut(const std::string& dir) {
  if (auto st = report::CheckOutputDir(dir); !st) {
    return core::MakeError("--out: " + st.error().message);
  }
  return {};
}

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
};

struct RunArgs {
  std::string cluster;
  JobSource jobs;
  std::string profile = "gang-binpack";
  std::vector<std::string> overrides;  // --set PATH=VALUE, for every profile
  std::string report;                  // --report FILE of simulate, compare and sweep
  PageArgs page;                       // --log-axis, --baseline (with --report)
  std::string window;                  // --window FROM:TO
};

constexpr std::string_view kRunWindowHelp =
    "Measure the run over the jobs submitted in [FROM, TO) (seconds; FROM: runs to the end, "
    "e.g. 3600: drops a first hour of warm-up): JCT, slowdown, counts and the rest count those "
    "jobs only, utilisation is averaged over [FROM, TO]; the window is recorded in "
    "summary.json";

// --workload or --trace and the trace's options.
void AddJobSourceOptions(CLI::App* cmd, JobSource* s) {
  auto* workload =
      cmd->add_option("--workload,-w", s->workload, "Workload YAML (jobs with arrival times)");
  auto* trace = cmd->add_option(
      "--trace,-t", s->trace,
      "A job trace instead of a workload, as FORMAT:FILE: tiresias:, philly:, pollux: or "
      "native: (docs/traces.md), e.g. tiresias:data/tiresias/60_job.csv");
  workload->excludes(trace);
  trace->excludes(workload);
  cmd->add_option("--vc", s->vcs,
                  "philly: keep only these virtual clusters (comma-separated ids, e.g. 6214e9)")
      ->needs(trace);
  cmd->add_option("--from", s->from,
                  "philly: keep jobs submitted at or after this UTC time (YYYY-MM-DD[ HH:MM:SS])")
      ->needs(trace);
  cmd->add_option("--until", s->until, "philly: keep jobs submitted before this UTC time")
      ->needs(trace);
  cmd->add_option("--limit", s->limit, "Keep only the first N jobs of the trace (file order)")
      ->check(IntegerIn(1, std::numeric_limits<int64_t>::max()))
      ->needs(trace);
  cmd->add_option("--elastic", s->elastic,
                  "Make trace jobs elastic: MIN:MAX factors of each job's GPU count, e.g. 0.5:2 "
                  "(default: rigid; not for native traces, whose rows state their range)")
      ->needs(trace);
  cmd->add_option(
         "--scaling", s->scaling,
         "How a trace job's speed follows its size when resized: linear (default), "
         "sqrt, none or amdahl:P (not for pollux, whose speeds Pollux measured, nor native, "
         "whose rows say)")
      ->needs(trace);
  cmd->add_option("--pollux-traces", s->pollux_traces,
                  "pollux: the directory of Pollux's measurements (<application>/placements.csv "
                  "...); default: traces/ beside the workload's directory")
      ->needs(trace);
  cmd->add_flag("--skip-bad-rows", s->skip_bad_rows,
                "Skip malformed trace rows (counted on stderr) instead of failing on the first")
      ->needs(trace);
}

void AddSetOption(CLI::App* cmd, std::vector<std::string>* overrides) {
  cmd->add_option("--set", *overrides,
                  "Change the profile before the run: PATH=VALUE, PATH its keys joined by '.' "
                  "(order.args.kappa=2, sizer.args.vBound=0.3, protectFactor=3, "
                  "scorers.0.weight=2); repeatable. The profile is named after it "
                  "(kod2-kappa-2) unless it sets name=");
}

void AddRunOptions(CLI::App* cmd, RunArgs* a) {
  cmd->add_option("--cluster,-c", a->cluster,
                  "Cluster YAML (nodes and their resources), or tiresias:FILE for a Tiresias "
                  "cluster spec CSV (e.g. tiresias:data/tiresias/n32g4.csv)")
      ->required();
  AddJobSourceOptions(cmd, &a->jobs);
  cmd->add_option("--profile,-p", a->profile,
                  "Scheduler profile: a built-in name (see `dlsched profiles`) or a profile YAML")
      ->capture_default_str();
  AddSetOption(cmd, &a->overrides);
}

constexpr std::string_view kTiresiasPrefix = "tiresias:";

// The most the counts of --emit-k8s-job's Job may be (int32, as Kubernetes
// keeps them).
constexpr int64_t kMaxK8sCount = std::numeric_limits<int32_t>::max();

core::Result<core::ClusterSpec> LoadClusterArg(const std::string& arg) {
  if (arg.starts_with(kTiresiasPrefix)) {
    return config::LoadTiresiasCluster(arg.substr(kTiresiasPrefix.size()));
  }
  // "tiresais:FILE" is a misspelt format, not a file of that name.
  const size_t colon = arg.find(':');
  std::error_code ec;
  if (colon != std::string::npos && arg.find('/') > colon && !std::filesystem::exists(arg, ec)) {
    constexpr std::string_view kFormats[] = {"tiresias"};
    const std::string hint = core::DidYouMean(arg.substr(0, colon), kFormats);
    if (!hint.empty()) {
      return core::Errorf("--cluster: '{}': expected a cluster YAML or tiresias:FILE{}", arg, hint);
    }
  }
  return config::LoadCluster(arg);
}

// Whether `path` names a CSV file (by its extension, in any case).
bool IsCsvName(std::string_view path) {
  if (path.size() < 4) return false;
  std::string ext(path.substr(path.size() - 4));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".csv";
}

// The jobs of a run: the workload file, or the trace with its options. A
// trace's skipped rows are reported on stderr.
core::Result<config::WorkloadSpec> LoadJobs(const JobSource& s) {
  if (s.trace.empty()) {
    if (s.workload.empty()) {
      return core::MakeError("give the jobs with --workload FILE or --trace FORMAT:FILE");
    }
    if (IsCsvName(s.workload)) {
      return core::Errorf(
          "--workload: {} is a CSV file; --workload reads workload YAML. Give a trace as "
          "--trace FORMAT:FILE (-t), FORMAT one of tiresias, philly, pollux, native "
          "(docs/traces.md), e.g. -t native:{}",
          s.workload, s.workload);
    }
    return sim::LoadWorkload(s.workload);
  }
  auto o = config::ParseTraceArg(s.trace);
  if (!o) return std::unexpected(o.error());
  o->stop = StopSignals::Flag();
  o->skip_bad_rows = s.skip_bad_rows;
  o->limit = s.limit;
  if (!s.vcs.empty()) {
    if (o->format != config::TraceFormat::kPhilly) {
      return core::MakeError("--vc: applies to philly traces only");
    }
    auto vcs = SplitList("--vc", s.vcs);
    if (!vcs) return std::unexpected(vcs.error());
    o->virtual_clusters = std::move(*vcs);
  }
  for (auto [flag, text, out] :
       {std::tuple{"--from", &s.from, &o->from}, std::tuple{"--until", &s.until, &o->until}}) {
    if (text->empty()) continue;
    if (o->format != config::TraceFormat::kPhilly) {
      return core::Errorf("{}: applies to philly traces only", flag);
    }
    auto t = config::ParseTimestamp(*text);
    if (!t) return core::Errorf("{}: {}", flag, t.error().message);
    *out = *t;
  }
  if (!s.elastic.empty()) {
    if (o->format == config::TraceFormat::kNative) {
      return core::MakeError(
          "--elastic: does not apply to native traces (each row states its min_workers and "
          "max_workers)");
    }
    if (auto st = config::ParseElastic(s.elastic, *o); !st) return std::unexpected(st.error());
  }
  if (!s.scaling.empty()) {
    if (o->format == config::TraceFormat::kPollux || o->format == config::TraceFormat::kNative) {
      return core::Errorf(
          "--scaling: does not apply to {} traces ({})", config::TraceFormatName(o->format),
          o->format == config::TraceFormat::kPollux ? "their speed at each size is Pollux's model"
                                                    : "each row states its own scaling");
    }
    auto curve = core::ScalingCurve::Parse(s.scaling);
    if (!curve) return core::Errorf("--scaling: {}", curve.error().message);
    o->scaling = *curve;
  }
  if (!s.pollux_traces.empty()) {
    if (o->format != config::TraceFormat::kPollux) {
      return core::MakeError("--pollux-traces: applies to pollux traces only");
    }
    o->pollux_traces = s.pollux_traces;
  }
  auto load = config::LoadTrace(*o);
  if (!load) return std::unexpected(load.error());
  if (load->skipped > 0) {
    std::fprintf(stderr, "dlsched: %s: skipped %lld bad rows of %lld (the first: %s)\n",
                 core::EscapeText(o->path, kMaxMessageBytes).c_str(),
                 static_cast<long long>(load->skipped), static_cast<long long>(load->rows),
                 core::EscapeText(load->first_skipped, kMaxMessageBytes).c_str());
  }
  if (auto st = sim::ResolveWorkload(load->workload); !st) return std::unexpected(st.error());
  return std::move(load->workload);
}

// The cluster and workload of a run, loaded and validated.
struct Inputs {
  core::ClusterSpec cluster;
  config::WorkloadSpec workload;
};

core::Result<Inputs> LoadInputs(const RunArgs& a) {
  Inputs out;
  auto cluster = LoadClusterArg(a.cluster);
  if (!cluster) return std::unexpected(cluster.error());
  out.cluster = std::move(*cluster);
  auto workload = LoadJobs(a.jobs);
  if (!workload) return std::unexpected(workload.error());
  out.workload = std::move(*workload);
  return out;
}

// Everything a simulation needs, loaded and validated.
struct Loaded {
  Inputs inputs;
  std::unique_ptr<engine::Engine> engine;
};

core::Result<Loaded> Load(const RunArgs& a) {
  auto inputs = LoadInputs(a);
  if (!inputs) return std::unexpected(inputs.error());
  auto engine = LoadEngine(a.profile, a.overrides);
  if (!engine) return std::unexpected(engine.error());
  return Loaded{std::move(*inputs), std::move(*engine)};
}

// What a result directory records of a run of `cluster` and `jobs`
// (report/provenance.h): the version, the command, the input files with
// their SHA-256 and the --window as given; the caller adds the profiles and
// the seeds.
core::Result<report::Provenance> RunProvenance(const std::vector<std::string>& command,
                                               const std::string& cluster, const JobSource& jobs,
                                               const std::string& window) {
  report::Provenance p;
  if (!window.empty()) p.window = window;
  p.version = DLSCHED_VERSION;
  p.command = command;
  core::Status st =
      cluster.starts_with(kTiresiasPrefix)
          ? AddInputFile(p, "cluster", "tiresias", cluster.substr(kTiresiasPrefix.size()))
          : AddInputFile(p, "cluster", "", cluster);
  if (st && !jobs.workload.empty()) st = AddInputFile(p, "workload", "", jobs.workload);
  if (st && !jobs.trace.empty()) {
    auto o = config::ParseTraceArg(jobs.trace);
    if (!o) return std::unexpected(o.error());
    st = AddInputFile(p, "trace", std::string(config::TraceFormatName(o->format)), o->path);
    if (st && o->format == config::TraceFormat::kPollux) {
      o->pollux_traces = jobs.pollux_traces;
      st = AddInputTree(p, "pollux-traces", config::PolluxTracesDir(*o));
    }
  }
  if (!st) return std::unexpected(st.error());
  return p;
}

int Simulate(const RunArgs& a, const std::string& out_dir, bool quiet, bool job_table,
             const std::vector<std::string>& command) {
  const StopSignals signals;
  auto window = ParseWindow(a.window);
  if (!window) return BadInput(window.error());
  auto loaded = Load(a);
  if (!loaded) return LoadFailed(loaded.error());
  const std::string profile = loaded->engine->profile().name;
  if (auto st = CheckBaseline(a.page.baseline, {&profile, 1}); !st) return BadInput(st.error());
  const std::string dir =
      out_dir.empty() ? fmt::format("out/{}", loaded->engine->profile().name) : out_dir;
  if (auto st = CheckOut(dir); !st) return BadInput(st.error());
  auto provenance = RunProvenance(command, a.cluster, a.jobs, a.window);
  if (!provenance) return BadInput(provenance.error());
  if (auto st = AddProfile(*provenance, a.profile, a.overrides, loaded->engine->profile().name);
      !st) {
    return BadInput(st.error());
  }
  RunRequest run;
  run.cluster = &loaded->inputs.cluster;
  run.workload = &loaded->inputs.workload;
  run.engine = loaded->engine.get();
  bool interrupted = false;
  auto results =
      RunAll({&run, 1}, {.threads = 1, .show_progress = !quiet && ::isatty(2) == 1}, &interrupted);
  auto& result = results[0];
  if (!result) return BadInput(result.error());
  const metrics::RunSummary summary = metrics::Summarize(result->run, *window);
  if (!quiet) {
    std::fputs(report::FormatSummary(summary).c_str(), stdout);
    if (job_table) std::printf("\n%s", report::FormatJobs(result->run).c_str());
  }
  auto out = report::OutputDir::Open(dir);
  if (!out) return RunFailed(out.error());
  if (auto st = report::AddRunFiles(*out, "", summary, result->run, &*provenance); !st)
    return RunFailed(st.error());
  if (auto st = out->Commit(); !st) return RunFailed(st.error());
  const std::string shown = core::EscapeText(dir, kMaxMessageBytes);
  std::printf(
      "results: %s/ (summary.json, jobs.csv, events.csv, allocations.csv, "
      "utilization.csv)\n",
      shown.c_str());
  if (!a.report.empty()) {
    if (auto st = WriteReport({&dir, 1}, a.report, a.page); !st) return RunFailed(st.error());
  }
  if (interrupted) {
    PrintError(fmt::format(
        "interrupted at {:g} s of simulated time: the results are partial "
        "({} of {} jobs finished)",
        summary.end_time, summary.completed_jobs + summary.failed_jobs, summary.total_jobs));
    return kInterrupted;
  }
  if (summary.stuck_jobs > 0 || summary.failed_jobs > 0 || summary.unfinished_jobs > 0) {
    PrintError(fmt::format(
        "run failed: {} stuck, {} failed, {} unfinished of {} jobs (see jobs.csv for each job's "
        "reason)",
        summary.stuck_jobs, summary.failed_jobs, summary.unfinished_jobs, summary.total_jobs));
    return kRunFailed;
  }
  return kOk;
}

double Utilization(const metrics::RunSummary& s, core::ResourceId id, bool effective) {
  for (const auto& u : s.utilization) {
    if (u.id == id) return effective ? u.effective : u.allocated;
  }
  return 0;
}

using report::CompareField;
using report::CompareFields;
using report::RunStatus;

// One row of `dlsched compare`'s table: a profile's headline numbers. JCT,
// makespan and slowdown read ">=" when jobs did not complete (they count at
// the run's end).
std::vector<std::string> CompareRow(const std::string& profile, const metrics::RunSummary& s) {
  const std::string at_least = s.jct_censored > 0 ? ">=" : "";
  auto secs = [&](double t) {
    return s.total_jobs > 0 ? at_least + fmt::format("{:.1f}", t) : "-";
  };
  auto pct = [&](core::ResourceId id, bool effective) {
    return fmt::format("{:.1f}%", 100 * Utilization(s, id, effective));
  };
  return {profile,
          RunStatus(s),
          fmt::format("{}/{}", s.completed_jobs, s.total_jobs),
          secs(s.jct_mean),
          secs(s.jct_p95),
          secs(s.makespan),
          s.slowdown_jobs > 0 ? at_least + fmt::format("{:.2f}", s.slowdown_mean) : "-",
          pct(core::kGpu, false),
          pct(core::kGpu, true),
          pct(core::kCpu, true),
          fmt::format("{:.3f}", s.jain_index),
          std::to_string(s.preemptions),
          std::to_string(s.scale_events)};
}

std::string AlignedTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      // First column left-aligned, numbers right-aligned.
      out +=
          i == 0 ? fmt::format("{:<{}}", r[i], width[i]) : fmt::format("  {:>{}}", r[i], width[i]);
    }
    out += '\n';
  }
  return out;
}

// Directory names for compare's profiles: each profile's name, with "-2",
// "-3", ... for a name already taken, so two profiles that share a name
// (two files, or one given twice) never write to the same place.
std::vector<std::string> UniqueNames(const std::vector<std::string>& names) {
  std::set<std::string> taken(names.begin(), names.end());
  std::set<std::string> used;
  std::vector<std::string> out;
  for (const auto& n : names) {
    std::string name = n;
    // A suffixed name may not be another profile's own name either.
    for (int k = 2; used.contains(name) || (name != n && taken.contains(name)); ++k) {
      name = fmt::format("{}-{}", n, k);
    }
    used.insert(name);
    out.push_back(name);
  }
  return out;
}

// The engines of compare's and sweep's --profiles, and a directory name
// for each (UniqueNames of the profiles' names).
struct LoadedProfiles {
  std::vector<std::unique_ptr<engine::Engine>> engines;
  std::vector<std::string> dirs;
  // Each profile as given: the built-in name or file, and its overrides.
  std::vector<std::string> bases;
  std::vector<std::vector<std::string>> overrides;
};
core::Result<LoadedProfiles> LoadProfiles(const std::vector<std::string>& profiles,
                                          const std::vector<std::string>& common_overrides) {
  LoadedProfiles out;
  std::vector<std::string> names;
  for (const auto& profile : profiles) {
    // NAME:PATH=VALUE[:PATH=VALUE...] is NAME with its own overrides, after
    // --set's.
    std::vector<std::string> overrides = common_overrides;
    std::string name = profile;
    if (const size_t colon = profile.find(':'); colon != std::string::npos) {
      if (colon + 1 == profile.size()) {
        return core::Errorf(
            "--profiles: '{}': expected NAME:PATH=VALUE[:PATH=VALUE...], got nothing after ':'",
            profile);
      }
      name = profile.substr(0, colon);
      for (auto part : std::views::split(std::string_view(profile).substr(colon + 1), ':')) {
        overrides.emplace_back(part.begin(), part.end());
      }
    }
    auto engine = LoadEngine(name, overrides);
    if (!engine) return std::unexpected(engine.error());
    names.push_back((*engine)->profile().name);
    out.engines.push_back(std::move(*engine));
    out.bases.push_back(std::move(name));
    out.overrides.push_back(std::move(overrides));
  }
  out.dirs = UniqueNames(names);
  return out;
}

// Adds compare's or sweep's profiles to their provenance, each named as
// its results are.
core::Status AddProfiles(report::Provenance& p, const LoadedProfiles& profiles) {
  for (size_t i = 0; i < profiles.bases.size(); ++i) {
    if (auto st = AddProfile(p, profiles.bases[i], profiles.overrides[i], profiles.dirs[i]); !st) {
      return st;
    }
  }
  return {};
}

// A CompareField's value as a CSV cell.
std::string CsvCell(const CompareField& f) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return report::CsvField(v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else {
          return report::FormatNumber(v);
        }
      },
      f.value);
}

// The header line of fields' keys, or the line of their values.
std::string CsvLine(const std::vector<CompareField>& fields, bool header) {
  std::string line;
  for (size_t f = 0; f < fields.size(); ++f) {
    line += f == 0 ? "" : ",";
    line += header ? std::string(fields[f].key) : CsvCell(fields[f]);
  }
  return line + "\n";
}

int Compare(const RunArgs& a, const std::vector<std::string>& profiles, const std::string& out_dir,
            int threads, bool quiet, const std::vector<std::string>& command) {
  const StopSignals signals;
  // Everything is loaded and checked before the first run: bad input fails
  // at once, not after minutes of simulation.
  auto window = ParseWindow(a.window);
  if (!window) return BadInput(window.error());
  auto inputs = LoadInputs(a);
  if (!inputs) return LoadFailed(inputs.error());
  auto loaded = LoadProfiles(profiles, a.overrides);
  if (!loaded) return BadInput(loaded.error());
  const std::vector<std::unique_ptr<engine::Engine>>& engines = loaded->engines;
  const std::vector<std::string>& dirs = loaded->dirs;
  if (auto st = CheckBaseline(a.page.baseline, dirs); !st) return BadInput(st.error());
  if (auto st = CheckOut(out_dir); !st) return BadInput(st.error());
  auto provenance = RunProvenance(command, a.cluster, a.jobs, a.window);
  if (!provenance) return BadInput(provenance.error());
  if (auto st = AddProfiles(*provenance, *loaded); !st) return BadInput(st.error());

  std::vector<std::vector<std::string>> rows = {{"profile", "status", "done", "JCT mean", "JCT p95",
                                                 "makespan", "slowdown", "gpu alloc", "gpu eff",
                                                 "cpu eff", "Jain", "preempt", "scale"}};
  std::string csv;
  std::string json;
  report::JsonWriter w(&json);
  w.BeginObject();
  w.Key("window");
  report::WindowJson(w, *window);
  w.Key("profiles");
  w.BeginArray();
  auto out = report::OutputDir::Open(out_dir);
  if (!out) return RunFailed(out.error());
  std::vector<RunRequest> runs;
  for (const auto& engine : engines) {
    RunRequest& r = runs.emplace_back();
    r.cluster = &inputs->cluster;
    r.workload = &inputs->workload;
    r.engine = engine.get();
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool interrupted = false;
  auto results =
      RunAll(runs, {.threads = threads, .show_progress = !quiet && ::isatty(2) == 1}, &interrupted);
  for (size_t i = 0; i < engines.size(); ++i) {
    auto& result = results[i];
    if (!result) return BadInput(result.error());
    const metrics::RunSummary summary = metrics::Summarize(result->run, *window);
    if (auto st = report::AddRunFiles(*out, dirs[i] + "/", summary, result->run); !st) {
      return RunFailed(st.error());
    }
    rows.push_back(CompareRow(dirs[i], summary));
    const std::vector<CompareField> fields = CompareFields(dirs[i], summary);
    if (csv.empty()) csv = CsvLine(fields, true);
    csv += CsvLine(fields, false);
    w.BeginObject();
    for (const CompareField& f : fields) {
      w.Key(f.key);
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              w.String(v);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              w.Int(v);
            } else {
              w.Number(report::RoundForOutput(v));
            }
          },
          f.value);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("provenance");
  report::WriteProvenance(w, *provenance);
  w.EndObject();
  json += '\n';
  if (!quiet) {
    std::fputs(AlignedTable(rows).c_str(), stdout);
    for (const auto& row : rows) {
      if (row[1] != "all done" && row[1] != "status") {
        std::puts(
            "(JCT, makespan and slowdown marked >= count the jobs that did not complete at the "
            "run's end: lower bounds)");
        break;
      }
    }
  }
  if (auto st = out->Add("compare.csv", csv); !st) return RunFailed(st.error());
  if (auto st = out->Add("compare.json", json); !st) return RunFailed(st.error());
  if (auto st = out->Commit(); !st) return RunFailed(st.error());
  const std::string shown = core::EscapeText(out_dir, kMaxMessageBytes);
  std::printf("results: %s/compare.csv, %s/compare.json and %s/<profile>/\n", shown.c_str(),
              shown.c_str(), shown.c_str());
  if (!a.report.empty()) {
    if (auto st = WriteReport({&out_dir, 1}, a.report, a.page); !st) return RunFailed(st.error());
  }
  if (interrupted) {
    PrintError("interrupted: the results are partial (summary.json says \"partial\": true)");
    return kInterrupted;
  }
  return kOk;
}

int Validate(const std::vector<std::string>& files) {
  int status = kOk;
  for (const auto& f : files) {
    auto kind = config::DetectKind(f);
    if (!kind) {
      status = BadInput(kind.error());
      continue;
    }
    std::string what;
    core::Status st;
    switch (*kind) {
      case config::FileKind::kCluster: {
        auto c = config::LoadCluster(f);
        if (c)
          what = fmt::format("cluster with {} nodes", c->nodes.size());
        else
          st = std::unexpected(c.error());
        break;
      }
      case config::FileKind::kWorkload: {
        auto w = sim::LoadWorkload(f);
        if (w)
          what = fmt::format("workload with {} jobs", w->jobs.size());
        else
          st = std::unexpected(w.error());
        break;
      }
      case config::FileKind::kProfile: {
        auto p = config::LoadProfile(f);
        if (!p) {
          st = std::unexpected(p.error());
          break;
        }
        auto built = policy::BuildProfile(*p);
        if (built)
          what = fmt::format("profile '{}'", p->name);
        else
          st = std::unexpected(built.error());
        break;
      }
    }
    if (!st) {
      status = BadInput(st.error());
    } else {
      std::printf("%s: ok (%s)\n", f.c_str(), what.c_str());
    }
  }
  return status;
}

nlohmann::ordered_json TraceJson(const engine::ClusterState& state, const engine::Profile& p,
                                 const engine::JobTrace& t) {
  nlohmann::ordered_json j;
  j["cycle"] = t.cycle;
  j["time"] = t.time;
  j["position"] = t.position;
  j["outcome"] = t.outcome;
  // kube-scheduler's status code while the job waits: Unschedulable (not
  // now) or UnschedulableAndUnresolvable (never on this cluster).
  j["status"] = t.waiting ? nlohmann::ordered_json(std::string(engine::WaitStatusName(t.status)))
                          : nlohmann::ordered_json(nullptr);
  auto& tasks = j["tasks"] = nlohmann::ordered_json::array();
  for (const auto& task : t.tasks) {
    nlohmann::ordered_json tj;
    tj["task"] = fmt::format("{}[{}]", core::RoleName(task.task.role), task.task.index);
    tj["chosen"] = task.chosen == engine::kNoNode
                       ? nlohmann::ordered_json(nullptr)
                       : nlohmann::ordered_json(state.NodeName(task.chosen));
    if (!task.note.empty()) tj["note"] = task.note;
    if (!task.rejected.empty()) {
      auto& rejected = tj["rejected"] = nlohmann::ordered_json::object();
      for (const auto& [node, why] : task.rejected) rejected[state.NodeName(node)] = why;
    }
    auto& cands = tj["candidates"] = nlohmann::ordered_json::array();
    for (const auto& c : task.candidates) {
      nlohmann::ordered_json cj;
      cj["node"] = state.NodeName(c.node);
      auto& scores = cj["scores"] = nlohmann::ordered_json::object();
      for (size_t i = 0; i < c.scores.size(); ++i)
        scores[std::string(p.scorers[i]->Name())] = c.scores[i];
      cj["total"] = c.total;
      cands.push_back(std::move(cj));
    }
    tasks.push_back(std::move(tj));
  }
  return j;
}

// What a cycle showed about the job, without which cycle it was: two
// consecutive cycles with the same body are the same decision again.
std::string TraceBody(const engine::ClusterState& state, const engine::Profile& p,
                      const engine::JobTrace& t) {
  std::string out = fmt::format(
      "(position {} in the queue): {}{}\n", t.position, t.outcome,
      t.waiting ? fmt::format(" [{}]", engine::WaitStatusName(t.status)) : std::string());
  constexpr size_t kMaxRejected = 50;
  for (const auto& task : t.tasks) {
    out += fmt::format("  {}[{}] -> {}{}\n", core::RoleName(task.task.role), task.task.index,
                       task.chosen == engine::kNoNode ? "(none)" : state.NodeName(task.chosen),
                       task.note.empty() ? "" : "  (" + task.note + ")");
    for (const auto& c : task.candidates) {
      std::string scores;
      for (size_t i = 0; i < c.scores.size(); ++i) {
        scores += fmt::format("{}{}={}", i ? " " : "", p.scorers[i]->Name(), c.scores[i]);
      }
      out += fmt::format("      {:<20} {:<50} total={:g}{}\n", state.NodeName(c.node), scores,
                         c.total, c.node == task.chosen ? "  <- chosen" : "");
    }
    for (size_t i = 0; i < task.rejected.size() && i < kMaxRejected; ++i) {
      out += fmt::format("      {:<20} {}\n", state.NodeName(task.rejected[i].first),
                         task.rejected[i].second);
    }
    if (task.rejected.size() > kMaxRejected) {
      out += fmt::format("      ... and {} more nodes (--format json lists them all)\n",
                         task.rejected.size() - kMaxRejected);
    }
  }
  return out;
}

int Explain(const RunArgs& a, const std::string& job, const std::string& format) {
  auto loaded = Load(a);
  if (!loaded) return BadInput(loaded.error());
  bool found = false;
  for (const auto& j : loaded->inputs.workload.jobs) found = found || j.name == job;
  if (!found) {
    return BadInput(core::Error{
        fmt::format("--job: no job named '{}' in {}", job, loaded->inputs.workload.source)});
  }
  sim::SimOptions options;
  options.trace_job = job;
  auto result =
      sim::Simulate(loaded->inputs.cluster, loaded->inputs.workload, *loaded->engine, options);
  if (!result) return BadInput(result.error());
  // Node names only: a fresh state of the same cluster.
  const engine::ClusterState names(loaded->inputs.cluster);
  const engine::Profile& p = loaded->engine->profile();
  const metrics::JobRecord* record = nullptr;
  for (const auto& r : result->run.jobs) {
    if (r.name == job) record = &r;
  }
  // The job's timeline, then its cycles, consecutive identical ones (the
  // same body: the same decision for the same reasons) as one group.
  const auto& run = result->run;
  std::vector<const metrics::JobEvent*> timeline;
  for (const auto& e : run.events) {
    if (run.jobs[e.job].name == job) timeline.push_back(&e);
  }
  struct Group {
    size_t first = 0;
    size_t count = 0;
    std::string body;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < result->traces.size(); ++i) {
    std::string body = TraceBody(names, p, result->traces[i]);
    if (!groups.empty() && groups.back().body == body) {
      ++groups.back().count;
    } else {
      groups.push_back({i, 1, std::move(body)});
    }
  }
  if (format == "json") {
    nlohmann::ordered_json j;
    j["job"] = job;
    j["profile"] = p.name;
    j["final_state"] = std::string(core::PhaseName(record->final_phase));
    j["stuck"] = record->stuck;
    auto& rows = j["timeline"] = nlohmann::ordered_json::array();
    for (const metrics::JobEvent* e : timeline) {
      nlohmann::ordered_json row;
      row["time"] = e->time;
      row["event"] = std::string(e->kind);
      row["workers"] = e->workers >= 0 ? nlohmann::ordered_json(e->workers) : nullptr;
      row["by"] = e->by >= 0 ? nlohmann::ordered_json(run.jobs[e->by].name) : nullptr;
      row["detail"] = e->detail;
      rows.push_back(std::move(row));
    }
    auto& cycles = j["cycles"] = nlohmann::ordered_json::array();
    for (const Group& g : groups) {
      nlohmann::ordered_json c = TraceJson(names, p, result->traces[g.first]);
      const engine::JobTrace& last = result->traces[g.first + g.count - 1];
      c["repeated"] = g.count;  // identical cycles, through last_cycle
      c["last_cycle"] = last.cycle;
      c["last_time"] = last.time;
      cycles.push_back(std::move(c));
    }
    // Names are valid UTF-8 (the loaders check); replace rather than throw
    // should anything else slip through.
    std::puts(j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else {
    std::printf("job %s under profile %s: %zu cycles considered it; final state %s%s\n",
                job.c_str(), p.name.c_str(), result->traces.size(),
                std::string(core::PhaseName(record->final_phase)).c_str(),
                record->stuck ? " (stuck)" : "");
    std::puts("timeline:");
    for (const metrics::JobEvent* e : timeline) {
      std::string row = fmt::format("  {:>10.1f} s  {}", e->time, e->kind);
      if (e->workers >= 0) row += fmt::format(" ({} workers)", e->workers);
      if (e->by >= 0) row += " by " + run.jobs[e->by].name;
      // "waiting: waiting: ..." reads as the verdict alone.
      std::string_view detail = e->detail;
      if (detail.starts_with(e->kind) && detail.substr(e->kind.size()).starts_with(": ")) {
        detail.remove_prefix(e->kind.size() + 2);
      }
      if (!detail.empty()) row += fmt::format(": {}", detail);
      std::puts(core::EscapeText(row, kMaxMessageBytes).c_str());
    }
    std::puts("cycles:");
    for (const Group& g : groups) {
      const engine::JobTrace& first = result->traces[g.first];
      const engine::JobTrace& last = result->traces[g.first + g.count - 1];
      std::string header =
          g.count == 1 ? fmt::format("cycle {} at {:.1f}s ", first.cycle, first.time)
                       : fmt::format("cycles {}-{} at {:.1f}-{:.1f}s ({} identical cycles) ",
                                     first.cycle, last.cycle, first.time, last.time, g.count);
      std::fputs((header + g.body).c_str(), stdout);
    }
  }
  return kOk;
}

int Profiles(const std::string& show) {
  if (!show.empty()) {
    if (auto text = policy::BuiltinProfileText(show)) {
      std::fwrite(text->data(), 1, text->size(), stdout);
      return kOk;
    }
    std::vector<std::string_view> names;
    for (const auto& b : policy::BuiltinProfiles()) names.push_back(b.name);
    return BadInput(
        core::Error{fmt::format("--show: no built-in profile named '{}' (see `dlsched "
                                "profiles`){}",
                                show, core::DidYouMean(show, names))});
  }
  int width = 0;
  for (const auto& b : policy::BuiltinProfiles()) width = std::max(width, int(b.name.size()));
  for (const auto& b : policy::BuiltinProfiles()) {
    std::printf("%-*s  %s\n", width, std::string(b.name).c_str(), std::string(b.summary).c_str());
  }
  return kOk;
}

int Models() {
  for (const auto& m : sim::Models()) {
    std::string rates;
    for (const auto& [n, r] : m.profile->steps_per_s) rates += fmt::format(" {}:{:g}", n, r);
    std::printf("%-16s locality %.2f  steps/s by workers:%s\n", std::string(m.name).c_str(),
                m.profile->locality_sensitivity, rates.c_str());
  }
  return kOk;
}

// A file to write (generate's, convert's and size's --out): a device or a
// directory is never replaced by a file. Checked before anything runs: bad
// input, not a run that cannot write at its end. "" and "-" are stdout.
core::Status CheckOutFile(std::string_view flag, const std::string& path) {
  if (path.empty() || path == "-") return {};
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    return core::Errorf("{}: {} exists and is not a regular file", flag, path);
  }
  return {};
}

// `dlsched generate`: a synthetic workload (and optionally a cluster) for
// scale tests and benchmarks. The same options give the same bytes.
int Generate(const sim::GenerateOptions& options, const sim::ClusterOptions& cluster,
             const std::string& out, const std::string& cluster_out) {
  for (const auto& [flag, path] :
       {std::pair{"--out", out}, std::pair{"--cluster-out", cluster_out}}) {
    if (auto st = CheckOutFile(flag, path); !st) return BadInput(st.error());
  }
  auto workload = sim::GenerateWorkload(options);
  if (!workload) return BadInput(workload.error());
  std::string cluster_text;
  if (!cluster_out.empty()) {
    auto c = sim::ClusterYaml(cluster);
    if (!c) return BadInput(c.error());
    cluster_text = std::move(*c);
  }
  // A .csv --out is the native trace format (docs/traces.md), which loads
  // several times faster than YAML; anything else is workload YAML.
  std::string text;
  if (out.ends_with(".csv")) {
    auto csv = config::ToNativeCsv(*workload, sim::FindModel);
    if (!csv) return BadInput(csv.error());
    text = std::move(*csv);
  } else {
    text = fmt::format(
        "# {} jobs, seed {}, mean inter-arrival {}s, generated by `dlsched generate`.\n{}",
        options.jobs, options.seed, options.mean_interarrival, sim::WorkloadToYaml(*workload));
    // What dlsched could not read back is not written.
    if (auto st = sim::CheckWrittenYaml(text, "--out: the workload as YAML"); !st) {
      return BadInput(core::Error{
          st.error().message + "; give fewer --jobs, or write the native format (a .csv --out)"});
    }
  }
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);  // errors are caught in Main
  } else {
    std::vector<report::FileContent> files = {{out, text}};
    if (!cluster_out.empty()) files.push_back({cluster_out, cluster_text});
    if (auto st = report::ReplaceFiles(files); !st) return RunFailed(st.error());
    return kOk;
  }
  if (!cluster_out.empty()) {
    const report::FileContent file{cluster_out, cluster_text};
    if (auto st = report::ReplaceFiles({&file, 1}); !st) return RunFailed(st.error());
  }
  return kOk;
}

// `dlsched convert`: a trace (or workload) written as the native format or
// as workload YAML.
int Convert(const JobSource& source, const std::string& out, std::string to) {
  if (auto st = CheckOutFile("--out", out); !st) return BadInput(st.error());
  if (to.empty()) to = out.ends_with(".yaml") || out.ends_with(".yml") ? "yaml" : "native";
  auto workload = LoadJobs(source);
  if (!workload) return BadInput(workload.error());
  std::string text;
  if (to == "yaml") {
    text = sim::WorkloadToYaml(*workload);
    // What dlsched could not read back is not written.
    if (auto st = sim::CheckWrittenYaml(text, "--out: the workload as YAML"); !st) {
      return BadInput(
          core::Error{st.error().message + "; write the native format instead (--to native)"});
    }
  } else {
    auto csv = config::ToNativeCsv(*workload, sim::FindModel);
    if (!csv) return BadInput(csv.error());
    text = std::move(*csv);
  }
  if (out.empty() || out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kOk;
  }
  const report::FileContent file{out, text};
  if (auto st = report::ReplaceFiles({&file, 1}); !st) return RunFailed(st.error());
  std::fprintf(stderr, "dlsched: wrote %zu jobs to %s (%s)\n", workload->jobs.size(),
               core::EscapeText(out, kMaxMessageBytes).c_str(), to.c_str());
  return kOk;
}

// `dlsched size`: the fewest nodes of one shape that the jobs load to
// --load, as cluster YAML or a Tiresias cluster CSV (docs/traces.md,
// "Sizing a cluster for a trace").
int Size(const JobSource& source, const NodeShape& shape, const std::string& load,
         const std::string& out, std::string to) {
  auto range = ParseLoadRange(load);
  if (!range) return BadInput(range.error());
  if (auto st = CheckOutFile("--out", out); !st) return BadInput(st.error());
  if (to.empty()) to = IsCsvName(out) ? "tiresias" : "yaml";
  auto workload = LoadJobs(source);
  if (!workload) return BadInput(workload.error());
  auto c = SizeCluster(*workload, DefaultShape(source.trace, shape), *range);
  if (!c) return BadInput(c.error());
  const std::string offered = fmt::format("{} jobs offer a load of {:.3g} (--load {:g}:{:g})",
                                          workload->jobs.size(), c->load, range->lo, range->hi);
  std::string text;
  if (to == "tiresias") {
    auto csv = TiresiasClusterCsv(*c);
    if (!csv) return BadInput(core::Error{"--out: " + csv.error().message});
    text = std::move(*csv);
  } else {
    auto yaml = SizedClusterYaml(
        *c, fmt::format("For {}: {}.", core::EscapeText(workload->source, 512), offered));
    if (!yaml) return BadInput(yaml.error());
    text = std::move(*yaml);
  }
  std::string wrote;
  if (out.empty() || out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    const report::FileContent file{out, text};
    if (auto st = report::ReplaceFiles({&file, 1}); !st) return RunFailed(st.error());
    wrote = fmt::format("; wrote {} ({})", core::EscapeText(out, kMaxMessageBytes), to);
  }
  const auto plural = [](int n) { return n == 1 ? "" : "s"; };
  std::fprintf(stderr, "dlsched: %d node%s of %d GPU%s (%lld in all; %d cpu, %dGi a node): %s%s\n",
               c->nodes, plural(c->nodes), c->node.gpus, plural(c->node.gpus),
               static_cast<long long>(c->gpus()), c->node.cpus, c->node.memory_gi, offered.c_str(),
               wrote.c_str());
  return kOk;
}

// The shape of a generated workload: generate's options, which sweep
// shares (its --jobs and --seeds are its own).
std::vector<CLI::Option*> AddWorkloadShapeOptions(CLI::App* cmd, sim::GenerateOptions* gen) {
  return {
      cmd->add_option("--mean-interarrival", gen->mean_interarrival,
                      "Mean seconds between arrivals (exponential); 0 puts every job at time 0")
          ->capture_default_str()
          ->check(NumberIn(0, core::kMaxTime)),
      cmd->add_option("--max-workers", gen->max_workers, "Most workers (GPUs) a job asks for")
          ->capture_default_str(),
      cmd->add_option("--elastic-fraction", gen->elastic_fraction,
                      "Share of jobs with minReplicas < maxReplicas")
          ->capture_default_str()
          ->check(NumberIn(0, 1)),
      cmd->add_option("--min-steps", gen->min_steps, "Smallest totalSteps (log-uniform)")
          ->capture_default_str()
          ->check(NumberIn(1, core::kMaxSteps)),
      cmd->add_option("--max-steps", gen->max_steps, "Largest totalSteps")
          ->capture_default_str()
          ->check(NumberIn(1, core::kMaxSteps)),
  };
}

struct SweepArgs {
  RunArgs run;  // cluster, jobs, --set, --report
  std::vector<std::string> profiles;
  std::vector<double> loads = {1};
  std::vector<uint64_t> seeds;
  sim::GenerateOptions gen;
  bool generated = false;  // --jobs N: one generated workload per seed
  std::string out = "out/sweep";
  int threads = 0;
  bool quiet = false;
  bool keep_runs = false;
  std::optional<int64_t> cell;
  std::string merge;
  bool emit_k8s_job = false;
  K8sJobOptions k8s;
  std::vector<std::string> command;  // as provenance records it
};

// The columns of sweep.csv (and of each cell.csv): the cell, its place in
// the grid, then compare.csv's columns.
std::vector<CompareField> SweepFields(const SweepGrid& grid, const SweepGrid::Cell& cell,
                                      const metrics::RunSummary& s) {
  std::vector<CompareField> fields = {
      {"cell", static_cast<int64_t>(cell.index)},
      {"cells", static_cast<int64_t>(grid.size())},
      {"profile", grid.profiles[cell.profile]},
      {"load", grid.loads[cell.load]},
      {"seed", grid.seeds.empty() ? std::string() : std::to_string(grid.seeds[cell.seed])},
  };
  std::vector<CompareField> rest = CompareFields(grid.profiles[cell.profile], s);
  fields.insert(fields.end(), rest.begin() + 1, rest.end());  // without its profile
  return fields;
}

// `dlsched sweep --merge DIR`: the cells an Indexed Job left, as sweep.csv.
int MergeSweep(const std::string& dir) {
  auto merged = report::MergeSweepCells(dir);
  if (!merged) return BadInput(core::Error{"--merge: " + merged.error().message});
  const std::string file = (std::filesystem::path(dir) / "sweep.csv").string();
  const report::FileContent content{file, *merged};
  if (auto st = report::ReplaceFiles({&content, 1}); !st) return RunFailed(st.error());
  std::printf("merged %zd cells into %s\n", std::count(merged->begin(), merged->end(), '\n') - 1,
              core::EscapeText(file, kMaxMessageBytes).c_str());
  return kOk;
}

// Shortest text that reads back as the same double.
std::string Exact(double x) { return fmt::format("{}", x); }

// The command line that runs one cell of the same grid (in a pod).
std::vector<std::string> CellCommand(const SweepArgs& a, const SweepGrid& grid) {
  std::vector<std::string> args = {"sweep", "--cluster", a.run.cluster};
  const JobSource& j = a.run.jobs;
  auto add = [&](std::string flag, std::string value) {
    if (value.empty()) return;
    args.push_back(std::move(flag));
    args.push_back(std::move(value));
  };
  add("--workload", j.workload);
  add("--trace", j.trace);
  add("--vc", j.vcs);
  add("--from", j.from);
  add("--until", j.until);
  if (j.limit > 0) add("--limit", std::to_string(j.limit));
  add("--elastic", j.elastic);
  add("--scaling", j.scaling);
  add("--pollux-traces", j.pollux_traces);
  if (j.skip_bad_rows) args.push_back("--skip-bad-rows");
  if (a.generated) {
    add("--jobs", std::to_string(a.gen.jobs));
    add("--seeds", fmt::format("{}", fmt::join(grid.seeds, ",")));
    add("--mean-interarrival", Exact(a.gen.mean_interarrival));
    add("--max-workers", std::to_string(a.gen.max_workers));
    add("--elastic-fraction", Exact(a.gen.elastic_fraction));
    add("--min-steps", Exact(a.gen.min_steps));
    add("--max-steps", Exact(a.gen.max_steps));
  }
  add("--profiles", fmt::format("{}", fmt::join(a.profiles, ",")));
  std::vector<std::string> loads;
  for (double l : a.loads) loads.push_back(Exact(l));
  add("--load", fmt::format("{}", fmt::join(loads, ",")));
  for (const auto& o : a.run.overrides) add("--set", o);
  add("--window", a.run.window);
  if (a.keep_runs) args.push_back("--keep-runs");
  add("--cell", "$(JOB_COMPLETION_INDEX)");
  add("--out", a.out);
  args.push_back("--quiet");
  return args;
}

int EmitK8sJob(const SweepArgs& a, const SweepGrid& grid) {
  K8sJobOptions k8s = a.k8s;
  if (k8s.image.empty()) k8s.image = fmt::format("dlsched:{}", DLSCHED_VERSION);
  const std::string grid_text =
      grid.seeds.empty()
          ? fmt::format("{} profiles x {} loads", grid.profiles.size(), grid.loads.size())
          : fmt::format("{} profiles x {} loads x {} seeds", grid.profiles.size(),
                        grid.loads.size(), grid.seeds.size());
  const std::vector<std::string> comment = {
      fmt::format("dlsched sweep: {} cells ({}), one per completion index.", grid.size(),
                  grid_text),
      fmt::format("Each pod runs in the volume's root ({}): the input paths below must be there",
                  k8s.mount),
      fmt::format("(e.g. kubectl cp them); results go to {}/{}/cells/. When the Job is complete:",
                  k8s.mount, a.out),
      fmt::format("dlsched report {} (or dlsched sweep --merge {}) on the volume.", a.out, a.out),
  };
  const std::string yaml = K8sJobManifest(k8s, grid.size(), CellCommand(a, grid), comment);
  std::fwrite(yaml.data(), 1, yaml.size(), stdout);
  return kOk;
}

int Sweep(const SweepArgs& a) {
  if (!a.merge.empty()) return MergeSweep(a.merge);
  const StopSignals signals;
  if (a.run.cluster.empty()) {
    return BadInput(core::Error{"--cluster: required (or --merge DIR)"});
  }
  if (a.profiles.empty()) return BadInput(core::Error{"--profiles: required"});
  if (a.run.jobs.workload.empty() && a.run.jobs.trace.empty() && !a.generated) {
    return BadInput(core::Error{
        "give the jobs with --workload FILE, --trace FORMAT:FILE or --jobs N (a generated "
        "workload per --seeds)"});
  }
  if (auto st = CheckLoads(a.loads); !st) return BadInput(st.error());
  if (auto st = CheckSeeds(a.seeds); !st) return BadInput(st.error());
  auto window = ParseWindow(a.run.window);
  if (!window) return BadInput(window.error());
  SweepGrid grid;
  grid.loads = a.loads;
  if (a.generated) grid.seeds = a.seeds.empty() ? std::vector<uint64_t>{a.gen.seed} : a.seeds;
  auto cluster = LoadClusterArg(a.run.cluster);
  if (!cluster) return BadInput(cluster.error());
  auto profiles = LoadProfiles(a.profiles, a.run.overrides);
  if (!profiles) return BadInput(profiles.error());
  grid.profiles = profiles->dirs;
  if (grid.size() == 0) {
    return BadInput(core::Error{"--load: the grid is empty (give at least one load factor)"});
  }
  if (grid.size() > static_cast<size_t>(report::kMaxSweepCells)) {
    return BadInput(core::Errorf("--profiles, --load, --seeds: the grid has {} cells, at most {}",
                                 grid.size(), report::kMaxSweepCells)
                        .error());
  }
  if (a.cell && (*a.cell < 0 || static_cast<uint64_t>(*a.cell) >= grid.size())) {
    return BadInput(core::Errorf("--cell: {} is out of range: the grid has {} cells (0 to {})",
                                 *a.cell, grid.size(), grid.size() - 1)
                        .error());
  }
  std::vector<SweepGrid::Cell> cells;
  if (a.cell) {
    cells.push_back(grid.At(static_cast<size_t>(*a.cell)));
  } else {
    for (size_t i = 0; i < grid.size(); ++i) cells.push_back(grid.At(i));
  }
  // The jobs: a workload file or trace is loaded once, here, and each cell
  // runs on its own copy with scaled arrivals, made on the thread that runs
  // it and freed after (the file's own at load 1); a generated workload is
  // made for each cell on its thread, only its options checked here. So
  // memory holds the workloads of the cells running, not of the grid (a
  // sweep of 1,000,000 generated jobs used to build every one first).
  std::optional<config::WorkloadSpec> base;
  if (a.generated) {
    if (auto st = sim::CheckGenerateOptions(a.gen); !st) return BadInput(st.error());
  } else {
    auto w = LoadJobs(a.run.jobs);
    if (!w) return LoadFailed(w.error());
    base = std::move(*w);
  }
  if (a.emit_k8s_job) return EmitK8sJob(a, grid);
  // One run directory: the sweep's, or the one cell's inside it.
  const std::string dir =
      a.cell ? (std::filesystem::path(a.out) / grid.CellDir(cells[0])).string() : a.out;
  if (auto st = CheckOut(dir); !st) return BadInput(st.error());
  // A whole grid records its provenance beside sweep.csv; a cell run alone
  // is part of a grid recorded elsewhere (or nowhere).
  std::optional<report::Provenance> provenance;
  if (!a.cell) {
    auto p = RunProvenance(a.command, a.run.cluster, a.run.jobs, a.run.window);
    if (!p) return BadInput(p.error());
    if (auto st = AddProfiles(*p, *profiles); !st) return BadInput(st.error());
    if (a.generated) p->seeds = grid.seeds;
    provenance = std::move(*p);
  }
  // A load factor below 1 spreads the arrivals out, maybe past the limit
  // every workload keeps (core/spec_limits.h): a file's is checked at each
  // load before anything runs (one scaled copy at a time), a generated
  // one's as each cell makes it.
  if (base) {
    for (double load : grid.loads) {
      if (auto st = CheckScaledArrivals(ScaleArrivals(*base, load), load); !st) {
        return BadInput(st.error());
      }
    }
  }
  std::vector<const engine::Engine*> engines;
  for (const auto& e : profiles->engines) engines.push_back(e.get());
  std::vector<RunRequest> runs =
      CellRuns(grid, cells, *cluster, engines, base ? &*base : nullptr, a.gen);
  auto out = report::OutputDir::Open(dir);
  if (!out) return RunFailed(out.error());

  const std::string header = CsvLine(SweepFields(grid, cells[0], {}), true);
  std::vector<std::string> rows(cells.size());
  std::vector<std::vector<std::string>> table(cells.size());
  std::vector<std::optional<core::Error>> run_errors(cells.size());
  std::optional<core::Error> write_error;
  std::mutex mu;
  BatchOptions batch{.threads = a.threads > 0 ? a.threads
                                              : static_cast<int>(std::max(
                                                    1u, std::thread::hardware_concurrency())),
                     .show_progress = !a.quiet && ::isatty(2) == 1};
  const OnResult on_result = [&](size_t k, core::Result<sim::SimResult>&& result) {
    if (!result) {
      std::lock_guard lock(mu);
      run_errors[k] = result.error();
      return;
    }
    const SweepGrid::Cell& c = cells[k];
    const metrics::RunSummary summary = metrics::Summarize(result->run, *window);
    const std::string row = CsvLine(SweepFields(grid, c, summary), false);
    std::vector<std::string> shown = CompareRow(grid.profiles[c.profile], summary);
    std::vector<std::string> line = {std::to_string(c.index), shown[0],
                                     report::FormatNumber(grid.loads[c.load]),
                                     grid.seeds.empty() ? "-" : std::to_string(grid.seeds[c.seed])};
    line.insert(line.end(), shown.begin() + 1, shown.begin() + 6);
    const std::string prefix = a.cell ? "" : grid.CellDir(c) + "/";
    std::string summary_json;
    if (!a.keep_runs) summary_json = report::SummaryJsonText(summary, result->run);
    std::lock_guard lock(mu);
    rows[k] = row;
    table[k] = std::move(line);
    core::Status st = out->Add(prefix + std::string(report::kCellFile), header + row);
    if (st) {
      st = a.keep_runs ? report::AddRunFiles(*out, prefix, summary, result->run)
                       : out->Add(prefix + "summary.json", summary_json);
    }
    if (!st && !write_error) write_error = st.error();
  };
  bool interrupted = false;
  RunAll(runs, batch, &interrupted, on_result);
  for (const auto& e : run_errors) {
    if (e) return BadInput(*e);
  }
  if (write_error) return RunFailed(*write_error);
  if (!a.cell) {
    std::string csv = header;
    for (const auto& r : rows) csv += r;
    if (auto st = out->Add("sweep.csv", csv); !st) return RunFailed(st.error());
    if (auto st = out->Add(report::kProvenanceFile, report::ProvenanceFileText(*provenance)); !st) {
      return RunFailed(st.error());
    }
  }
  if (auto st = out->Commit(); !st) return RunFailed(st.error());
  std::vector<std::vector<std::string>> lines = {
      {"cell", "profile", "load", "seed", "status", "done", "JCT mean", "JCT p95", "makespan"}};
  lines.insert(lines.end(), table.begin(), table.end());
  if (!a.quiet) std::fputs(AlignedTable(lines).c_str(), stdout);
  const std::string shown = core::EscapeText(dir, kMaxMessageBytes);
  if (a.cell) {
    std::printf("results: %s/ (cell %lld of %zu)\n", shown.c_str(), static_cast<long long>(*a.cell),
                grid.size());
  } else {
    std::printf("results: %s/sweep.csv and %s/cells/\n", shown.c_str(), shown.c_str());
  }
  if (!a.run.report.empty() && !a.cell) {
    if (auto st = WriteReport({&a.out, 1}, a.run.report, a.run.page); !st) {
      return RunFailed(st.error());
    }
  }
  if (interrupted) {
    PrintError("interrupted: the results are partial (their status says \"partial\")");
    return kInterrupted;
  }
  return kOk;
}

int Run(int argc, char** argv) {
  CLI::App app{
      "dlsched - a scheduler for distributed deep-learning training jobs.\n"
      "Replays a workload of training jobs on a simulated cluster under a scheduling\n"
      "profile and reports job completion times, utilisation and fairness.\n\n"
      "Example:\n"
      "  dlsched simulate --cluster examples/cluster-3node.yaml \\\n"
      "                   --workload examples/workload-small.yaml --profile gang-binpack\n"
      "  dlsched simulate --cluster tiresias:examples/tiresias-n4g4.csv \\\n"
      "                   --trace tiresias:data/tiresias/60_job.csv --profile fifo\n"
      "  dlsched size --trace tiresias:data/tiresias/60_job.csv   # a cluster it keeps busy\n\n"
      "Exit codes: 0 success, 1 the run failed (stuck or failed jobs, cannot write\n"
      "results), 2 bad input (the message names the file and field), 130 interrupted\n"
      "(Ctrl-C: simulate, compare and sweep write what they computed, marked partial).",
      "dlsched"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("dlsched {}", DLSCHED_VERSION),
                       "Print the version and exit");

  RunArgs sim_args;
  std::string out_dir;
  bool quiet = false;
  bool job_table = false;
  auto* simulate = app.add_subcommand(
      "simulate",
      "Run a workload on a simulated cluster under a profile; print a summary and write "
      "summary.json, jobs.csv, events.csv (the timeline), allocations.csv and utilization.csv");
  simulate->footer(
      "Examples:\n"
      "  dlsched simulate -c examples/cluster-kod2-elastic.yaml \\\n"
      "                   -w examples/workload-kod2-elastic.yaml -p kod2 --job-table\n"
      "  dlsched simulate -c C -w W -p kod2 --set order.args.kappa=2   # a variant of kod2");
  AddRunOptions(simulate, &sim_args);
  simulate->add_option("--out,-o", out_dir,
                       "Output directory (default: out/<profile name>). Written as one unit and "
                       "replaced as a whole, so it must be new, empty or an earlier result "
                       "directory of dlsched");
  AddQuietOption(simulate, &quiet);
  // --jobs meant this until 0.1.0; it is a job count everywhere now (Run
  // refuses it here, pointing to --job-table).
  simulate->add_flag("--job-table", job_table, "Also print one row per job after the summary");
  AddWindowOption(simulate, &sim_args.window, kRunWindowHelp);
  AddReportOption(simulate, &sim_args.report, &sim_args.page);

  std::vector<std::string> files;
  auto* validate = app.add_subcommand(
      "validate", "Check cluster, workload and profile files; print one error line per bad file");
  validate->add_option("files", files, "Files to check (the kind is detected)")->required();

  RunArgs explain_args;
  std::string job;
  std::string format = "text";
  auto* explain = app.add_subcommand(
      "explain",
      "Run the simulation and show every cycle in which one job was considered: each feasible "
      "node with every scorer's score and the weighted total, the node chosen for each task, "
      "or why the job waited");
  AddRunOptions(explain, &explain_args);
  explain->add_option("--job,-j", job, "The job to explain")->required();
  explain->add_option("--format,-f", format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  RunArgs compare_args;
  std::vector<std::string> compare_profiles;
  std::string compare_out = "out/compare";
  auto* compare = app.add_subcommand(
      "compare",
      "Run one workload under several profiles and print their headline numbers side by "
      "side (mean / p95 JCT, makespan, GPU and CPU utilisation, fairness, preemptions); "
      "each profile's files go to OUT/<profile>/, the table to OUT/compare.csv. Jobs left "
      "stuck are a result here, not an error: the exit code is 0 unless the input is bad");
  compare
      ->add_option("--cluster,-c", compare_args.cluster,
                   "Cluster YAML (nodes and their resources), or tiresias:FILE")
      ->required();
  AddJobSourceOptions(compare, &compare_args.jobs);
  AddListOption(compare, "--profiles,-p", &compare_profiles,
                "Profiles to compare, comma-separated built-in names or YAML files, e.g. "
                "k8s-default,gang-binpack,kod2; NAME:PATH=VALUE[:PATH=VALUE] is a variant of "
                "NAME with its own overrides (see --set), e.g. kod2,kod2:order.args.kappa=2")
      ->required();
  AddSetOption(compare, &compare_args.overrides);
  compare->footer(
      "Examples:\n"
      "  dlsched compare -c examples/cluster-3node.yaml -w examples/workload-kod2-seed.yaml \\\n"
      "                  -p k8s-default,gang-binpack,kod2\n"
      "  dlsched compare -c C -w W -p kod2,kod2:order.args.kappa=2,kod2:order.args.kappa=8\n\n"
      "The status column says whether every job finished; JCT, makespan and slowdown "
      "(JCT / ideal) count a job that did not finish at the run's end and read >= then.");
  int compare_threads = 0;
  bool compare_quiet = false;
  AddThreadsOption(compare, &compare_threads,
                   "Profiles run at once (default 0: one per core); the results do not depend "
                   "on it");
  AddQuietOption(compare, &compare_quiet);
  AddWindowOption(compare, &compare_args.window, std::string(kRunWindowHelp) + " and compare.json");
  AddReportOption(compare, &compare_args.report, &compare_args.page);
  compare
      ->add_option("--out,-o", compare_out,
                   "Output directory, written as one unit and replaced as a whole (new, empty "
                   "or an earlier result directory of dlsched); a profile name given twice gets "
                   "<name>-2/")
      ->capture_default_str();

  SweepArgs sweep_args;
  auto* sweep = app.add_subcommand(
      "sweep",
      "Run a grid of profiles x load factors (x seeds of a generated workload), one cell per "
      "core, and write OUT/sweep.csv (a row per cell) and each cell's files to "
      "OUT/cells/<profile>/load-<L>[/seed-<S>]/; the report draws every figure of compare.csv "
      "against load, a line per profile (the mean over seeds, error bars), cells interrupted or "
      "with jobs stuck marked. Load L divides every submit time by L (2: arrivals twice as "
      "dense). --cell N runs one cell; --emit-k8s-job writes a Kubernetes Indexed Job that runs "
      "the grid a cell per index; --merge OUT joins the cells it left into OUT/sweep.csv");
  sweep->footer(
      "Cells are numbered profile by profile, then load, then seed: cell i is profile "
      "i / (loads x seeds), load (i / seeds) mod loads, seed i mod seeds. Stuck jobs are a "
      "result, not an error. See docs/sweeps.md.\n\n"
      "Examples:\n"
      "  dlsched sweep -c examples/cluster-3node.yaml -w examples/workload-kod2-seed.yaml \\\n"
      "                -p gang-binpack,kod2 --load 0.5,1,2 --report sweep.html\n"
      "  dlsched sweep -c C --jobs 200 --seeds 1,2,3 -p fifo,las --load 0.5,1,1.5 -o out/s\n"
      "  dlsched sweep -c C -w W -p P1,P2 --load 1,2 -o out/s --emit-k8s-job > job.yaml\n"
      "  dlsched report out/s           # after the Job: merges out/s/cells/");
  auto* sweep_cluster =
      sweep->add_option("--cluster,-c", sweep_args.run.cluster, "Cluster YAML, or tiresias:FILE");
  AddJobSourceOptions(sweep, &sweep_args.run.jobs);
  auto* sweep_jobs = sweep->add_option(
      "--jobs,-n", sweep_args.gen.jobs,
      "Generate the workload instead (as `dlsched generate`): this many jobs, one workload per "
      "--seeds");
  sweep_jobs->excludes("--workload")->excludes("--trace");
  AddListOption(sweep, "--seeds", &sweep_args.seeds,
                "Seeds of the generated workload, comma-separated (default: 1)")
      ->needs(sweep_jobs);
  for (CLI::Option* o : AddWorkloadShapeOptions(sweep, &sweep_args.gen)) o->needs(sweep_jobs);
  auto* sweep_profiles = AddListOption(
      sweep, "--profiles,-p", &sweep_args.profiles,
      "Profiles, comma-separated, as compare takes them (NAME:PATH=VALUE is a variant)");
  AddSetOption(sweep, &sweep_args.run.overrides);
  AddListOption(sweep, "--load,-l", &sweep_args.loads,
                "Load factors, comma-separated (0.001 to 1e6): submit times are divided by each")
      ->default_str("1");
  auto* sweep_out = sweep->add_option(
      "--out,-o", sweep_args.out,
      "Output directory, written as one unit and replaced as a whole (new, empty or an earlier "
      "result directory of dlsched); with --cell only the cell's directory in it is replaced; "
      "with --emit-k8s-job the pods' directory, relative to the volume");
  sweep_out->capture_default_str();
  AddThreadsOption(sweep, &sweep_args.threads,
                   "Cells run at once (default 0: one per core); the results do not depend on it");
  AddQuietOption(sweep, &sweep_args.quiet);
  sweep->add_flag("--keep-runs", sweep_args.keep_runs,
                  "Keep every cell's jobs.csv, events.csv, allocations.csv and utilization.csv "
                  "too (default: cell.csv and summary.json only)");
  AddWindowOption(sweep, &sweep_args.run.window,
                  std::string(kRunWindowHelp) + " of each cell (sweep.csv's figures are over it)");
  auto* sweep_report = AddReportOption(sweep, &sweep_args.run.report, nullptr);
  auto* sweep_cell = sweep->add_option(
      "--cell", sweep_args.cell,
      "Run only cell N of the grid (0-based, the order above) and write OUT/cells/.../ alone");
  sweep_cell->excludes(sweep_report);
  auto* sweep_merge = sweep->add_option(
      "--merge", sweep_args.merge,
      "Write DIR/sweep.csv from the cells under DIR/cells/ (what --cell runs leave); takes no "
      "other option");
  for (CLI::Option* o : {sweep_cluster, sweep_profiles, sweep_cell, sweep_jobs, sweep_report}) {
    sweep_merge->excludes(o);
  }
  auto* sweep_emit = sweep->add_flag(
      "--emit-k8s-job", sweep_args.emit_k8s_job,
      "Write (to stdout) a Kubernetes batch/v1 Indexed Job that runs the grid, one pod per "
      "cell running `dlsched sweep ... --cell $(JOB_COMPLETION_INDEX)` in the volume's root; "
      "the inputs are checked here first");
  sweep_emit->excludes(sweep_cell)->excludes(sweep_report);
  sweep
      ->add_option("--k8s-image", sweep_args.k8s.image,
                   "The pods' image (default dlsched:" + std::string(DLSCHED_VERSION) + ")")
      ->needs(sweep_emit);
  sweep
      ->add_option("--k8s-pvc", sweep_args.k8s.pvc,
                   "The PersistentVolumeClaim mounted at /data, the pods' working directory: "
                   "inputs are read and results written there")
      ->capture_default_str()
      ->needs(sweep_emit);
  sweep->add_option("--k8s-name", sweep_args.k8s.name, "The Job's name")
      ->capture_default_str()
      ->needs(sweep_emit);
  sweep
      ->add_option("--k8s-parallelism", sweep_args.k8s.parallelism,
                   "Pods at once (default 0: as many as cells, at most 10)")
      ->check(IntegerIn(0, kMaxK8sCount))
      ->needs(sweep_emit);
  sweep
      ->add_option("--k8s-backoff-limit", sweep_args.k8s.backoff_limit,
                   "Pod failures the Job tolerates in all (spec.backoffLimit)")
      ->capture_default_str()
      ->check(IntegerIn(0, kMaxK8sCount))
      ->needs(sweep_emit);
  sweep
      ->add_option("--k8s-backoff-limit-per-index", sweep_args.k8s.backoff_limit_per_index,
                   "Retries of each cell (spec.backoffLimitPerIndex: Kubernetes 1.29 or later, "
                   "beta there, GA in 1.33); not set by default")
      ->check(IntegerIn(0, kMaxK8sCount))
      ->needs(sweep_emit);

  std::string show;
  auto* profiles = app.add_subcommand(
      "profiles", "List the built-in scheduler profiles (use one with `simulate --profile NAME`)");
  profiles->add_option("--show", show,
                       "Print a built-in profile's YAML, a starting point for your own");
  auto* models = app.add_subcommand("models", "List the model zoo (throughput profiles)");

  sim::GenerateOptions gen;
  sim::ClusterOptions gen_cluster;
  std::string gen_out;
  std::string gen_cluster_out;
  auto* generate = app.add_subcommand(
      "generate",
      "Write a synthetic workload for scale tests: Poisson arrivals, 0-2 PS, 1-8 one-GPU "
      "workers (some elastic), model-zoo models; optionally a matching cluster YAML. The same "
      "seed gives the same file. An --out ending in .csv is written in the native trace format "
      "(use it with --trace native:FILE), which loads several times faster than YAML");
  generate->footer(
      "Examples:\n"
      "  dlsched generate --jobs 10000 --seed 1 --mean-interarrival 2 --out w.yaml \\\n"
      "                   --nodes 1000 --gpus-per-node 8 --cluster-out c.yaml\n"
      "  dlsched generate --jobs 30000 --seed 1 --mean-interarrival 1 --out w.csv\n"
      "  dlsched simulate -c c.yaml --trace native:w.csv");
  generate->add_option("--jobs,-n", gen.jobs, "Number of jobs")->required();
  generate->add_option("--seed,-s", gen.seed, "Random seed")->capture_default_str();
  AddWorkloadShapeOptions(generate, &gen);
  generate->add_option("--out,-o", gen_out,
                       "Workload file to write (default: YAML on stdout): native trace CSV when "
                       "it ends in .csv, else YAML; replaced only once every file is written");
  auto* cluster_out_opt = generate->add_option(
      "--cluster-out", gen_cluster_out,
      "Also write a cluster YAML: --nodes nodes of --gpus-per-node GPUs, 64 cpu, 512Gi");
  generate->add_option("--nodes", gen_cluster.nodes, "Nodes in the cluster")
      ->capture_default_str()
      ->needs(cluster_out_opt);
  generate->add_option("--gpus-per-node", gen_cluster.gpus_per_node, "GPUs per node")
      ->capture_default_str()
      ->needs(cluster_out_opt);

  JobSource convert_source;
  std::string convert_out;
  std::string convert_to;
  auto* convert = app.add_subcommand(
      "convert",
      "Read a trace (or a workload YAML) and write it in the native trace format, which loads "
      "fastest, or as workload YAML to edit. The native format holds jobs of workers and PS "
      "(gpus, cpu, memory) given by a duration or by totalSteps and a model-zoo model, as "
      "`dlsched generate` writes them; any other job is refused, naming it");
  convert->footer(
      "Examples:\n"
      "  dlsched convert --trace philly:data/pollux/philly.csv --vc 6214e9 --out philly.csv\n"
      "  dlsched convert --trace tiresias:data/tiresias/60_job.csv --out w.yaml\n"
      "  dlsched convert --workload generated.yaml --out generated.csv");
  AddJobSourceOptions(convert, &convert_source);
  convert->add_option("--out,-o", convert_out,
                      "File to write (default: stdout); replaced only once completely written");
  convert
      ->add_option("--to", convert_to, "native or yaml (default: yaml for .yaml/.yml, else native)")
      ->check(CLI::IsMember({"native", "yaml"}));

  JobSource size_source;
  NodeShape size_shape;
  std::string size_load = "0.7:0.95";
  std::string size_out;
  std::string size_to;
  auto* size = app.add_subcommand(
      "size",
      "Suggest a cluster for a workload or trace: the fewest nodes of one shape on which its "
      "offered load (the GPU-seconds its jobs ask for, each at its size, over the cluster's "
      "GPUs times the span of the arrivals) is within --load, and enough for its largest "
      "job; written as cluster YAML, or as a Tiresias cluster CSV (-c tiresias:FILE), with a "
      "line on stderr saying the nodes, GPUs and load");
  size->footer(
      "Scheduling policies differ only where jobs wait: on a cluster a trace loads to 0.5 or "
      "less jobs seldom queue and every policy gives about the same numbers; near 1 they "
      "queue at times, and above 1 the queue grows while jobs arrive (and drains after). The "
      "default range, 0.7:0.95, is a busy cluster that keeps up.\n\n"
      "Examples:\n"
      "  dlsched size -t tiresias:data/tiresias/60_job.csv           # 4 nodes of 4 GPUs: 0.935\n"
      "  dlsched size -t tiresias:data/tiresias/60_job.csv -o c.csv  # for -c tiresias:c.csv\n"
      "  dlsched size -t pollux:data/pollux/workloads/workload-1.csv --load 0.5:0.9\n"
      "  dlsched size -w w.yaml --gpus-per-node 8 --cpus-per-node 96 -o c.yaml\n"
      "Exit codes: 0 written; 1 the file cannot be written; 2 bad input (one line: a "
      "malformed or empty --load, jobs that ask for no GPU time or all arrive at once, a task "
      "larger than a node, no node count in the range, a cluster over the limits dlsched "
      "reads).");
  AddJobSourceOptions(size, &size_source);
  size->add_option("--load,-l", size_load,
                   "The offered load's range LO:HI, 0 < LO <= HI: the fewest nodes loaded to at "
                   "most HI, refused when that is below LO")
      ->capture_default_str();
  size->add_option("--gpus-per-node", size_shape.gpus,
                   "GPUs per node (default: 4 for tiresias: and pollux: traces, as their "
                   "papers' clusters; else 8)")
      ->check(IntegerIn(1, core::kMaxGpusPerNode));
  size->add_option("--cpus-per-node", size_shape.cpus, "cpus per node (default: 8 per GPU)")
      ->check(IntegerIn(1, 1'000'000));
  size->add_option("--memory-gi-per-node", size_shape.memory_gi,
                   "Memory per node in GiB (default: 64 per GPU)")
      ->check(IntegerIn(1, 1'000'000));
  size->add_option("--out,-o", size_out,
                   "File to write (default: stdout); a .csv is a Tiresias cluster CSV, anything "
                   "else cluster YAML; replaced only once completely written");
  size->add_option("--to", size_to, "yaml or tiresias (default: tiresias for .csv, else yaml)")
      ->check(CLI::IsMember({"yaml", "tiresias"}));

  OperatorArgs operator_args;
  CLI::App* operate = AddOperatorCommand(app, &operator_args);
  SnapshotArgs snapshot_args;
  CLI::App* snapshot = AddSnapshotCommand(app, &snapshot_args);
  ReportArgs report_args;
  CLI::App* report_cmd = AddReportCommand(app, &report_args);
  RerunArgs rerun_args;
  CLI::App* rerun = AddRerunCommand(app, &rerun_args);

  // CLI11 answers an unknown command with "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> known;
    for (const CLI::App* sub : app.get_subcommands({})) known.push_back(sub->get_name());
    if (std::find(known.begin(), known.end(), argv[1]) == known.end()) {
      const std::vector<std::string_view> names(known.begin(), known.end());
      PrintError(fmt::format("'{}' is not a dlsched command (commands: {}; see 'dlsched --help'){}",
                             argv[1], fmt::join(known, ", "), core::DidYouMean(argv[1], names)));
      return kBadInput;
    }
  }
  // `simulate --jobs` printed the per-job table until 0.1.0; --jobs is a
  // job count on every command now.
  if (argc > 1 && std::string_view(argv[1]) == "simulate") {
    for (int i = 2; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--jobs" || arg.starts_with("--jobs=")) {
        PrintError(
            "simulate: --jobs is now --job-table (one row per job after the summary); --jobs "
            "N is a job count, as on generate and sweep");
        return kBadInput;
      }
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, naming the subcommand and where its help is.
    std::string sub;
    for (const CLI::App* s : app.get_subcommands()) sub = s->get_name() + " ";
    std::string what = e.what();
    if (!sub.empty()) what = sub.substr(0, sub.size() - 1) + ": " + what;
    PrintError(fmt::format("{} (see 'dlsched {}--help')", what, sub));
    return kBadInput;
  }
  // The command line as provenance records it (report/provenance.h).
  const std::vector<std::string> command =
      RecordedCommand(std::vector<std::string>(argv + 1, argv + argc));
  if (simulate->parsed()) return Simulate(sim_args, out_dir, quiet, job_table, command);
  if (validate->parsed()) return Validate(files);
  if (explain->parsed()) return Explain(explain_args, job, format);
  if (profiles->parsed()) return Profiles(show);
  if (compare->parsed())
    return Compare(compare_args, compare_profiles, compare_out, compare_threads, compare_quiet,
                   command);
  if (sweep->parsed()) {
    sweep_args.generated = sweep_jobs->count() > 0;
    for (const CLI::Option* o : sweep->get_options()) {
      if (sweep_args.merge.empty() || o == sweep_merge || o->count() == 0) continue;
      return BadInput(
          core::Errorf("--merge: takes no other option (got {})", o->get_name()).error());
    }
    sweep_args.command = command;
    return Sweep(sweep_args);
  }
  if (models->parsed()) return Models();
  if (generate->parsed()) return Generate(gen, gen_cluster, gen_out, gen_cluster_out);
  if (convert->parsed()) return Convert(convert_source, convert_out, convert_to);
  if (size->parsed()) return Size(size_source, size_shape, size_load, size_out, size_to);
  if (operate->parsed()) return Operate(operator_args, argc, argv);
  if (snapshot->parsed()) return TakeSnapshot(snapshot_args, argc, argv);
  if (report_cmd->parsed()) return RunReport(report_args);
  if (rerun->parsed()) {
    return Rerun(rerun_args, [](const std::vector<std::string>& args) {
      std::vector<std::string> words = {"dlsched"};
      words.insert(words.end(), args.begin(), args.end());
      std::vector<char*> cargv;
      for (auto& w : words) cargv.push_back(w.data());
      cargv.push_back(nullptr);
      return Run(static_cast<int>(words.size()), cargv.data());
    });
  }
  return kBadInput;
}

}  // namespace

int Main(int argc, char** argv) {
  // A closed pipe or a full file-size limit is a write error we report,
  // not a signal that kills the process half-way.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  int code = kOk;
  try {
    code = Run(argc, argv);
  } catch (const std::bad_alloc&) {
    PrintError("out of memory");
    return kRunFailed;
  } catch (const std::exception& e) {
    // Every input error is a returned error; reaching this is a bug.
    PrintError(fmt::format("internal error: {} (please report it)", e.what()));
    return kRunFailed;
  }
  // Output that could not be written is a failed run, even when the
  // command itself succeeded (a full disk, a closed pipe).
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if ((!flushed || std::ferror(stdout)) && code == kOk) {
    std::fprintf(stderr, "dlsched: cannot write to standard output%s%s\n", err != 0 ? ": " : "",
                 err != 0 ? std::strerror(err) : "");
    return kRunFailed;
  }
  return code;
}

}  // namespace dlsched::cli
