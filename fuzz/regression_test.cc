// Runs every seed of the fuzz corpus and every input a fuzzer once crashed
// on through its target, in the normal (sanitized) test build: a fixed
// finding stays fixed, and the seeds stay valid inputs for the fuzzers.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "targets.h"

namespace dlsched::fuzz {

// gtest_discover_tests puts the printed parameter into the CTest name: by
// default its bytes, pointers included, which change from build to build.
// Not in the anonymous namespace: argument-dependent lookup looks in
// NamedTarget's namespace only.
void PrintTo(const NamedTarget& target, std::ostream* os) { *os << target.name; }

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != "README.md") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void RunAll(const NamedTarget& target, const std::vector<fs::path>& files) {
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    target.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
}

class FuzzTargetTest : public ::testing::TestWithParam<NamedTarget> {};

TEST_P(FuzzTargetTest, SeedCorpusRunsClean) {
  const auto files = Files(fs::path(DLSCHED_FUZZ_DIR) / "corpus" / std::string(GetParam().name));
  ASSERT_FALSE(files.empty()) << "no seeds for " << GetParam().name;
  RunAll(GetParam(), files);
}

TEST_P(FuzzTargetTest, FormerCrashesRunClean) {
  RunAll(GetParam(),
         Files(fs::path(DLSCHED_FUZZ_DIR) / "regressions" / std::string(GetParam().name)));
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzTargetTest, ::testing::ValuesIn(Targets()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dlsched::fuzz
