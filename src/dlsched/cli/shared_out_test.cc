// Two dlsched processes that write one --out at once, each the first
// process of a PID namespace of its own (so both are PID 1, as two
// containers of a sweep's Indexed Job on one volume): every round leaves
// exactly one writer's complete set of files, never a mix, and no
// temporary beside it.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/cli/test_util.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;
using report::testing::ReadFile;

// Every file under `dir` (relative path -> bytes).
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_regular_file()) out[fs::relative(it->path(), dir).string()] = ReadFile(it->path());
  }
  return out;
}

int System(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class SharedOutTest : public testing::CommandTest {
 protected:
  SharedOutTest() : CommandTest("shared-out") {}
};

TEST_F(SharedOutTest, TwoWritersInSeparatePidNamespacesLeaveOneWholeSet) {
  if (System("unshare --pid --fork true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "`unshare --pid --fork` is not permitted here (it needs root or user "
                    "namespaces), so two processes cannot both be PID 1";
  }
  const fs::path out = tmp_ / "out";
  // Two runs whose files differ (the same file names, other contents).
  const std::string writer[2] = {
      fmt::format("{} simulate -c examples/cluster-2x4gpu.yaml -w examples/workload-small.yaml "
                  "-p gang-binpack --out '{}' -q",
                  DLSCHED_BINARY, out.string()),
      fmt::format("{} simulate -c examples/cluster-2x4gpu.yaml -w examples/workload-small.yaml "
                  "-p kod2 --out '{}' -q",
                  DLSCHED_BINARY, out.string())};
  std::map<std::string, std::string> expected[2];
  for (int w = 0; w < 2; ++w) {
    ASSERT_EQ(testing::Shell(writer[w], tmp_).code, 0);
    expected[w] = Files(out);
    ASSERT_EQ(expected[w].size(), 5u);
  }
  ASSERT_NE(expected[0], expected[1]);

  constexpr int kRounds = 50;
  int won[2] = {0, 0};
  for (int round = 0; round < kRounds; ++round) {
    // Every other round starts without the directory (a plain rename
    // rather than an exchange).
    if (round % 2 == 1) fs::remove_all(out);
    auto start = [&](int w) {
      return fmt::format("(unshare --pid --fork {0} >'{1}/{2}.log' 2>&1; echo $? >'{1}/{2}.rc') &",
                         writer[w], tmp_.string(), w);
    };
    const std::string both =
        fmt::format("cd '{}' && {{ {} {} wait; }}", DLSCHED_SOURCE_DIR, start(0), start(1));
    ASSERT_EQ(System(both), 0) << both;
    const std::map<std::string, std::string> got = Files(out);
    const int winner = got == expected[0] ? 0 : got == expected[1] ? 1 : -1;
    std::string files;
    for (const auto& [name, text] : got) files += " " + name;
    ASSERT_NE(winner, -1) << "round " << round << ": a mix or an incomplete set:" << files;
    ++won[winner];
    for (int w = 0; w < 2; ++w) {
      // A writer that lost may say so (exit 1 and one line); one that
      // exits 0 said it wrote its results.
      const std::string rc = ReadFile(tmp_ / fmt::format("{}.rc", w));
      const std::string log = ReadFile(tmp_ / fmt::format("{}.log", w));
      if (w == winner) {
        EXPECT_EQ(rc, "0\n") << "round " << round << ": the winner failed: " << log;
      } else if (rc != "0\n") {
        EXPECT_EQ(rc, "1\n") << log;
        EXPECT_TRUE(log.starts_with("dlsched: ")) << log;
      }
    }
    // Nothing is left beside --out: no temporary, no lock.
    for (const auto& e : fs::directory_iterator(tmp_)) {
      const std::string name = e.path().filename().string();
      EXPECT_FALSE(name.starts_with(".out.")) << "round " << round << ": left " << name;
    }
  }
  // Both won some rounds: they did run at once.
  RecordProperty("writer0_won", won[0]);
  RecordProperty("writer1_won", won[1]);
}

}  // namespace
}  // namespace dlsched::cli
