#include "dlsched/cli/compare_command.h"

#include <cstdio>
#include <optional>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/cli/report_command.h"
#include "dlsched/cli/runs.h"
#include "dlsched/cli/tables.h"
#include "dlsched/core/text.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/format.h"
#include "dlsched/report/json_writer.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/report/outputs.h"
#include "dlsched/report/provenance.h"

namespace dlsched::cli {
namespace {

// compare's table, compare.csv and compare.json, a profile at a time.
// A queue's row of the printed per-queue table.
std::vector<std::string> QueueRow(const std::string& profile, const metrics::QueueSummary& q) {
  auto secs = [](std::optional<double> t) { return t ? fmt::format("{:.1f}", *t) : "-"; };
  auto ratio = [](std::optional<double> x) { return x ? fmt::format("{:.2f}", *x) : "-"; };
  return {profile,
          q.name,
          fmt::format("{}/{}", q.completed, q.jobs),
          secs(q.jct_mean),
          secs(q.jct_p95),
          secs(q.queueing_mean),
          fmt::format("{:.2f}", q.borrowed_gpu_hours),
          fmt::format("{:.2f}", q.lent_gpu_hours),
          fmt::format("{:.2f}", q.lost_gpu_hours),
          ratio(q.ftf_mean),
          ratio(q.ftf_max),
          std::to_string(q.preemptions_suffered),
          std::to_string(q.preemptions_caused)};
}

class CompareTables {
 public:
  explicit CompareTables(const std::optional<metrics::Window>& window) : w_(&json_) {
    w_.BeginObject();
    w_.Key("window");
    report::WindowJson(w_, window);
    w_.Key("profiles");
    w_.BeginArray();
  }

  void Add(const std::string& profile, const metrics::RunSummary& summary) {
    rows_.push_back(CompareRow(profile, summary));
    queues_.Add(profile, summary);
    for (const metrics::QueueSummary& q : summary.queues) {
      queue_rows_.push_back(QueueRow(profile, q));
    }
    const std::vector<report::CompareField> fields = report::CompareFields(profile, summary);
    if (csv_.empty()) csv_ = CsvLine(fields, true);
    csv_ += CsvLine(fields, false);
    w_.BeginObject();
    for (const report::CompareField& f : fields) {
      w_.Key(f.key);
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              w_.String(v);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              w_.Int(v);
            } else {
              w_.Number(report::RoundForOutput(v));
            }
          },
          f.value);
    }
    w_.EndObject();
  }

  // The table, and a note when a run did not finish every job.
  void Print() const {
    std::fputs(AlignedTable(rows_).c_str(), stdout);
    for (const auto& row : rows_) {
      if (row[1] != "all done" && row[1] != "status") {
        std::puts(
            "(JCT, makespan and slowdown marked >= count the jobs that did not complete at the "
            "run's end: lower bounds)");
        break;
      }
    }
    if (queue_rows_.size() > 1) std::printf("\n%s", AlignedTable(queue_rows_).c_str());
  }

  const std::string& Csv() const { return csv_; }
  // queues.csv beside compare.csv: every run's queues ("" without queues).
  const std::string& QueuesCsv() const { return queues_.Csv(); }

  // compare.json, closed with the provenance.
  std::string Json(const report::Provenance& provenance) {
    w_.EndArray();
    w_.Key("provenance");
    report::WriteProvenance(w_, provenance);
    w_.EndObject();
    return json_ + '\n';
  }

 private:
  std::vector<std::vector<std::string>> rows_ = {
      {"profile", "status", "done", "JCT mean", "JCT p95", "makespan", "slowdown", "gpu alloc",
       "gpu eff", "cpu eff", "Jain", "preempt", "scale"}};
  std::vector<std::vector<std::string>> queue_rows_ = {
      {"profile", "queue", "done", "JCT mean", "JCT p95", "queueing", "borrowed GPU-h",
       "lent GPU-h", "lost GPU-h", "FTF mean", "FTF max", "preempted", "caused"}};
  report::QueuesTable queues_;
  std::string csv_;
  std::string json_;
  report::JsonWriter w_;
};

}  // namespace

CLI::App* AddCompareCommand(CLI::App& app, CompareArgs* args) {
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Run one workload under several profiles and print their headline numbers side by "
      "side (mean / p95 JCT, makespan, GPU and CPU utilisation, fairness, preemptions); "
      "each profile's files go to OUT/<profile>/, the table to OUT/compare.csv. Jobs left "
      "stuck are a result here, not an error: the exit code is 0 unless the input is bad");
  compare
      ->add_option("--cluster,-c", args->run.cluster,
                   "Cluster YAML (nodes and their resources), or tiresias:FILE")
      ->required();
  AddJobSourceOptions(compare, &args->run.jobs);
  AddListOption(compare, "--profiles,-p", &args->profiles,
                "Profiles to compare, comma-separated built-in names or YAML files, e.g. "
                "k8s-default,gang-binpack,kod2; NAME:PATH=VALUE[:PATH=VALUE] is a variant of "
                "NAME with its own overrides (see --set), e.g. kod2,kod2:order.args.kappa=2")
      ->required();
  AddSetOption(compare, &args->run.overrides);
  compare->footer(
      "Examples:\n"
      "  dlsched compare -c examples/cluster-3node.yaml -w examples/workload-kod2-seed.yaml \\\n"
      "                  -p k8s-default,gang-binpack,kod2\n"
      "  dlsched compare -c C -w W -p kod2,kod2:order.args.kappa=2,kod2:order.args.kappa=8\n\n"
      "The status column says whether every job finished; JCT, makespan and slowdown "
      "(JCT / ideal) count a job that did not finish at the run's end and read >= then.");
  AddThreadsOption(compare, &args->threads,
                   "Profiles run at once (default 0: one per core); the results do not depend "
                   "on it");
  AddQuietOption(compare, &args->quiet);
  AddWindowOption(compare, &args->run.window, std::string(kRunWindowHelp) + " and compare.json");
  AddAloneOption(compare, &args->run.alone);
  AddReportOption(compare, &args->run.report, &args->run.page);
  compare
      ->add_option("--out,-o", args->out,
                   "Output directory, written as one unit and replaced as a whole (new, empty "
                   "or an earlier result directory of dlsched); a profile name given twice gets "
                   "<name>-2/")
      ->capture_default_str();
  return compare;
}

int Compare(const CompareArgs& args, const std::vector<std::string>& command) {
  const RunArgs& a = args.run;
  const StopSignals signals;
  // Everything is loaded and checked before the first run: bad input fails
  // at once, not after minutes of simulation.
  auto window = ParseWindow(a.window);
  if (!window) return BadInput(window.error());
  auto inputs = LoadInputs(a);
  if (!inputs) return LoadFailed(inputs.error());
  auto loaded = LoadProfiles(args.profiles, a.overrides);
  if (!loaded) return BadInput(loaded.error());
  const std::vector<std::string>& dirs = loaded->dirs;
  if (auto st = CheckBaseline(a.page.baseline, dirs); !st) return BadInput(st.error());
  if (auto st = CheckOut(args.out); !st) return BadInput(st.error());
  auto provenance = RunProvenance(command, a.cluster, a.jobs, a.window);
  if (!provenance) return BadInput(provenance.error());
  if (auto st = AddProfiles(*provenance, *loaded); !st) return BadInput(st.error());

  CompareTables tables(*window);
  auto out = report::OutputDir::Open(args.out);
  if (!out) return RunFailed(out.error());
  std::vector<RunRequest> runs;
  for (const auto& engine : loaded->engines) {
    RunRequest& r = runs.emplace_back();
    r.cluster = &inputs->cluster;
    r.workload = &inputs->workload;
    r.engine = engine.get();
    r.options.alone = a.alone;
  }
  bool interrupted = false;
  auto results = RunAll(runs, Batch(args.threads, args.quiet), &interrupted);
  for (size_t i = 0; i < runs.size(); ++i) {
    auto& result = results[i];
    if (!result) return BadInput(result.error());
    const metrics::RunSummary summary = metrics::Summarize(result->run, *window);
    if (auto st = report::AddRunFiles(*out, dirs[i] + "/", summary, result->run); !st) {
      return RunFailed(st.error());
    }
    tables.Add(dirs[i], summary);
  }
  const std::string json = tables.Json(*provenance);
  if (!args.quiet) tables.Print();
  if (auto st = out->Add("compare.csv", tables.Csv()); !st) return RunFailed(st.error());
  if (auto st = out->Add("compare.json", json); !st) return RunFailed(st.error());
  if (!tables.QueuesCsv().empty()) {
    if (auto st = out->Add("queues.csv", tables.QueuesCsv()); !st) return RunFailed(st.error());
  }
  if (auto st = out->Commit(); !st) return RunFailed(st.error());
  const std::string shown = core::EscapeText(args.out, kMaxMessageBytes);
  const std::string queues =
      tables.QueuesCsv().empty() ? "" : fmt::format("{}/queues.csv (per queue), ", shown);
  std::printf("results: %s/compare.csv, %s%s/compare.json and %s/<profile>/\n", shown.c_str(),
              queues.c_str(), shown.c_str(), shown.c_str());
  if (!a.report.empty()) {
    if (auto st = WriteReport({&args.out, 1}, a.report, a.page); !st) return RunFailed(st.error());
  }
  if (interrupted) {
    PrintError("interrupted: the results are partial (summary.json says \"partial\": true)");
    return kInterrupted;
  }
  return kOk;
}

}  // namespace dlsched::cli
