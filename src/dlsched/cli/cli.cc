// The `dlsched` command line: the commands registered, the one given parsed
// and run. Each command is a file of its own: <command>_command.cc holds
// its flags and what it runs (operator and snapshot run in dlsched-k8s:
// <command>_run.cc); what several share is in options.h (flags), inputs.h
// (loading the inputs), provenance.h, runs.h (running simulations),
// tables.h (compare's and sweep's tables) and errors.h (exit codes).
#include "dlsched/cli/cli.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "dlsched/cli/compare_command.h"
#include "dlsched/cli/convert_command.h"
#include "dlsched/cli/errors.h"
#include "dlsched/cli/explain_command.h"
#include "dlsched/cli/generate_command.h"
#include "dlsched/cli/models_command.h"
#include "dlsched/cli/operator_command.h"
#include "dlsched/cli/profiles_command.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/cli/report_command.h"
#include "dlsched/cli/rerun_command.h"
#include "dlsched/cli/sharing_command.h"
#include "dlsched/cli/simulate_command.h"
#include "dlsched/cli/size_command.h"
#include "dlsched/cli/snapshot_command.h"
#include "dlsched/cli/sweep_command.h"
#include "dlsched/cli/validate_command.h"
#include "dlsched/core/text.h"

namespace dlsched::cli {
namespace {

constexpr char kAbout[] =
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
    "(Ctrl-C: simulate, compare and sweep write what they computed, marked partial).";

// CLI11 answers an unknown command with "A subcommand is required": whether
// argv[1] is a word that names no command (then it has said so).
bool RefuseUnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc <= 1 || argv[1][0] == '-') return false;
  std::vector<std::string> known;
  for (const CLI::App* sub : app.get_subcommands({})) known.push_back(sub->get_name());
  if (std::find(known.begin(), known.end(), argv[1]) != known.end()) return false;
  const std::vector<std::string_view> names(known.begin(), known.end());
  PrintError(fmt::format("'{}' is not a dlsched command (commands: {}; see 'dlsched --help'){}",
                         argv[1], fmt::join(known, ", "), core::DidYouMean(argv[1], names)));
  return true;
}

// Parses the command line; the exit code when that is all there is to do
// (--help, --version, a command line CLI11 refuses: one line naming the
// subcommand and where its help is).
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string sub;
    for (const CLI::App* s : app.get_subcommands()) sub = s->get_name() + " ";
    std::string what = e.what();
    if (!sub.empty()) what = sub.substr(0, sub.size() - 1) + ": " + what;
    PrintError(fmt::format("{} (see 'dlsched {}--help')", what, sub));
    return kBadInput;
  }
  return std::nullopt;
}

int Run(int argc, char** argv);

// `dlsched ARGS...` run in this process (rerun's recorded command).
int RunWords(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"dlsched"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& w : words) cargv.push_back(w.data());
  cargv.push_back(nullptr);
  return Run(static_cast<int>(words.size()), cargv.data());
}

int Run(int argc, char** argv) {
  CLI::App app{kAbout, "dlsched"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("dlsched {}", DLSCHED_VERSION),
                       "Print the version and exit");
  // In the order --help lists them.
  SimulateArgs simulate_args;
  CLI::App* simulate = AddSimulateCommand(app, &simulate_args);
  ValidateArgs validate_args;
  CLI::App* validate = AddValidateCommand(app, &validate_args);
  ExplainArgs explain_args;
  CLI::App* explain = AddExplainCommand(app, &explain_args);
  CompareArgs compare_args;
  CLI::App* compare = AddCompareCommand(app, &compare_args);
  SweepArgs sweep_args;
  CLI::App* sweep = AddSweepCommand(app, &sweep_args);
  ProfilesArgs profiles_args;
  CLI::App* profiles = AddProfilesCommand(app, &profiles_args);
  CLI::App* models = AddModelsCommand(app);
  GenerateArgs generate_args;
  CLI::App* generate = AddGenerateCommand(app, &generate_args);
  ConvertArgs convert_args;
  CLI::App* convert = AddConvertCommand(app, &convert_args);
  SizeArgs size_args;
  CLI::App* size = AddSizeCommand(app, &size_args);
  OperatorArgs operator_args;
  CLI::App* operate = AddOperatorCommand(app, &operator_args);
  SnapshotArgs snapshot_args;
  CLI::App* snapshot = AddSnapshotCommand(app, &snapshot_args);
  ReportArgs report_args;
  CLI::App* report = AddReportCommand(app, &report_args);
  RerunArgs rerun_args;
  CLI::App* rerun = AddRerunCommand(app, &rerun_args);
  SharingArgs sharing_args;
  CLI::App* sharing = AddSharingCommand(app, &sharing_args);

  if (RefuseUnknownCommand(app, argc, argv) || RefuseSimulateJobs(argc, argv)) return kBadInput;
  if (const std::optional<int> code = Parse(app, argc, argv)) return *code;
  // The command line as provenance records it (report/provenance.h).
  const std::vector<std::string> command =
      RecordedCommand(std::vector<std::string>(argv + 1, argv + argc));
  if (simulate->parsed()) return Simulate(simulate_args, command);
  if (validate->parsed()) return Validate(validate_args);
  if (explain->parsed()) return Explain(explain_args);
  if (compare->parsed()) return Compare(compare_args, command);
  if (sweep->parsed()) return Sweep(*sweep, sweep_args, command);
  if (profiles->parsed()) return Profiles(profiles_args);
  if (models->parsed()) return Models();
  if (generate->parsed()) return Generate(generate_args);
  if (convert->parsed()) return Convert(convert_args);
  if (size->parsed()) return Size(size_args);
  if (operate->parsed()) return Operate(operator_args, argc, argv);
  if (snapshot->parsed()) return TakeSnapshot(snapshot_args, argc, argv);
  if (report->parsed()) return RunReport(report_args);
  if (rerun->parsed()) return Rerun(rerun_args, RunWords);
  if (sharing->parsed()) return Sharing(sharing_args);
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
