#pragma once

// Running the built dlsched from cli/'s end-to-end tests.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/report/test_util.h"

namespace dlsched::cli::testing {

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `command` with sh in the source directory (the examples' paths are
// relative to it), stdout and stderr apart (kept in `scratch`).
inline Ran Shell(const std::string& command, const std::filesystem::path& scratch) {
  const std::filesystem::path out = scratch / "stdout.txt";
  const std::filesystem::path err = scratch / "stderr.txt";
  const std::string line = fmt::format("cd '{}' && {} >'{}' 2>'{}' </dev/null", DLSCHED_SOURCE_DIR,
                                       command, out.string(), err.string());
  const int status = std::system(line.c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = report::testing::ReadFile(out);
  r.err = report::testing::ReadFile(err);
  return r;
}

// A simulate run's summary.json without its last key, "provenance": what
// a sweep cell or a compare run directory holds for the same run.
inline std::string WithoutProvenance(const std::string& summary) {
  const size_t at = summary.find(",\n  \"provenance\": {");
  if (at == std::string::npos) return summary;
  return summary.substr(0, at) + "\n}\n";
}

// A fresh scratch directory per test (tmp_, removed afterwards) and the
// built dlsched run in the source directory.
class CommandTest : public ::testing::Test {
 protected:
  explicit CommandTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    tmp_ = std::filesystem::temp_directory_path() /
           fmt::format("dlsched-{}-{}-{}", prefix_, ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(tmp_);
    std::filesystem::create_directories(tmp_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }

  Ran Dlsched(const std::string& args) {
    return Shell(std::string(DLSCHED_BINARY) + " " + args, tmp_);
  }
  // `name` in the scratch directory.
  std::string Path(const std::string& name) const { return (tmp_ / name).string(); }

  std::string prefix_;
  std::filesystem::path tmp_;
};

}  // namespace dlsched::cli::testing
