#include "dlsched/cli/sweep_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/cli/report_command.h"
#include "dlsched/cli/runs.h"
#include "dlsched/cli/tables.h"
#include "dlsched/core/text.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/format.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/report/outputs.h"
#include "dlsched/report/provenance.h"
#include "dlsched/report/sweep.h"

namespace dlsched::cli {
namespace {

// The most the counts of --emit-k8s-job's Job may be (int32, as Kubernetes
// keeps them).
constexpr int64_t kMaxK8sCount = std::numeric_limits<int32_t>::max();

// The options --merge takes none of.
struct GridOptions {
  CLI::Option* cluster = nullptr;
  CLI::Option* jobs = nullptr;
  CLI::Option* profiles = nullptr;
};

// The grid and how it runs: the inputs, --jobs and the generated
// workload's shape, --profiles, --load, where the results go and what they
// keep.
GridOptions AddGridOptions(CLI::App* sweep, SweepArgs* a) {
  GridOptions o;
  o.cluster = sweep->add_option("--cluster,-c", a->run.cluster, "Cluster YAML, or tiresias:FILE");
  AddJobSourceOptions(sweep, &a->run.jobs);
  o.jobs = sweep->add_option(
      "--jobs,-n", a->gen.jobs,
      "Generate the workload instead (as `dlsched generate`): this many jobs, one workload per "
      "--seeds");
  o.jobs->excludes("--workload")->excludes("--trace");
  AddListOption(sweep, "--seeds", &a->seeds,
                "Seeds of the generated workload, comma-separated (default: 1)")
      ->needs(o.jobs);
  for (CLI::Option* shape : AddWorkloadShapeOptions(sweep, &a->gen)) shape->needs(o.jobs);
  o.profiles = AddListOption(
      sweep, "--profiles,-p", &a->profiles,
      "Profiles, comma-separated, as compare takes them (NAME:PATH=VALUE is a variant)");
  AddSetOption(sweep, &a->run.overrides);
  AddListOption(sweep, "--load,-l", &a->loads,
                "Load factors, comma-separated (0.001 to 1e6): submit times are divided by each")
      ->default_str("1");
  sweep->add_option(
      "--quota", a->quota,
      "Vary one queue's nominal quota, a value per cell: QUEUE=V1,V2,... (its nvidia.com/gpu "
      "quota) or QUEUE:RESOURCE=V1,V2,... (quantities); the queue must be declared in the "
      "cluster file and its quota list the resource; the report draws every figure against it");
  sweep
      ->add_option("--out,-o", a->out,
                   "Output directory, written as one unit and replaced as a whole (new, empty or "
                   "an earlier result directory of dlsched); with --cell only the cell's "
                   "directory in it is replaced; with --emit-k8s-job the pods' directory, "
                   "relative to the volume")
      ->capture_default_str();
  AddThreadsOption(sweep, &a->threads,
                   "Cells run at once (default 0: one per core); the results do not depend on it");
  AddQuietOption(sweep, &a->quiet);
  sweep->add_flag("--keep-runs", a->keep_runs,
                  "Keep every cell's jobs.csv, events.csv, allocations.csv and utilization.csv "
                  "too (default: cell.csv and summary.json only)");
  AddWindowOption(sweep, &a->run.window,
                  std::string(kRunWindowHelp) + " of each cell (sweep.csv's figures are over it)");
  AddAloneOption(sweep, &a->run.alone);
  return o;
}

// --report, --cell, --merge and --emit-k8s-job, which exclude one another
// (and --merge everything else); returns --emit-k8s-job.
CLI::Option* AddModeOptions(CLI::App* sweep, SweepArgs* a, const GridOptions& grid) {
  auto* report = AddReportOption(sweep, &a->run.report, nullptr);
  auto* cell = sweep->add_option(
      "--cell", a->cell,
      "Run only cell N of the grid (0-based, the order above) and write OUT/cells/.../ alone");
  cell->excludes(report);
  auto* merge = sweep->add_option(
      "--merge", a->merge,
      "Write DIR/sweep.csv from the cells under DIR/cells/ (what --cell runs leave); takes no "
      "other option");
  for (CLI::Option* o : {grid.cluster, grid.profiles, cell, grid.jobs, report}) {
    merge->excludes(o);
  }
  auto* emit = sweep->add_flag(
      "--emit-k8s-job", a->emit_k8s_job,
      "Write (to stdout) a Kubernetes batch/v1 Indexed Job that runs the grid, one pod per "
      "cell running `dlsched sweep ... --cell $(JOB_COMPLETION_INDEX)` in the volume's root; "
      "the inputs are checked here first");
  emit->excludes(cell)->excludes(report);
  return emit;
}

// The Indexed Job's options, each needing --emit-k8s-job.
void AddK8sJobOptions(CLI::App* sweep, K8sJobOptions* k8s, CLI::Option* emit) {
  sweep
      ->add_option("--k8s-image", k8s->image,
                   "The pods' image (default dlsched:" + std::string(DLSCHED_VERSION) + ")")
      ->needs(emit);
  sweep
      ->add_option("--k8s-pvc", k8s->pvc,
                   "The PersistentVolumeClaim mounted at /data, the pods' working directory: "
                   "inputs are read and results written there")
      ->capture_default_str()
      ->needs(emit);
  sweep->add_option("--k8s-name", k8s->name, "The Job's name")->capture_default_str()->needs(emit);
  sweep
      ->add_option("--k8s-parallelism", k8s->parallelism,
                   "Pods at once (default 0: as many as cells, at most 10)")
      ->check(IntegerIn(0, kMaxK8sCount))
      ->needs(emit);
  sweep
      ->add_option("--k8s-backoff-limit", k8s->backoff_limit,
                   "Pod failures the Job tolerates in all (spec.backoffLimit)")
      ->capture_default_str()
      ->check(IntegerIn(0, kMaxK8sCount))
      ->needs(emit);
  sweep
      ->add_option("--k8s-backoff-limit-per-index", k8s->backoff_limit_per_index,
                   "Retries of each cell (spec.backoffLimitPerIndex: Kubernetes 1.29 or later, "
                   "beta there, GA in 1.33); not set by default")
      ->check(IntegerIn(0, kMaxK8sCount))
      ->needs(emit);
}

// The columns of sweep.csv (and of each cell.csv): the cell, its place in
// the grid, then compare.csv's columns.
// With --quota, `quota` (the value, in cores for cpu) and `quota_of` ("QUEUE
// RESOURCE") after `seed`; on a cluster with queues, each queue's figures
// (`jct_mean@QUEUE`, ...) at the end.
std::vector<report::CompareField> SweepFields(const SweepGrid& grid, const SweepGrid::Cell& cell,
                                              std::span<const std::string> queues,
                                              const metrics::RunSummary& s) {
  std::vector<report::CompareField> fields = {
      {"cell", static_cast<int64_t>(cell.index)},
      {"cells", static_cast<int64_t>(grid.size())},
      {"profile", grid.profiles[cell.profile]},
      {"load", grid.loads[cell.load]},
      {"seed", grid.seeds.empty() ? std::string() : std::to_string(grid.seeds[cell.seed])},
  };
  if (grid.quota) {
    fields.push_back({"quota", grid.quota->Number(cell.quota)});
    fields.push_back({"quota_of", grid.quota->Of()});
  }
  std::vector<report::CompareField> rest = report::CompareFields(grid.profiles[cell.profile], s);
  fields.insert(fields.end(), rest.begin() + 1, rest.end());  // without its profile
  std::vector<report::CompareField> per_queue = report::QueueCompareFields(queues, s);
  fields.insert(fields.end(), per_queue.begin(), per_queue.end());
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
  if (j.launch_delay) add("--launch-delay", Exact(*j.launch_delay));
  if (j.checkpoint_delay) add("--checkpoint-delay", Exact(*j.checkpoint_delay));
  if (a.generated) {
    add("--jobs", std::to_string(a.gen.jobs));
    add("--seeds", fmt::format("{}", fmt::join(grid.seeds, ",")));
    add("--mean-interarrival", Exact(a.gen.mean_interarrival));
    add("--max-workers", std::to_string(a.gen.max_workers));
    add("--elastic-fraction", Exact(a.gen.elastic_fraction));
    add("--min-steps", Exact(a.gen.min_steps));
    add("--max-steps", Exact(a.gen.max_steps));
    if (a.gen.shape == sim::GenerateOptions::Shape::kGavel) add("--shape", "gavel");
  }
  add("--profiles", fmt::format("{}", fmt::join(a.profiles, ",")));
  std::vector<std::string> loads;
  for (double l : a.loads) loads.push_back(Exact(l));
  add("--load", fmt::format("{}", fmt::join(loads, ",")));
  add("--quota", a.quota);
  for (const auto& o : a.run.overrides) add("--set", o);
  add("--window", a.run.window);
  if (a.run.alone) args.push_back("--alone");
  if (a.keep_runs) args.push_back("--keep-runs");
  add("--cell", "$(JOB_COMPLETION_INDEX)");
  add("--out", a.out);
  args.push_back("--quiet");
  return args;
}

int EmitK8sJob(const SweepArgs& a, const SweepGrid& grid) {
  K8sJobOptions k8s = a.k8s;
  if (k8s.image.empty()) k8s.image = fmt::format("dlsched:{}", DLSCHED_VERSION);
  std::string grid_text = fmt::format("{} profiles", grid.profiles.size());
  if (grid.quota) grid_text += fmt::format(" x {} quotas", grid.Quotas());
  grid_text += fmt::format(" x {} loads", grid.loads.size());
  if (!grid.seeds.empty()) grid_text += fmt::format(" x {} seeds", grid.seeds.size());
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

// The flags that must be there, and the grid's axes, checked before
// anything loads.
core::Status CheckSweepArgs(const SweepArgs& a) {
  if (a.run.cluster.empty()) return core::MakeError("--cluster: required (or --merge DIR)");
  if (a.profiles.empty()) return core::MakeError("--profiles: required");
  if (a.run.jobs.workload.empty() && a.run.jobs.trace.empty() && !a.generated) {
    return core::MakeError(
        "give the jobs with --workload FILE, --trace FORMAT:FILE or --jobs N (a generated "
        "workload per --seeds)");
  }
  if (a.generated && (a.run.jobs.launch_delay || a.run.jobs.checkpoint_delay)) {
    return core::Errorf(
        "{}: applies to the jobs of --workload or --trace, not to generated ones (--jobs)",
        a.run.jobs.launch_delay ? "--launch-delay" : "--checkpoint-delay");
  }
  if (auto st = CheckLoads(a.loads); !st) return st;
  return CheckSeeds(a.seeds);
}

// The grid of `profiles` (their directory names) and the quotas, loads and
// seeds of `a`, checked: not empty, not over the limit, and --cell in it.
core::Result<SweepGrid> MakeGrid(const SweepArgs& a, const std::vector<std::string>& profiles,
                                 const core::ClusterSpec& cluster) {
  SweepGrid grid;
  grid.loads = a.loads;
  if (a.generated) grid.seeds = a.seeds.empty() ? std::vector<uint64_t>{a.gen.seed} : a.seeds;
  grid.profiles = profiles;
  if (!a.quota.empty()) {
    DLSCHED_TRY_LET(axis, ParseQuotaAxis(a.quota, cluster));
    grid.quota = std::move(*axis);
  }
  if (grid.size() == 0) {
    return core::MakeError("--load: the grid is empty (give at least one load factor)");
  }
  if (grid.size() > static_cast<size_t>(report::kMaxSweepCells)) {
    return core::Errorf("--profiles, --quota, --load, --seeds: the grid has {} cells, at most {}",
                        grid.size(), report::kMaxSweepCells);
  }
  if (a.cell && (*a.cell < 0 || static_cast<uint64_t>(*a.cell) >= grid.size())) {
    return core::Errorf("--cell: {} is out of range: the grid has {} cells (0 to {})", *a.cell,
                        grid.size(), grid.size() - 1);
  }
  return grid;
}

// The cells to run: --cell's, or the whole grid.
std::vector<SweepGrid::Cell> SelectedCells(const SweepGrid& grid, std::optional<int64_t> cell) {
  std::vector<SweepGrid::Cell> cells;
  if (cell) {
    cells.push_back(grid.At(static_cast<size_t>(*cell)));
  } else {
    for (size_t i = 0; i < grid.size(); ++i) cells.push_back(grid.At(i));
  }
  return cells;
}

// A whole grid records its provenance beside sweep.csv; a cell run alone
// is part of a grid recorded elsewhere (or nowhere): nullopt.
core::Result<std::optional<report::Provenance>> SweepProvenance(const SweepArgs& a,
                                                                const SweepGrid& grid,
                                                                const LoadedProfiles& profiles) {
  if (a.cell) return std::nullopt;
  DLSCHED_TRY_LET(p, RunProvenance(a.command, a.run.cluster, a.run.jobs, a.run.window));
  DLSCHED_TRY(AddProfiles(*p, profiles));
  if (a.generated) p->seeds = grid.seeds;
  return std::move(*p);
}

// A load factor below 1 spreads the arrivals out, maybe past the limit
// every workload keeps (core/spec_limits.h): a file's is checked at each
// load before anything runs (one scaled copy at a time), a generated one's
// as each cell makes it.
core::Status CheckScaledLoads(const config::WorkloadSpec& base, const std::vector<double>& loads) {
  for (double load : loads) {
    if (auto st = CheckScaledArrivals(ScaleArrivals(base, load), load); !st) return st;
  }
  return {};
}

// What the cells' results become, each taken on the thread that ran it as
// it ends: its files added to the run directory, its line of sweep.csv and
// its row of the table kept.
class CellResults {
 public:
  CellResults(const SweepArgs& a, const SweepGrid& grid, const std::vector<SweepGrid::Cell>& cells,
              std::vector<std::string> queues, const std::optional<metrics::Window>& window,
              report::OutputDir& out)
      : a_(a),
        grid_(grid),
        cells_(cells),
        queues_(std::move(queues)),
        window_(window),
        out_(out),
        header_(CsvLine(SweepFields(grid, cells[0], queues_, {}), true)),
        rows_(cells.size()),
        table_(cells.size()),
        run_errors_(cells.size()) {}

  void Take(size_t k, core::Result<sim::SimResult>&& result) {
    if (!result) {
      std::lock_guard lock(mu_);
      run_errors_[k] = result.error();
      return;
    }
    const SweepGrid::Cell& c = cells_[k];
    const metrics::RunSummary summary = metrics::Summarize(result->run, window_);
    const std::string row = CsvLine(SweepFields(grid_, c, queues_, summary), false);
    std::vector<std::string> shown = CompareRow(grid_.profiles[c.profile], summary);
    std::vector<std::string> line = {std::to_string(c.index), shown[0]};
    if (grid_.quota) line.push_back(grid_.quota->Text(c.quota));
    line.push_back(report::FormatNumber(grid_.loads[c.load]));
    line.push_back(grid_.seeds.empty() ? "-" : std::to_string(grid_.seeds[c.seed]));
    line.insert(line.end(), shown.begin() + 1, shown.begin() + 6);
    const std::string prefix = a_.cell ? "" : grid_.CellDir(c) + "/";
    std::string summary_json;
    if (!a_.keep_runs) summary_json = report::SummaryJsonText(summary);
    std::lock_guard lock(mu_);
    rows_[k] = row;
    table_[k] = std::move(line);
    core::Status st = out_.Add(prefix + std::string(report::kCellFile), header_ + row);
    if (st) {
      st = a_.keep_runs ? report::AddRunFiles(out_, prefix, summary, result->run)
                        : out_.Add(prefix + "summary.json", summary_json);
    }
    if (!st && !write_error_) write_error_ = st.error();
  }

  // After the runs: the first error of a run (bad input), else of a write.
  int Failed() const {
    for (const auto& e : run_errors_) {
      if (e) return BadInput(*e);
    }
    if (write_error_) return RunFailed(*write_error_);
    return kOk;
  }

  std::string Csv() const {
    std::string csv = header_;
    for (const auto& r : rows_) csv += r;
    return csv;
  }

  // The terminal's table: a row a cell.
  std::string Table() const {
    std::vector<std::string> head = {"cell", "profile"};
    if (grid_.quota) head.push_back("quota");
    for (const char* h : {"load", "seed", "status", "done", "JCT mean", "JCT p95", "makespan"}) {
      head.emplace_back(h);
    }
    std::vector<std::vector<std::string>> lines = {head};
    lines.insert(lines.end(), table_.begin(), table_.end());
    return AlignedTable(lines);
  }

 private:
  const SweepArgs& a_;
  const SweepGrid& grid_;
  const std::vector<SweepGrid::Cell>& cells_;
  const std::vector<std::string> queues_;
  const std::optional<metrics::Window> window_;
  report::OutputDir& out_;
  const std::string header_;
  std::vector<std::string> rows_;
  std::vector<std::vector<std::string>> table_;
  std::vector<std::optional<core::Error>> run_errors_;
  std::optional<core::Error> write_error_;
  std::mutex mu_;
};

// What a sweep has loaded and checked, ready to run.
struct Prepared {
  SweepGrid grid;
  std::vector<SweepGrid::Cell> cells;
  core::ClusterSpec cluster;
  std::vector<core::ClusterSpec> clusters;  // the cluster at each --quota value (or as given)
  LoadedProfiles profiles;
  std::optional<config::WorkloadSpec> base;  // a file's jobs; none when generated
  std::optional<metrics::Window> window;
  std::string dir;  // the run directory: the sweep's, or the one cell's inside it
  std::optional<report::Provenance> provenance;
};

// Runs the cells and writes their results in p.dir as one unit.
int RunCells(const SweepArgs& a, const Prepared& p) {
  std::vector<const engine::Engine*> engines;
  for (const auto& e : p.profiles.engines) engines.push_back(e.get());
  std::vector<RunRequest> runs =
      CellRuns(p.grid, p.cells, p.clusters, engines, p.base ? &*p.base : nullptr, a.gen);
  for (RunRequest& r : runs) r.options.alone = a.run.alone;
  auto out = report::OutputDir::Open(p.dir);
  if (!out) return RunFailed(out.error());
  std::vector<std::string> queues;
  for (const core::QueueSpec& q : p.cluster.queues) queues.push_back(q.name);
  CellResults results(a, p.grid, p.cells, std::move(queues), p.window, *out);
  bool interrupted = false;
  RunAll(
      runs, Batch(a.threads, a.quiet), &interrupted,
      [&](size_t k, core::Result<sim::SimResult>&& result) { results.Take(k, std::move(result)); });
  if (const int code = results.Failed(); code != kOk) return code;
  if (!a.cell) {
    if (auto st = out->Add("sweep.csv", results.Csv()); !st) return RunFailed(st.error());
    if (auto st = out->Add(report::kProvenanceFile, report::ProvenanceFileText(*p.provenance));
        !st) {
      return RunFailed(st.error());
    }
  }
  if (auto st = out->Commit(); !st) return RunFailed(st.error());
  if (!a.quiet) std::fputs(results.Table().c_str(), stdout);
  const std::string shown = core::EscapeText(p.dir, kMaxMessageBytes);
  if (a.cell) {
    std::printf("results: %s/ (cell %lld of %zu)\n", shown.c_str(), static_cast<long long>(*a.cell),
                p.grid.size());
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

int RunSweep(const SweepArgs& a) {
  if (!a.merge.empty()) return MergeSweep(a.merge);
  const StopSignals signals;
  if (auto st = CheckSweepArgs(a); !st) return BadInput(st.error());
  Prepared p;
  auto window = ParseWindow(a.run.window);
  if (!window) return BadInput(window.error());
  p.window = *window;
  auto cluster = LoadClusterArg(a.run.cluster);
  if (!cluster) return BadInput(cluster.error());
  p.cluster = std::move(*cluster);
  auto profiles = LoadProfiles(a.profiles, a.run.overrides);
  if (!profiles) return BadInput(profiles.error());
  p.profiles = std::move(*profiles);
  auto grid = MakeGrid(a, p.profiles.dirs, p.cluster);
  if (!grid) return BadInput(grid.error());
  p.grid = std::move(*grid);
  if (p.grid.quota) {
    for (size_t i = 0; i < p.grid.Quotas(); ++i) {
      auto c = WithQuota(p.cluster, *p.grid.quota, i);
      if (!c) return BadInput(c.error());
      p.clusters.push_back(std::move(*c));
    }
  } else {
    p.clusters.push_back(p.cluster);
  }
  p.cells = SelectedCells(p.grid, a.cell);
  // The jobs: a workload file or trace is loaded once, here, and each cell
  // runs on its own copy with scaled arrivals, made on the thread that runs
  // it and freed after (the file's own at load 1); a generated workload is
  // made for each cell on its thread, only its options checked here. So
  // memory holds the workloads of the cells running, not of the grid (a
  // sweep of 1,000,000 generated jobs used to build every one first).
  if (a.generated) {
    if (auto st = sim::CheckGenerateOptions(a.gen); !st) return BadInput(st.error());
  } else {
    auto w = LoadJobs(a.run.jobs);
    if (!w) return LoadFailed(w.error());
    p.base = std::move(*w);
  }
  if (a.emit_k8s_job) return EmitK8sJob(a, p.grid);
  p.dir = a.cell ? (std::filesystem::path(a.out) / p.grid.CellDir(p.cells[0])).string() : a.out;
  if (auto st = CheckOut(p.dir); !st) return BadInput(st.error());
  auto provenance = SweepProvenance(a, p.grid, p.profiles);
  if (!provenance) return BadInput(provenance.error());
  p.provenance = std::move(*provenance);
  if (p.base) {
    if (auto st = CheckScaledLoads(*p.base, p.grid.loads); !st) return BadInput(st.error());
  }
  return RunCells(a, p);
}

}  // namespace

CLI::App* AddSweepCommand(CLI::App& app, SweepArgs* args) {
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Run a grid of profiles (x values of one queue's quota) x load factors (x seeds of a "
      "generated workload), one cell per core, and write OUT/sweep.csv (a row per cell) and "
      "each cell's files to OUT/cells/<profile>[/quota-<Q>]/load-<L>[/seed-<S>]/; the report "
      "draws every figure of compare.csv (and each queue's) against load, or against the quota "
      "with --quota, a line per profile (the mean over seeds, error bars), cells interrupted or "
      "with jobs stuck marked. Load L divides every submit time by L (2: arrivals twice as "
      "dense). --cell N runs one cell; --emit-k8s-job writes a Kubernetes Indexed Job that runs "
      "the grid a cell per index; --merge OUT joins the cells it left into OUT/sweep.csv");
  sweep->footer(
      "Cells are numbered profile by profile, then quota, then load, then seed: cell i is "
      "profile i / (quotas x loads x seeds), quota (i / (loads x seeds)) mod quotas, load "
      "(i / seeds) mod loads, seed i mod seeds (quotas = 1 without --quota, seeds = 1 without "
      "--jobs). Stuck jobs are a result, not an error. See docs/sweeps.md.\n\n"
      "Examples:\n"
      "  dlsched sweep -c examples/cluster-3node.yaml -w examples/workload-kod2-seed.yaml \\\n"
      "                -p gang-binpack,kod2 --load 0.5,1,2 --report sweep.html\n"
      "  dlsched sweep -c C --jobs 200 --seeds 1,2,3 -p fifo,las --load 0.5,1,1.5 -o out/s\n"
      "  dlsched sweep -c examples/cluster-queues.yaml -w examples/workload-queues.yaml \\\n"
      "                -p queue-reclaim --quota team-a=2,4,8 -o out/q   # team-a's GPUs\n"
      "  dlsched sweep -c C -w W -p P1,P2 --load 1,2 -o out/s --emit-k8s-job > job.yaml\n"
      "  dlsched report out/s           # after the Job: merges out/s/cells/");
  const GridOptions grid = AddGridOptions(sweep, args);
  CLI::Option* emit = AddModeOptions(sweep, args, grid);
  AddK8sJobOptions(sweep, &args->k8s, emit);
  return sweep;
}

int Sweep(const CLI::App& cmd, SweepArgs args, const std::vector<std::string>& command) {
  args.generated = cmd.get_option("--jobs")->count() > 0;
  const CLI::Option* merge = cmd.get_option("--merge");
  for (const CLI::Option* o : cmd.get_options()) {
    if (args.merge.empty() || o == merge || o->count() == 0) continue;
    return BadInput(core::Errorf("--merge: takes no other option (got {})", o->get_name()).error());
  }
  args.command = command;
  return RunSweep(args);
}

}  // namespace dlsched::cli
