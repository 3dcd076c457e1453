// Edge coverage for AFL++ from GCC's own instrumentation.
//
// AFL++'s GCC plugin in Debian 12 (afl-g++-fast) refuses to load ("GCC and
// plugin have incompatible versions": it was built against another GCC
// 12.2.0 package), and clang 14 cannot build dlsched (its C++ library has
// no std::expected). GCC's -fsanitize-coverage=trace-pc calls this function
// at the start of every basic block; it records the edge from the previous
// block into AFL++'s shared coverage map, as AFL's classic instrumentation
// does, so afl-fuzz is coverage-guided. It must not be instrumented itself.
#include <cstdint>

extern "C" uint8_t* __afl_area_ptr;          // AFL++'s map (afl-compiler-rt.o), 64 KiB by default
extern "C" const char __executable_start[];  // GNU ld: where the executable is loaded

namespace {
thread_local uintptr_t g_previous = 0;
}  // namespace

extern "C" __attribute__((no_sanitize_coverage, no_sanitize_address, no_sanitize_undefined)) void
__sanitizer_cov_trace_pc() {
  // Relative to the load address, so a block keeps its map slot from one
  // process to the next despite ASLR (afl-showmap maps are comparable).
  const auto pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0)) -
                  reinterpret_cast<uintptr_t>(__executable_start);
  const uintptr_t current = ((pc >> 4) ^ (pc << 8)) & 0xffff;
  __afl_area_ptr[current ^ g_previous]++;
  g_previous = current >> 1;
}

// AFL++ resets its own previous-block state between persistent-mode inputs,
// not ours: without this, each input's first edge would depend on the input
// run before it, which AFL++ reports as instability.
extern "C" __attribute__((no_sanitize_coverage)) void DlschedFuzzStartInput() { g_previous = 0; }
