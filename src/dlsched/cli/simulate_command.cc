#include "dlsched/cli/simulate_command.h"

#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/cli/report_command.h"
#include "dlsched/cli/runs.h"
#include "dlsched/core/text.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/outputs.h"
#include "dlsched/report/table.h"

namespace dlsched::cli {
namespace {

// The exit code of a run written: interrupted, failed or done.
int Outcome(const metrics::RunSummary& summary, bool interrupted) {
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

}  // namespace

CLI::App* AddSimulateCommand(CLI::App& app, SimulateArgs* args) {
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "Run a workload on a simulated cluster under a profile; print a summary and write "
      "summary.json, jobs.csv, events.csv (the timeline), allocations.csv and utilization.csv "
      "(and queues.csv when the cluster declares queues)");
  simulate->footer(
      "Examples:\n"
      "  dlsched simulate -c examples/cluster-kod2-elastic.yaml \\\n"
      "                   -w examples/workload-kod2-elastic.yaml -p kod2 --job-table\n"
      "  dlsched simulate -c C -w W -p kod2 --set order.args.kappa=2   # a variant of kod2");
  AddRunOptions(simulate, &args->run);
  simulate->add_option("--out,-o", args->out,
                       "Output directory (default: out/<profile name>). Written as one unit and "
                       "replaced as a whole, so it must be new, empty or an earlier result "
                       "directory of dlsched");
  AddQuietOption(simulate, &args->quiet);
  // --jobs meant this until 0.1.0; it is a job count everywhere now
  // (RefuseSimulateJobs refuses it here, pointing to --job-table).
  simulate->add_flag("--job-table", args->job_table,
                     "Also print one row per job after the summary");
  AddWindowOption(simulate, &args->run.window, kRunWindowHelp);
  AddAloneOption(simulate, &args->run.alone);
  AddReportOption(simulate, &args->run.report, &args->run.page);
  return simulate;
}

bool RefuseSimulateJobs(int argc, char** argv) {
  if (argc <= 1 || std::string_view(argv[1]) != "simulate") return false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--jobs" || arg.starts_with("--jobs=")) {
      PrintError(
          "simulate: --jobs is now --job-table (one row per job after the summary); --jobs "
          "N is a job count, as on generate and sweep");
      return true;
    }
  }
  return false;
}

int Simulate(const SimulateArgs& args, const std::vector<std::string>& command) {
  const RunArgs& a = args.run;
  const StopSignals signals;
  auto window = ParseWindow(a.window);
  if (!window) return BadInput(window.error());
  auto loaded = Load(a);
  if (!loaded) return LoadFailed(loaded.error());
  const std::string profile = loaded->engine->profile().name;
  if (auto st = CheckBaseline(a.page.baseline, {&profile, 1}); !st) return BadInput(st.error());
  const std::string dir = args.out.empty() ? fmt::format("out/{}", profile) : args.out;
  if (auto st = CheckOut(dir); !st) return BadInput(st.error());
  auto provenance = RunProvenance(command, a.cluster, a.jobs, a.window);
  if (!provenance) return BadInput(provenance.error());
  if (auto st = AddProfile(*provenance, a.profile, a.overrides, profile); !st) {
    return BadInput(st.error());
  }
  RunRequest run;
  run.cluster = &loaded->inputs.cluster;
  run.workload = &loaded->inputs.workload;
  run.engine = loaded->engine.get();
  run.options.alone = a.alone;
  bool interrupted = false;
  auto results = RunAll({&run, 1}, Batch(1, args.quiet), &interrupted);
  auto& result = results[0];
  if (!result) return BadInput(result.error());
  const metrics::RunSummary summary = metrics::Summarize(result->run, *window);
  if (!args.quiet) {
    std::fputs(report::FormatSummary(summary).c_str(), stdout);
    if (args.job_table) std::printf("\n%s", report::FormatJobs(result->run).c_str());
  }
  if (auto st = report::WriteOutputs(dir, summary, result->run, &*provenance); !st) {
    return RunFailed(st.error());
  }
  const std::string shown = core::EscapeText(dir, kMaxMessageBytes);
  std::printf(
      "results: %s/ (summary.json, jobs.csv, events.csv, allocations.csv, "
      "utilization.csv%s)\n",
      shown.c_str(), result->run.queues.empty() ? "" : ", queues.csv");
  if (!a.report.empty()) {
    if (auto st = WriteReport({&dir, 1}, a.report, a.page); !st) return RunFailed(st.error());
  }
  return Outcome(summary, interrupted);
}

}  // namespace dlsched::cli
