#include "dlsched/cli/sharing_command.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/cli/options.h"
#include "dlsched/config/openb.h"
#include "dlsched/core/text.h"
#include "dlsched/report/html.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/sim/sharing.h"

namespace dlsched::cli {

namespace sh = policy::sharing;

CLI::App* AddSharingCommand(CLI::App& app, SharingArgs* args) {
  CLI::App* cmd = app.add_subcommand(
      "sharing",
      "Shared GPUs: replay a pod list of Alibaba's cluster-trace-gpu-v2023 (openb) onto its "
      "nodes, pods arriving one at a time until --tune x the GPU capacity has arrived, none "
      "leaving; each pod placed at once by the policy (its node and GPU) or dropped. Prints "
      "the GPU capacity left unallocated and fragmented when --at % has arrived (mean and "
      "sample sd over the seeds), the FGD paper's measure (docs/sharing.md)");
  cmd->footer(
      "Example:\n"
      "  dlsched sharing --nodes data/openb/openb_node_list_gpu_node.csv \\\n"
      "      --pods data/openb/openb_pod_list_default.csv --policies bestfit,fgd --seeds 42-44");
  cmd->add_option("--nodes", args->nodes, "The node list (openb_node_list_*.csv)")->required();
  cmd->add_option("--pods", args->pods, "Pod lists (openb_pod_list_*.csv), each a run of its own")
      ->required();
  cmd->add_option("--policies", args->policies,
                  "Comma-separated: random, dotprod, clustering, packing, bestfit, fgd "
                  "(default: all six)")
      ->delimiter(',');
  cmd->add_option("--seeds", args->seeds,
                  "Seeds of the shuffles, additions and ties: N, A-B or a comma-separated list")
      ->capture_default_str();
  cmd->add_option("--tune", args->tune,
                  "Pods arrive until their GPU request is this multiple of the GPU capacity")
      ->capture_default_str()
      ->check(NumberIn(0.01, 10));
  cmd->add_option("--at", args->at, "The arrived workload (% of the GPU capacity) to report at")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("--exact", args->exact,
                "FGD by the exact fragmentation increase (the simulator rounds it to an integer "
                "score)");
  cmd->add_option("--csv", args->csv,
                  "Also write every run's curve: trace,policy,seed,arrived,allocated,fragmented "
                  "(% of the GPU capacity, per integer % arrived)");
  cmd->add_option("--html", args->html,
                  "Also write a page charting, per pod list, the GPUs unallocated and "
                  "fragmented as the workload arrives, a line per policy (means over the seeds; "
                  "open it in a browser)");
  return cmd;
}

namespace {

core::Result<std::vector<uint64_t>> ParseSeeds(std::string_view text) {
  std::vector<uint64_t> seeds;
  const auto bad = [&] {
    return core::Errorf("--seeds: expected N, A-B or a comma-separated list of seeds, got '{}'",
                        text);
  };
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t dash = part.find('-');
    uint64_t a = 0;
    uint64_t b = 0;
    const auto num = [](std::string_view s, uint64_t* v) {
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
      return !s.empty() && ec == std::errc() && end == s.data() + s.size();
    };
    if (dash == std::string_view::npos) {
      if (!num(part, &a)) return bad();
      b = a;
    } else if (!num(part.substr(0, dash), &a) || !num(part.substr(dash + 1), &b) || b < a ||
               b - a > 10000) {
      return bad();
    }
    for (uint64_t s = a; s <= b; ++s) seeds.push_back(s);
  }
  if (seeds.empty()) return bad();
  return seeds;
}

}  // namespace

int Sharing(const SharingArgs& args) {
  std::vector<sh::Policy> policies;
  for (const std::string& name : args.policies) {
    sh::Policy p;
    if (!sh::ParsePolicy(name, &p)) {
      return BadInput(core::Error{fmt::format(
          "--policies: expected random, dotprod, clustering, packing, bestfit or fgd, got '{}'",
          core::EscapeText(name, kMaxMessageBytes))});
    }
    policies.push_back(p);
  }
  if (policies.empty()) policies.assign(sh::AllPolicies().begin(), sh::AllPolicies().end());
  auto seeds = ParseSeeds(args.seeds);
  if (!seeds) return BadInput(seeds.error());
  if (auto st = CheckOutFile("--csv", args.csv); !st) return BadInput(st.error());
  if (auto st = CheckOutFile("--html", args.html); !st) return BadInput(st.error());
  auto nodes = config::LoadOpenbNodes(args.nodes);
  if (!nodes) return BadInput(nodes.error());
  std::vector<std::pair<std::string, std::vector<config::OpenbPod>>> traces;
  for (const std::string& path : args.pods) {
    auto pods = config::LoadOpenbPods(path);
    if (!pods) return BadInput(pods.error());
    traces.emplace_back(std::filesystem::path(path).stem().string(), std::move(*pods));
  }
  std::string csv = "trace,policy,seed,arrived,allocated,fragmented\n";
  std::vector<report::SharingCurve> curves;  // --html: each policy's mean curve
  std::printf("%-32s %-10s %7s %16s %16s %8s\n", "trace", "policy", "seeds",
              fmt::format("unalloc@{}%", args.at).c_str(), fmt::format("frag@{}%", args.at).c_str(),
              "failed");
  for (const auto& [trace, pods] : traces) {
    const sim::SharingCluster cluster = sim::FromOpenb(*nodes, pods);
    for (sh::Policy policy : policies) {
      std::vector<double> unalloc;
      std::vector<double> frag;
      double failed = 0;
      report::SharingCurve mean{.trace = trace, .policy = std::string(sh::PolicyName(policy))};
      for (uint64_t seed : *seeds) {
        sim::SharingOptions o;
        o.policy = policy;
        o.seed = seed;
        o.tune = args.tune;
        o.exact = args.exact;
        const sim::SharingCurve c = sim::RunSharing(cluster, o);
        const size_t at = static_cast<size_t>(args.at);
        if (at < c.allocated.size()) {
          unalloc.push_back(100 - c.allocated[at]);
          frag.push_back(c.fragmented[at]);
        }
        failed += static_cast<double>(c.failed);
        // Each seed's share of the mean, per integer % arrived.
        const double w = 1.0 / static_cast<double>(seeds->size());
        mean.arrived.resize(std::max(mean.arrived.size(), c.allocated.size()));
        mean.allocated.resize(mean.arrived.size());
        mean.fragmented.resize(mean.arrived.size());
        for (size_t x = 0; x < c.allocated.size(); ++x) {
          mean.arrived[x] = static_cast<double>(x);
          mean.allocated[x] += w * c.allocated[x];
          mean.fragmented[x] += w * c.fragmented[x];
        }
        if (args.csv.empty()) continue;
        for (size_t x = 0; x < c.allocated.size(); ++x) {
          csv += fmt::format("{},{},{},{},{:.4f},{:.4f}\n", trace, sh::PolicyName(policy), seed, x,
                             c.allocated[x], c.fragmented[x]);
        }
      }
      const auto stat = [](const std::vector<double>& v) -> std::string {
        if (v.empty()) return "-";
        double mean = 0;
        for (double x : v) mean += x;
        mean /= static_cast<double>(v.size());
        double var = 0;
        for (double x : v) var += (x - mean) * (x - mean);
        const double sd = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0;
        return fmt::format("{:.2f} ± {:.2f}", mean, sd);
      };
      std::printf("%-32s %-10s %7zu %16s %16s %8.0f\n", trace.c_str(),
                  std::string(sh::PolicyName(policy)).c_str(), seeds->size(), stat(unalloc).c_str(),
                  stat(frag).c_str(), failed / static_cast<double>(seeds->size()));
      std::fflush(stdout);
      curves.push_back(std::move(mean));
    }
  }
  // FileContent views the text: the page lives here until it is written.
  const std::string page =
      args.html.empty()
          ? std::string()
          : report::RenderSharingHtml(
                fmt::format("{} policies, seeds {}", policies.size(), args.seeds), curves);
  std::vector<report::FileContent> files;
  if (!args.csv.empty()) files.push_back({args.csv, csv});
  if (!args.html.empty()) files.push_back({args.html, page});
  if (!files.empty()) {
    if (auto st = report::ReplaceFiles(files); !st) return RunFailed(st.error());
  }
  return kOk;
}

}  // namespace dlsched::cli
