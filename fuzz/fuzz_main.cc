// The entry point of one fuzz binary (fuzz_<target>), for AFL++'s
// libFuzzer-compatible driver (libAFLDriver.a provides main).
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const dlsched::fuzz::Target target = dlsched::fuzz::FindTarget(DLSCHED_FUZZ_TARGET);
  if (target == nullptr) __builtin_trap();
  target(data, size);
  return 0;
}
