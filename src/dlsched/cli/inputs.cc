#include "dlsched/cli/inputs.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <ranges>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/runs.h"
#include "dlsched/config/trace.h"
#include "dlsched/core/text.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

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

// The trace's options applied to what --trace gave: each checked against
// the trace's format.
core::Status ApplyTraceOptions(const JobSource& s, config::TraceOptions& o) {
  if (!s.vcs.empty()) {
    if (o.format != config::TraceFormat::kPhilly) {
      return core::MakeError("--vc: applies to philly traces only");
    }
    DLSCHED_TRY_LET(vcs, SplitList("--vc", s.vcs));
    o.virtual_clusters = std::move(*vcs);
  }
  for (auto [flag, text, out] :
       {std::tuple{"--from", &s.from, &o.from}, std::tuple{"--until", &s.until, &o.until}}) {
    if (text->empty()) continue;
    if (o.format != config::TraceFormat::kPhilly) {
      return core::Errorf("{}: applies to philly traces only", flag);
    }
    auto t = config::ParseTimestamp(*text);
    if (!t) return core::Errorf("{}: {}", flag, t.error().message);
    *out = *t;
  }
  if (!s.elastic.empty()) {
    if (o.format == config::TraceFormat::kNative) {
      return core::MakeError(
          "--elastic: does not apply to native traces (each row states its min_workers and "
          "max_workers)");
    }
    DLSCHED_TRY(config::ParseElastic(s.elastic, o));
  }
  if (!s.scaling.empty()) {
    if (o.format == config::TraceFormat::kPollux || o.format == config::TraceFormat::kNative) {
      return core::Errorf(
          "--scaling: does not apply to {} traces ({})", config::TraceFormatName(o.format),
          o.format == config::TraceFormat::kPollux ? "their speed at each size is Pollux's model"
                                                   : "each row states its own scaling");
    }
    auto curve = core::ScalingCurve::Parse(s.scaling);
    if (!curve) return core::Errorf("--scaling: {}", curve.error().message);
    o.scaling = *curve;
  }
  if (!s.pollux_traces.empty()) {
    if (o.format != config::TraceFormat::kPollux) {
      return core::MakeError("--pollux-traces: applies to pollux traces only");
    }
    o.pollux_traces = s.pollux_traces;
  }
  return {};
}

// The jobs of --workload FILE.
core::Result<config::WorkloadSpec> LoadWorkloadFile(const std::string& workload) {
  if (workload.empty()) {
    return core::MakeError("give the jobs with --workload FILE or --trace FORMAT:FILE");
  }
  if (IsCsvName(workload)) {
    return core::Errorf(
        "--workload: {} is a CSV file; --workload reads workload YAML. Give a trace as "
        "--trace FORMAT:FILE (-t), FORMAT one of tiresias, philly, pollux, native "
        "(docs/traces.md), e.g. -t native:{}",
        workload, workload);
  }
  return sim::LoadWorkload(workload);
}

}  // namespace

// Here, not with the commands, so that what needs an engine (cli::DecodeSnapshot,
// and the fuzz targets through it) links without them.
core::Result<std::unique_ptr<engine::Engine>> LoadEngine(const std::string& profile_arg,
                                                         std::span<const std::string> overrides) {
  DLSCHED_TRY_LET(spec, policy::ResolveProfile(profile_arg, overrides));
  DLSCHED_TRY_LET(profile, policy::BuildProfile(*spec));
  return std::make_unique<engine::Engine>(std::move(*profile));
}

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

bool IsCsvName(std::string_view path) {
  if (path.size() < 4) return false;
  std::string ext(path.substr(path.size() - 4));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".csv";
}

// --launch-delay and --checkpoint-delay: every job's, whatever it said.
void ApplyDelays(const JobSource& s, config::WorkloadSpec& workload) {
  for (core::JobSpec& job : workload.jobs) {
    if (s.launch_delay) job.launch_delay = *s.launch_delay;
    if (s.checkpoint_delay) job.checkpoint_delay = *s.checkpoint_delay;
  }
}

core::Result<config::WorkloadSpec> LoadJobs(const JobSource& s) {
  if (s.trace.empty()) {
    DLSCHED_TRY_LET(workload, LoadWorkloadFile(s.workload));
    ApplyDelays(s, *workload);
    return workload;
  }
  DLSCHED_TRY_LET(o, config::ParseTraceArg(s.trace));
  o->stop = StopSignals::Flag();
  o->skip_bad_rows = s.skip_bad_rows;
  o->limit = s.limit;
  DLSCHED_TRY(ApplyTraceOptions(s, *o));
  DLSCHED_TRY_LET(load, config::LoadTrace(*o));
  if (load->skipped > 0) {
    std::fprintf(stderr, "dlsched: %s: skipped %lld bad rows of %lld (the first: %s)\n",
                 core::EscapeText(o->path, kMaxMessageBytes).c_str(),
                 static_cast<long long>(load->skipped), static_cast<long long>(load->rows),
                 core::EscapeText(load->first_skipped, kMaxMessageBytes).c_str());
  }
  ApplyDelays(s, load->workload);
  DLSCHED_TRY(sim::ResolveWorkload(load->workload));
  return std::move(load->workload);
}

core::Result<Inputs> LoadInputs(const RunArgs& a) {
  Inputs out;
  DLSCHED_TRY_LET(cluster, LoadClusterArg(a.cluster));
  out.cluster = std::move(*cluster);
  DLSCHED_TRY_LET(workload, LoadJobs(a.jobs));
  out.workload = std::move(*workload);
  return out;
}

core::Result<Loaded> Load(const RunArgs& a) {
  DLSCHED_TRY_LET(inputs, LoadInputs(a));
  DLSCHED_TRY_LET(engine, LoadEngine(a.profile, a.overrides));
  return Loaded{std::move(*inputs), std::move(*engine)};
}

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
    DLSCHED_TRY_LET(engine, LoadEngine(name, overrides));
    names.push_back((*engine)->profile().name);
    out.engines.push_back(std::move(*engine));
    out.bases.push_back(std::move(name));
    out.overrides.push_back(std::move(overrides));
  }
  out.dirs = UniqueNames(names);
  return out;
}

core::Status CheckOut(const std::string& dir) {
  if (auto st = report::CheckOutputDir(dir); !st) {
    return core::MakeError("--out: " + st.error().message);
  }
  return {};
}

core::Status CheckOutFile(std::string_view flag, const std::string& path) {
  if (path.empty() || path == "-") return {};
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    return core::Errorf("{}: {} exists and is not a regular file", flag, path);
  }
  return {};
}

}  // namespace dlsched::cli
