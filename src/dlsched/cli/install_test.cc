// `cmake --install BUILD --prefix PREFIX` (README.md, "Building by hand")
// puts dlsched in PREFIX/bin and dlsched-k8s where dlsched looks for it,
// PREFIX/lib/dlsched/. Run on the build these tests belong to (in CI the
// sanitize preset's; the install rules are the same for every preset).
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/cli/test_util.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

using testing::Ran;

class InstallTest : public testing::CommandTest {
 protected:
  InstallTest() : CommandTest("install") {}
};

TEST_F(InstallTest, PutsDlschedOnPathAndItsHelperWhereItLooks) {
  const fs::path prefix = tmp_ / "prefix";
  Ran r = testing::Shell(fmt::format("'{}' --install '{}' --prefix '{}'", DLSCHED_CMAKE,
                                     DLSCHED_BUILD_DIR, prefix.string()),
                         tmp_);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(prefix / "bin/dlsched"));
  EXPECT_TRUE(fs::is_regular_file(prefix / "lib/dlsched/dlsched-k8s"));
  EXPECT_FALSE(fs::exists(prefix / "bin/dlsched-k8s"));

  // With PREFIX/bin on PATH, from any directory.
  const auto installed = [&](const std::string& args) {
    return testing::Shell(fmt::format("cd '{}' && PATH='{}':\"$PATH\" dlsched {}", tmp_.string(),
                                      (prefix / "bin").string(), args),
                          tmp_);
  };
  r = installed("--version");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, fmt::format("dlsched {}\n", DLSCHED_VERSION));
  r = installed("operator --help");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--kubeconfig"), std::string::npos) << r.out;
  // `snapshot` runs in the helper found in ../lib/dlsched/: it answers
  // that no operator listens there (without it: "needs dlsched-k8s").
  r = installed(
      fmt::format("snapshot --from 127.0.0.1:1 --timeout 1 --out '{}'", (tmp_ / "s").string()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("--from 127.0.0.1:1: GET http://127.0.0.1:1/snapshot"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace dlsched::cli
