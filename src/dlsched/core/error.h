#pragma once

#include <expected>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace dlsched::core {

// A user-facing error: one line that names the input, the field path and what
// was expected, e.g. "workload.yaml: jobs[3].worker.minReplicas: 4 is greater
// than maxReplicas 2". Exceptions are used only at process edges (cli/).
struct Error {
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

// Status of an operation that returns nothing on success.
using Status = Result<void>;

inline std::unexpected<Error> MakeError(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

template <typename... Args>
std::unexpected<Error> Errorf(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace dlsched::core

// Error propagation, for functions that return a Result or a Status:
//
//   DLSCHED_TRY(CheckLimits(spec));              // returns its error, if any
//   DLSCHED_TRY_LET(cluster, LoadCluster(path)); // declares `cluster` (the
//                                                // Result) or returns its error
//   Use(*cluster);
#define DLSCHED_TRY(expr)                                                \
  do {                                                                   \
    if (auto&& dlsched_try_result = (expr); !dlsched_try_result) {       \
      return ::std::unexpected(::std::move(dlsched_try_result).error()); \
    }                                                                    \
  } while (false)

#define DLSCHED_TRY_LET(name, expr) \
  auto name = (expr);               \
  if (!name) return ::std::unexpected(::std::move(name).error())
