#include "dlsched/cli/validate_command.h"

#include <cstdio>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/config/specs.h"
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

}  // namespace

CLI::App* AddValidateCommand(CLI::App& app, ValidateArgs* args) {
  CLI::App* validate = app.add_subcommand(
      "validate", "Check cluster, workload and profile files; print one error line per bad file");
  validate->add_option("files", args->files, "Files to check (the kind is detected)")->required();
  return validate;
}

int Validate(const ValidateArgs& args) {
  int status = kOk;
  for (const auto& f : args.files) {
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
