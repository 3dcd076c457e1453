#include "dlsched/cli/models_command.h"

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/sim/model_zoo.h"

namespace dlsched::cli {

CLI::App* AddModelsCommand(CLI::App& app) {
  return app.add_subcommand("models", "List the model zoo (throughput profiles)");
}

int Models() {
  for (const auto& m : sim::Models()) {
    std::string rates;
    for (const auto& [n, r] : m.profile->steps_per_s) rates += fmt::format(" {}:{:g}", n, r);
    std::printf("%-16s locality %.2f  steps/s by workers:%s\n", std::string(m.name).c_str(),
                m.profile->locality_sensitivity, rates.c_str());
  }
  return kOk;
}

}  // namespace dlsched::cli
