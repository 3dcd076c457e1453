// `dlsched operator` and `dlsched snapshot` in dlsched itself: handed to
// dlsched-k8s, the build of the same CLI that holds the Kubernetes client
// (libcurl) and servers (cpp-httplib). dlsched does not link them: loading
// those libraries and theirs (about 30) took 16 of the 23 ms every
// `dlsched` process spent starting, whatever the command.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dlsched/cli/operator_command.h"
#include "dlsched/cli/snapshot_command.h"
#include "dlsched/core/text.h"

namespace dlsched::cli {
namespace {

// dlsched-k8s beside this executable, else in ../lib/dlsched/ (an install
// that keeps helpers out of bin/).
std::vector<std::string> Candidates() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  std::string dir(self, static_cast<size_t>(n));
  dir.erase(dir.rfind('/') + 1);
  return {dir + "dlsched-k8s", dir + "../lib/dlsched/dlsched-k8s"};
}

int HandOver(int argc, char** argv) {
  const std::vector<std::string> paths = Candidates();
  for (const std::string& path : paths) {
    if (::access(path.c_str(), X_OK) != 0) continue;
    std::vector<char*> args(argv, argv + argc);
    args.push_back(nullptr);
    ::execv(path.c_str(), args.data());
    std::fprintf(stderr, "dlsched: cannot run %s: %s\n", core::EscapeText(path, 4096).c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::fprintf(stderr,
               "dlsched: %s needs dlsched-k8s (the build with the Kubernetes client) beside "
               "dlsched or in ../lib/dlsched/; build it with the dlsched target\n",
               argc > 1 ? core::EscapeText(argv[1], 64).c_str() : "this command");
  return 1;
}

}  // namespace

int Operate(const OperatorArgs& /*args*/, int argc, char** argv) { return HandOver(argc, argv); }

int TakeSnapshot(const SnapshotArgs& /*args*/, int argc, char** argv) {
  return HandOver(argc, argv);
}

}  // namespace dlsched::cli
