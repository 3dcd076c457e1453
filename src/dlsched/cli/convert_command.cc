#include "dlsched/cli/convert_command.h"

#include <cstdio>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/config/trace.h"
#include "dlsched/core/text.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/model_zoo.h"

namespace dlsched::cli {

CLI::App* AddConvertCommand(CLI::App& app, ConvertArgs* args) {
  CLI::App* convert = app.add_subcommand(
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
  AddJobSourceOptions(convert, &args->source);
  convert->add_option("--out,-o", args->out,
                      "File to write (default: stdout); replaced only once completely written");
  convert
      ->add_option("--to", args->to, "native or yaml (default: yaml for .yaml/.yml, else native)")
      ->check(CLI::IsMember({"native", "yaml"}));
  return convert;
}

int Convert(const ConvertArgs& args) {
  const std::string& out = args.out;
  if (auto st = CheckOutFile("--out", out); !st) return BadInput(st.error());
  std::string to = args.to;
  if (to.empty()) to = out.ends_with(".yaml") || out.ends_with(".yml") ? "yaml" : "native";
  auto workload = LoadJobs(args.source);
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

}  // namespace dlsched::cli
