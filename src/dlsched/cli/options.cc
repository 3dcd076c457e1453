#include "dlsched/cli/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "dlsched/cli/runs.h"
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

}  // namespace dlsched::cli
