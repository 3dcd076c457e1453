#include "dlsched/cli/options.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "dlsched/cli/runs.h"

namespace dlsched::cli {

CLI::Option* AddQuietOption(CLI::App* cmd, bool* quiet) {
  return cmd->add_flag("--quiet,-q", *quiet,
                       "Print no tables and no progress line (shown on stderr when it is a "
                       "terminal): only where the results went, and errors");
}

CLI::Validator FiniteIn(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double v = 0;
        std::string_view s = text;
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) ||
            v < min || v > max) {
          return fmt::format("expected a number from {:g} to {:g}, got '{}'", min, max, text);
        }
        return {};
      },
      fmt::format("NUMBER in [{:g}, {:g}]", min, max));
}

CLI::Option* AddThreadsOption(CLI::App* cmd, int* threads, const std::string& help) {
  return cmd->add_option("--threads,-j", *threads, help)
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxThreads));
}

}  // namespace dlsched::cli
