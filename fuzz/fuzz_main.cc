// The entry point of one fuzz binary (fuzz_<target>), for AFL++'s
// libFuzzer-compatible driver (libAFLDriver.a provides main).
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" void DlschedFuzzStartInput();  // afl_coverage.cc

// The driver calls this once, before the fork server starts.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  dlsched::fuzz::WarmUp();
  return 0;
}

// Not instrumented: its first block would otherwise record an edge from the
// last block of the previous input.
extern "C" __attribute__((no_sanitize_coverage)) int LLVMFuzzerTestOneInput(const uint8_t* data,
                                                                            size_t size) {
  static const dlsched::fuzz::Target target = dlsched::fuzz::FindTarget(DLSCHED_FUZZ_TARGET);
  if (target == nullptr) __builtin_trap();
  DlschedFuzzStartInput();
  target(data, size);
  return 0;
}
