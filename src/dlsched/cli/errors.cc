#include "dlsched/cli/errors.h"

#include <cstdio>

#include "dlsched/cli/runs.h"
#include "dlsched/core/text.h"

namespace dlsched::cli {

void PrintError(std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "dlsched: %s\n", core::EscapeMessage(message, kMaxMessageBytes).c_str());
}

int BadInput(const core::Error& e) {
  PrintError(e.message);
  return kBadInput;
}

int RunFailed(const core::Error& e) {
  PrintError(e.message);
  return kRunFailed;
}

int LoadFailed(const core::Error& e) {
  if (!StopSignals::Stopped()) return BadInput(e);
  PrintError(e.message + "; nothing was run or written");
  return kInterrupted;
}

}  // namespace dlsched::cli
