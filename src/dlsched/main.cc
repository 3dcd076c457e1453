#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <iterator>

#include "dlsched/cli/cli.h"

namespace {

// A simulation's per-job tables are tens of MB, touched once each: with
// 4 KiB pages every first touch is a page fault (about 8 us each on the VM
// docs/performance.md measures on, a third of a 6,000-job run). The first
// kHugeHeap bytes of the heap are reserved at once and advised for
// transparent huge pages, so the kernel backs them 2 MiB at a time where
// its THP mode allows (madvise or always; with never, nothing changes).
// Blocks up to that size come from the heap rather than from mmap of their
// own, and freed room is kept rather than given back. Untouched room costs
// address space only. DLSCHED_HUGE_HEAP=0 in the environment turns it off
// (a host whose THP defragmentation would stall the faults).
constexpr size_t kHugeHeap = size_t{64} << 20;
constexpr size_t kHugePage = size_t{2} << 20;
// glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64 bits).
constexpr size_t kMmapThreshold = size_t{32} << 20;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizers' allocators own the heap (and would poison 64 MiB of it).
void AdviseHugeHeap() {}
#else
void AdviseHugeHeap() {
  if (const char* env = std::getenv("DLSCHED_HUGE_HEAP"); env != nullptr && env[0] == '0') return;
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kHugeHeap));
  // Grown in blocks under the threshold, so from the heap (contiguous).
  constexpr size_t kBlock = kMmapThreshold / 2;
  void* blocks[kHugeHeap / kBlock] = {};
  for (void*& b : blocks) b = std::malloc(kBlock);
  const auto begin = reinterpret_cast<uintptr_t>(blocks[0]);
  const auto end = reinterpret_cast<uintptr_t>(blocks[std::size(blocks) - 1]) + kBlock;
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = end & ~(kHugePage - 1);
  if (blocks[0] != nullptr && last > first && end - begin < 2 * kHugeHeap) {
    madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  for (void* b : blocks) std::free(b);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  AdviseHugeHeap();
  return dlsched::cli::Main(argc, argv);
}
