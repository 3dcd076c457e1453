#include "dlsched/cli/size_command.h"

#include <cstdio>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/report/output_dir.h"

namespace dlsched::cli {

CLI::App* AddSizeCommand(CLI::App& app, SizeArgs* args) {
  CLI::App* size = app.add_subcommand(
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
  AddJobSourceOptions(size, &args->source);
  size->add_option("--load,-l", args->load,
                   "The offered load's range LO:HI, 0 < LO <= HI: the fewest nodes loaded to at "
                   "most HI, refused when that is below LO")
      ->capture_default_str();
  size->add_option("--gpus-per-node", args->shape.gpus,
                   "GPUs per node (default: 4 for tiresias: and pollux: traces, as their "
                   "papers' clusters; else 8)")
      ->check(IntegerIn(1, core::kMaxGpusPerNode));
  size->add_option("--cpus-per-node", args->shape.cpus, "cpus per node (default: 8 per GPU)")
      ->check(IntegerIn(1, 1'000'000));
  size->add_option("--memory-gi-per-node", args->shape.memory_gi,
                   "Memory per node in GiB (default: 64 per GPU)")
      ->check(IntegerIn(1, 1'000'000));
  size->add_option("--out,-o", args->out,
                   "File to write (default: stdout); a .csv is a Tiresias cluster CSV, anything "
                   "else cluster YAML; replaced only once completely written");
  size->add_option("--to", args->to, "yaml or tiresias (default: tiresias for .csv, else yaml)")
      ->check(CLI::IsMember({"yaml", "tiresias"}));
  return size;
}

int Size(const SizeArgs& args) {
  const std::string& out = args.out;
  auto range = ParseLoadRange(args.load);
  if (!range) return BadInput(range.error());
  if (auto st = CheckOutFile("--out", out); !st) return BadInput(st.error());
  std::string to = args.to;
  if (to.empty()) to = IsCsvName(out) ? "tiresias" : "yaml";
  auto workload = LoadJobs(args.source);
  if (!workload) return BadInput(workload.error());
  auto c = SizeCluster(*workload, DefaultShape(args.source.trace, args.shape), *range);
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

}  // namespace dlsched::cli
