#include "dlsched/cli/validate_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ranges>
#include <set>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

// What a good file holds, in a few words ("cluster with 3 nodes").
core::Result<std::string> Check(const std::string& f, config::FileKind kind) {
  switch (kind) {
    case config::FileKind::kCluster: {
      DLSCHED_TRY_LET(c, config::LoadCluster(f));
      return fmt::format("cluster with {} nodes", c->nodes.size());
    }
    case config::FileKind::kWorkload: {
      DLSCHED_TRY_LET(w, sim::LoadWorkload(f));
      return fmt::format("workload with {} jobs", w->jobs.size());
    }
    case config::FileKind::kProfile: {
      DLSCHED_TRY_LET(p, config::LoadProfile(f));
      DLSCHED_TRY_LET(built, policy::BuildProfile(*p));
      return fmt::format("profile '{}'", p->name);
    }
  }
  return std::string();
}

// The format a CSV trace's first line names by its columns: "tiresias"
// (a job trace, or a cluster shape: `cluster` is set), "philly",
// "pollux", "native"; "" for none.
std::string_view FormatOfHeader(std::string_view line, bool* cluster) {
  if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // a UTF-8 BOM
  if (line.ends_with('\r')) line.remove_suffix(1);
  std::set<std::string_view> columns;
  for (auto part : std::views::split(line, ',')) columns.emplace(part.begin(), part.end());
  auto has = [&](std::initializer_list<std::string_view> names) {
    return std::ranges::all_of(names, [&](std::string_view c) { return columns.contains(c); });
  };
  *cluster = has({"num_switch", "num_node_p_switch", "num_gpu_p_node"});
  if (*cluster || has({"job_id", "num_gpu", "submit_time", "duration"})) return "tiresias";
  if (has({"timestamp", "duration", "num_gpus", "cluster"})) return "philly";
  if (has({"name", "time", "application", "num_replicas"})) return "pollux";
  if (has({"name", "submit", "workers", "gpus", "duration"})) return "native";
  return "";
}

// The first line of `path` (its first 64 KiB at most), or "" when it is
// not a regular file or cannot be read: a FIFO or a device is left to the
// file readers, which refuse it.
std::string FirstLine(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "";
  std::ifstream in(path, std::ios::binary);
  std::string head(64 * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.substr(0, head.find('\n'));
}

// A trace (FORMAT:FILE, or a CSV whose header names its format): a
// Tiresias cluster shape, or the jobs it loads as --trace does.
core::Result<std::string> CheckTrace(const std::string& path, std::string_view format,
                                     bool cluster) {
  if (cluster) {
    DLSCHED_TRY_LET(c, config::LoadTiresiasCluster(path));
    return fmt::format("Tiresias cluster shape with {} nodes", c->nodes.size());
  }
  JobSource source;
  source.trace = fmt::format("{}:{}", format, path);
  DLSCHED_TRY_LET(workload, LoadJobs(source));
  const size_t jobs = workload->jobs.size();
  return fmt::format("{} trace with {} job{}", format, jobs, jobs == 1 ? "" : "s");
}

// What `f` holds when it is a trace, or nullopt when it is not one.
std::optional<core::Result<std::string>> TraceArg(const std::string& f) {
  std::error_code ec;
  for (std::string_view format : {"tiresias", "philly", "pollux", "native"}) {
    const std::string prefix = fmt::format("{}:", format);
    if (!f.starts_with(prefix) || std::filesystem::exists(f, ec)) continue;
    const std::string path = f.substr(prefix.size());
    bool cluster = false;
    const bool shape = FormatOfHeader(FirstLine(path), &cluster) == "tiresias" && cluster;
    return CheckTrace(path, format, format == "tiresias" && shape);
  }
  bool cluster = false;
  const std::string_view format = FormatOfHeader(FirstLine(f), &cluster);
  if (format.empty()) return std::nullopt;
  return CheckTrace(f, format, cluster);
}

}  // namespace

CLI::App* AddValidateCommand(CLI::App& app, ValidateArgs* args) {
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Check cluster, workload and profile files and job traces; print one error line per bad "
      "file");
  validate
      ->add_option("files", args->files,
                   "Files to check (the kind is detected: a CSV trace by its header's columns), "
                   "or FORMAT:FILE for a trace as --trace takes it (tiresias:, philly:, pollux:, "
                   "native:; tiresias: a cluster shape too)")
      ->required();
  return validate;
}

int Validate(const ValidateArgs& args) {
  int status = kOk;
  for (const auto& f : args.files) {
    if (auto trace = TraceArg(f)) {
      if (!*trace) {
        status = BadInput(trace->error());
      } else {
        std::printf("%s: ok (%s)\n", f.c_str(), (*trace)->c_str());
      }
      continue;
    }
    auto kind = config::DetectKind(f);
    if (!kind) {
      status = BadInput(kind.error());
      continue;
    }
    auto what = Check(f, *kind);
    if (!what) {
      status = BadInput(what.error());
    } else {
      std::printf("%s: ok (%s)\n", f.c_str(), what->c_str());
    }
  }
  return status;
}

}  // namespace dlsched::cli
