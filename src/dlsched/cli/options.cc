#include "dlsched/cli/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "dlsched/cli/runs.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/quantity.h"

namespace dlsched::cli {
namespace {

using core::internal::QuoteInput;

// The bounds of a range as people write them: 0.1, 3600, 1e+06.
std::string Bound(double v) { return fmt::format("{:.6g}", v); }

std::string RangeText(std::string_view what, const std::string& min, const std::string& max,
                      bool max_is_infinite) {
  if (max_is_infinite) return fmt::format("{} >= {}", what, min);
  return fmt::format("{} from {} to {}", what, min, max);
}

}  // namespace

CLI::Option* AddQuietOption(CLI::App* cmd, bool* quiet) {
  return cmd->add_flag("--quiet,-q", *quiet,
                       "Print no tables and no progress line (shown on stderr when it is a "
                       "terminal): only where the results went, and errors");
}

CLI::Validator NumberIn(double min, double max) {
  const std::string expected =
      RangeText("a number", Bound(min), Bound(max), std::isinf(max) && max > 0);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string_view s = text;
        if (s.starts_with('+')) s.remove_prefix(1);
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) ||
            v < min || v > max) {
          return fmt::format("expected {}, got {}", expected, QuoteInput(text));
        }
        return "";
      },
      expected);
}

CLI::Validator IntegerIn(int64_t min, int64_t max) {
  const std::string expected = RangeText("an integer", std::to_string(min), std::to_string(max),
                                         max == std::numeric_limits<int64_t>::max());
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min ||
            v > max) {
          return fmt::format("expected {}, got {}", expected, QuoteInput(text));
        }
        return "";
      },
      expected);
}

CLI::Option* AddThreadsOption(CLI::App* cmd, int* threads, const std::string& help) {
  return cmd->add_option("--threads,-j", *threads, help)
      ->capture_default_str()
      ->check(IntegerIn(0, kMaxThreads));
}

core::Result<std::vector<std::string>> SplitList(std::string_view flag, std::string_view text) {
  std::vector<std::string> out;
  // (std::views::split makes no item of an empty text: "" is one empty item.)
  for (size_t start = 0;;) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma == start) {
      return core::Errorf("{}: expected a comma-separated list without empty items, got {}", flag,
                          QuoteInput(text));
    }
    out.emplace_back(text.substr(start, comma - start));
    if (comma == text.size()) return out;
    start = comma + 1;
  }
}

template <typename T>
CLI::Option* AddListOption(CLI::App* cmd, const std::string& names, std::vector<T>* items,
                           const std::string& description) {
  // The flag's long name for errors, as CLI11 names it.
  auto flag = std::make_shared<std::string>();
  // Called once, after parsing, with every value given (each may hold
  // several items), in order.
  CLI::Option* option = cmd->add_option_function<std::vector<std::string>>(
      names,
      [items, flag](const std::vector<std::string>& values) {
        items->clear();
        for (const std::string& value : values) {
          auto parts = SplitList(*flag, value);
          if (!parts) throw CLI::ValidationError(parts.error().message);
          for (const std::string& part : *parts) {
            if constexpr (std::is_same_v<T, std::string>) {
              items->push_back(part);
            } else {
              T v{};
              const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
              if (ec != std::errc() || end != part.data() + part.size()) {
                throw CLI::ValidationError(fmt::format(
                    "{}: expected {}, got {}", *flag,
                    std::is_floating_point_v<T> ? "numbers" : "whole numbers", QuoteInput(part)));
              }
              items->push_back(v);
            }
          }
        }
      },
      description);
  *flag = option->get_name();
  return option;
}

template CLI::Option* AddListOption(CLI::App*, const std::string&, std::vector<std::string>*,
                                    const std::string&);
template CLI::Option* AddListOption(CLI::App*, const std::string&, std::vector<double>*,
                                    const std::string&);
template CLI::Option* AddListOption(CLI::App*, const std::string&, std::vector<uint64_t>*,
                                    const std::string&);

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
  cmd->add_option("--launch-delay", s->launch_delay,
                  "Give every job this launchDelay, seconds, in place of its own (a trace states "
                  "none; pollux jobs take Pollux's 30 s): each relaunch after a stop or a "
                  "restarting resize costs it")
      ->check(NumberIn(0, core::kMaxTime));
  cmd->add_option("--checkpoint-delay", s->checkpoint_delay,
                  "Give every job this checkpointDelay, seconds, in place of its own (a trace "
                  "states none): what each stop or restarting resize costs it")
      ->check(NumberIn(0, core::kMaxTime));
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

void AddAloneOption(CLI::App* cmd, bool* alone) {
  cmd->add_flag("--alone", *alone,
                "Also run each declared queue's jobs alone on the queue's nominal quota (same "
                "nodes and profile, no cohort) and report each job's finish-time fairness, JCT / "
                "JCT alone (jobs.csv alone_jct and ftf; queues.csv, summary.json and compare.csv "
                "ftf_mean and ftf_max): one more simulation per queue");
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
      cmd->add_option("--shape", gen->shape,
                      "default, or gavel: the jobs of Gavel's continuous traces (OSDI'20): no PS, "
                      "1/2/4/8 one-GPU workers (70/10/15/5 %, at most --max-workers), its job "
                      "types, 10^x minutes on v100s (x in [1.5, 3] or, one in five, [3, 4]); "
                      "--elastic-fraction and --min/--max-steps do not apply (default: default)")
          ->transform(CLI::CheckedTransformer(
              std::map<std::string, sim::GenerateOptions::Shape>{
                  {"default", sim::GenerateOptions::Shape::kDefault},
                  {"gavel", sim::GenerateOptions::Shape::kGavel}},
              CLI::ignore_case)),
  };
}

}  // namespace dlsched::cli
