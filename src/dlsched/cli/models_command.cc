#include "dlsched/cli/models_command.h"

#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/sim/model_zoo.h"

namespace dlsched::cli {

CLI::App* AddModelsCommand(CLI::App& app) {
  return app.add_subcommand(
      "models",
      "List the model zoo: each model's steps/s by worker count (the rate of a cluster without "
      "GPU types) and, indented below it, on each GPU type (a node's nvidia.com/gpu.product)");
}

namespace {

std::string Rates(const std::map<int, double>& table) {
  std::string rates;
  for (const auto& [n, r] : table) rates += fmt::format(" {}:{:g}", n, r);
  return rates;
}

}  // namespace

int Models() {
  for (const auto& m : sim::Models()) {
    std::printf("%-16s locality %.2f  steps/s by workers:%s\n", std::string(m.name).c_str(),
                m.profile->locality_sensitivity, Rates(m.profile->steps_per_s).c_str());
    for (const auto& [type, table] : m.profile->GpuTypes()) {
      std::printf("  on %-27s steps/s by workers:%s\n", type.c_str(), Rates(table).c_str());
    }
  }
  return kOk;
}

}  // namespace dlsched::cli
