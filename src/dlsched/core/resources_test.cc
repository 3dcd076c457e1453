#include "dlsched/core/resources.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace dlsched::core {
namespace {

constexpr int64_t kKi = int64_t{1} << 10;
constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

// --- ParseResourceAmount ---------------------------------------------------

struct AmountCase {
  ResourceId id;
  std::string_view in;
  int64_t want;
};

const AmountCase kAmounts[] = {
    // cpu is in millicores.
    {kCpu, "500m", 500},
    {kCpu, "2", 2000},
    {kCpu, "1.5", 1500},
    {kCpu, "0.1m", 1},  // rounds up: a tiny request still asks for something
    {kCpu, "1n", 1},    // 1e-9 cores = 1e-6 millicores -> 1
    {kCpu, "1e-3", 1},
    {kCpu, "0", 0},
    {kCpu, "-0", 0},  // zero with a sign is still zero, not negative
    // memory is in bytes, rounded up.
    {kMemory, "2Gi", 2 * kGi},
    {kMemory, "512Mi", 512 * kMi},
    {kMemory, "1k", 1000},
    {kMemory, "1e3", 1000},
    {kMemory, "0.5", 1},       // half a byte -> 1
    {kMemory, "1.5Ki", 1536},  // 1.5 * 1024
    {kMemory, "100m", 1},      // 0.1 byte -> 1
    // gpus and extended resources are whole units, rounded up.
    {kGpu, "1", 1},
    {kGpu, "0.5", 1},
    {kGpu, "4", 4},
    {kGpu, "2k", 2000},
};

TEST(ResourcesTest, ParsesAmountsInCanonicalUnits) {
  for (const auto& c : kAmounts) {
    SCOPED_TRACE(std::string(ResourceName(c.id)) + " " + std::string(c.in));
    auto got = ParseResourceAmount(c.id, c.in);
    ASSERT_TRUE(got.has_value()) << got.error().message;
    EXPECT_EQ(*got, c.want);
  }
}

TEST(ResourcesTest, RejectsNegativeAmounts) {
  auto got = ParseResourceAmount(kCpu, "-1");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message, "'-1' is negative; a resource request must be >= 0");

  // Negative by a nano is still negative (Kubernetes rounds -0.1n to -1n).
  got = ParseResourceAmount(kMemory, "-0.1n");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message, "'-0.1n' is negative; a resource request must be >= 0");
}

TEST(ResourcesTest, RejectsAmountsBeyondInt64) {
  // 99999Ei (about 1.2e23 bytes) is a valid quantity but no int64 byte count.
  auto got = ParseResourceAmount(kMemory, "99999Ei");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message, "'99999Ei' is too large");

  // 1E cores fits as a quantity, but not in millicores (1e21).
  got = ParseResourceAmount(kCpu, "1E");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message, "'1E' is too large");
  // The same string is fine for gpus: 1e18 devices fits in int64.
  EXPECT_EQ(ParseResourceAmount(kGpu, "1E").value_or(-1), 1'000'000'000'000'000'000);

  // Beyond what Quantity itself holds.
  got = ParseResourceAmount(kCpu, "1e30");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message, "'1e30' is too large");
}

TEST(ResourcesTest, PassesParseErrorsThrough) {
  auto got = ParseResourceAmount(kMemory, "10Xi");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message,
            "'10Xi' is not a valid quantity (expected a number with an optional suffix such as "
            "500m, 2Gi, 1.5, 1e3)");
}

// --- FormatResourceAmount / FormatResources --------------------------------

TEST(ResourcesTest, FormatsCpuAsCoresOrMillicores) {
  EXPECT_EQ(FormatResourceAmount(kCpu, 500), "500m");
  EXPECT_EQ(FormatResourceAmount(kCpu, 2000), "2");
  EXPECT_EQ(FormatResourceAmount(kCpu, 1500), "1500m");  // not "1.5": stays exact and greppable
  EXPECT_EQ(FormatResourceAmount(kCpu, 1), "1m");
  EXPECT_EQ(FormatResourceAmount(kCpu, 0), "0");
  EXPECT_EQ(FormatResourceAmount(kCpu, -500), "-500m");  // free capacity can go negative
  EXPECT_EQ(FormatResourceAmount(kCpu, -3000), "-3");
}

TEST(ResourcesTest, FormatsMemoryWithTheLargestExactBinarySuffix) {
  EXPECT_EQ(FormatResourceAmount(kMemory, 2 * kGi), "2Gi");
  EXPECT_EQ(FormatResourceAmount(kMemory, 512 * kMi), "512Mi");
  EXPECT_EQ(FormatResourceAmount(kMemory, 1536 * kMi), "1536Mi");  // 1.5Gi is not a whole Gi
  EXPECT_EQ(FormatResourceAmount(kMemory, 1024 * kGi), "1Ti");
  EXPECT_EQ(FormatResourceAmount(kMemory, kKi), "1Ki");
  EXPECT_EQ(FormatResourceAmount(kMemory, 1000), "1000");  // not a multiple of 1024
  EXPECT_EQ(FormatResourceAmount(kMemory, 1025), "1025");
  EXPECT_EQ(FormatResourceAmount(kMemory, 0), "0");
  EXPECT_EQ(FormatResourceAmount(kMemory, int64_t{1} << 62), "4Ei");
  EXPECT_EQ(FormatResourceAmount(kMemory, -2 * kGi), "-2Gi");
  EXPECT_EQ(FormatResourceAmount(kMemory, INT64_MIN), "-8Ei");  // -2^63
  EXPECT_EQ(FormatResourceAmount(kMemory, INT64_MAX), "9223372036854775807");
}

TEST(ResourcesTest, FormatsOtherResourcesAsIntegers) {
  EXPECT_EQ(FormatResourceAmount(kGpu, 3), "3");
  EXPECT_EQ(FormatResourceAmount(kGpu, 1024), "1024");  // no binary suffix for devices
  EXPECT_EQ(FormatResourceAmount(kGpu, 0), "0");
}

TEST(ResourcesTest, FormattedAmountsParseBack) {
  for (ResourceId id : {kCpu, kMemory, kGpu}) {
    for (int64_t amount : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1500}, kKi,
                           3 * kMi + 1, 5 * kGi, int64_t{1} << 62, INT64_MAX}) {
      std::string text = FormatResourceAmount(id, amount);
      SCOPED_TRACE(std::string(ResourceName(id)) + " " + text);
      auto back = ParseResourceAmount(id, text);
      ASSERT_TRUE(back.has_value()) << back.error().message;
      EXPECT_EQ(*back, amount);
    }
  }
}

TEST(ResourcesTest, FormatsResourceVectors) {
  Resources r;
  EXPECT_EQ(FormatResources(r), "none");

  r[kCpu] = 2000;
  r[kMemory] = 4 * kGi;
  r[kGpu] = 1;
  EXPECT_EQ(FormatResources(r), "cpu=2, memory=4Gi, nvidia.com/gpu=1");

  // Zero entries are left out; the order is by id, not by insertion.
  Resources gpu_only;
  gpu_only[kGpu] = 2;
  gpu_only[kCpu] = 500;
  gpu_only[kCpu] = 0;
  EXPECT_EQ(FormatResources(gpu_only), "nvidia.com/gpu=2");

  Resources mixed;
  mixed[kMemory] = 1000;
  mixed[kCpu] = 250;
  EXPECT_EQ(FormatResources(mixed), "cpu=250m, memory=1000");

  Resources deficit = mixed - r;  // 250 - 2000 millicores, 1000 - 4Gi bytes, 0 - 1 gpu
  EXPECT_EQ(FormatResources(deficit), "cpu=-1750m, memory=-4294966296, nvidia.com/gpu=-1");
}

// --- Interner --------------------------------------------------------------

TEST(ResourcesTest, PreRegistersTheWellKnownNames) {
  EXPECT_GE(NumResources(), 3);
  EXPECT_EQ(FindResource("cpu"), kCpu);
  EXPECT_EQ(FindResource("memory"), kMemory);
  EXPECT_EQ(FindResource("nvidia.com/gpu"), kGpu);
  EXPECT_EQ(ResourceName(kCpu), "cpu");
  EXPECT_EQ(ResourceName(kMemory), "memory");
  EXPECT_EQ(ResourceName(kGpu), "nvidia.com/gpu");
  // Interning a known name returns its id and adds nothing.
  int before = NumResources();
  EXPECT_EQ(InternResource("memory").value_or(99), kMemory);
  EXPECT_EQ(InternResource("nvidia.com/gpu").value_or(99), kGpu);
  EXPECT_EQ(NumResources(), before);
  // Names are case-sensitive, as in Kubernetes.
  EXPECT_EQ(FindResource("CPU"), -1);
  EXPECT_EQ(FindResource("example.invalid/never-interned"), -1);
}

TEST(ResourcesTest, RejectsInvalidNamesWithoutUsingASlot) {
  int before = NumResources();
  for (std::string_view bad : {"", " ", "nvidia.com/ gpu", "gpu ", "a\tb", "a\nb"}) {
    SCOPED_TRACE("'" + std::string(bad) + "'");
    auto id = InternResource(bad);
    ASSERT_FALSE(id.has_value());
    EXPECT_NE(id.error().message.find("is not a valid resource name"), std::string::npos)
        << id.error().message;
  }
  EXPECT_EQ(InternResource("").error().message,
            "'' is not a valid resource name (expected a non-empty name without spaces, such as "
            "cpu or nvidia.com/gpu)");
  EXPECT_EQ(NumResources(), before);
}

// --- Resources beyond the inline ids ---------------------------------------
// Ids >= kInlineResources live in `more`, sorted and only where set; these
// need no interning (operator[] takes any id).

constexpr ResourceId kMig = 40;  // two ids past the inline ones
constexpr ResourceId kRdma = 12;

TEST(ResourcesTest, IdsBeyondTheInlineOnesAddSubtractAndCompare) {
  Resources a, b;
  a[kCpu] = 1000;
  a[kMig] = 3;
  b[kRdma] = 2;
  b[kMig] = 1;
  // a + b = {cpu 1000, rdma 2, mig 4}; sorted by id whatever the order set.
  Resources sum = a + b;
  EXPECT_EQ(sum[kCpu], 1000);
  EXPECT_EQ(sum[kRdma], 2);
  EXPECT_EQ(sum[kMig], 4);
  ASSERT_EQ(sum.more.size(), 2u);
  EXPECT_EQ(sum.more[0].first, kRdma);
  EXPECT_EQ(sum.Width(), kMig + 1);
  // (a + b) - b == a, though the difference still holds rdma at 0.
  Resources back = sum - b;
  EXPECT_EQ(back[kRdma], 0);
  EXPECT_EQ(back.more.size(), 2u);
  EXPECT_EQ(back, a);
  EXPECT_EQ(a, back);
  EXPECT_NE(a, b);
  Resources zero;
  zero[kMig] = 0;  // held, but 0: equal to nothing at all
  EXPECT_TRUE(zero.IsZero());
  EXPECT_EQ(zero, Resources());
  EXPECT_EQ((b * 3)[kRdma], 6);
  const Resources& cb = b;
  EXPECT_EQ(cb[50], 0);  // an id nobody set reads 0 and inserts nothing
  EXPECT_EQ(cb.more.size(), 2u);
}

TEST(ResourcesTest, FitsInAndMaxCountIdsEitherSideHolds) {
  Resources task, node;
  task[kGpu] = 1;
  task[kMig] = 1;
  node[kGpu] = 8;
  // The node has no mig at all: 1 > 0.
  EXPECT_FALSE(task.FitsIn(node));
  node[kMig] = 1;
  EXPECT_TRUE(task.FitsIn(node));
  // A free vector below 0 where the task asks for none (a node's
  // allocatable lowered under its pods) does not fit either: 0 > -1.
  Resources free = node;
  free[kRdma] = -1;
  EXPECT_FALSE(task.FitsIn(free));
  EXPECT_TRUE(Resources().FitsIn(node));
  // Max clamps at 0 where only one side holds the id.
  Resources m = Max(free, Resources());
  EXPECT_EQ(m[kRdma], 0);
  EXPECT_EQ(m[kMig], 1);
  Resources n;
  n[kRdma] = 5;
  EXPECT_EQ(Max(free, n)[kRdma], 5);
  EXPECT_EQ(Max(n, free)[kMig], 1);
}

TEST(ResourcesTest, FirstIdVisitsTheInlineIdsThenEitherSidesInOrder) {
  Resources a, b;
  a[kMig] = 1;
  b[kRdma] = 1;
  b[kMig] = 2;
  std::vector<int> seen;
  EXPECT_EQ(FirstId(a, b,
                    [&](ResourceId id) {
                      seen.push_back(id);
                      return false;
                    }),
            -1);
  // 0..7, then 12 (b only), then 40 (both, once).
  std::vector<int> want = {0, 1, 2, 3, 4, 5, 6, 7, kRdma, kMig};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(FirstId(a, b, [&](ResourceId id) { return a[id] < b[id]; }), kRdma);
  EXPECT_EQ(FirstId(a, [&](ResourceId id) { return a[id] > 0; }), kMig);
  // fn reading `a` through its non-const operator[] inserts b's ids into
  // a.more as it goes (GangFitsInFreeTotal's `need` did, and crashed an
  // iterator-based walk); the walk still visits each id once, in order.
  b[50] = 1;
  seen.clear();
  FirstId(a, b, [&](ResourceId id) {
    seen.push_back(id);
    return a[id] > b[id];
  });
  want = {0, 1, 2, 3, 4, 5, 6, 7, kRdma, kMig, 50};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(a.more.size(), 3u);  // 12 and 50 inserted at 0
}

// The name table is process-wide and shared by every test in core_test, so
// tests that intern new names and count them run in a child
// process (a gtest death test in "threadsafe" style re-executes the binary for
// just this test): they start from the three fixed names and leave the
// parent's table untouched. `body` returns "" on success or what went wrong.
void ExpectInFreshProcess(const std::function<std::string()>& body) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string failures = body();
        std::fputs(failures.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(failures.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

std::string Check(bool ok, std::string_view what) {
  return ok ? "" : "failed: " + std::string(what) + "\n";
}

TEST(ResourcesDeathTest, InternsExtendedNamesInOrderOfFirstUse) {
  ExpectInFreshProcess([] {
    std::string f;
    // cpu, memory, nvidia.com/gpu and dlsched.io/gpu-milli.
    f += Check(NumResources() == 4, "fresh table has 4 names");
    f += Check(ResourceName(kGpuMilli) == "dlsched.io/gpu-milli", "the share's name");
    // ids 4, 5, ... in order of first use; a repeat returns the same id.
    f += Check(InternResource("example.com/fpga").value_or(99) == 4, "fpga -> 4");
    f += Check(InternResource("rdma/hca").value_or(99) == 5, "hca -> 5");
    f += Check(InternResource("example.com/fpga").value_or(99) == 4, "fpga again -> 4");
    f += Check(NumResources() == 6, "6 names");
    f += Check(FindResource("rdma/hca") == 5, "find hca");
    f += Check(ResourceName(4) == "example.com/fpga", "name of 4");
    f += Check(ResourceName(6).empty(), "name of an id not yet interned is empty");

    Resources r;
    r[kGpu] = 8;
    r[4] = 2;
    r[5] = 1;
    r[7] = 5;  // never interned: labelled by id
    f += Check(
        FormatResources(r) == "nvidia.com/gpu=8, example.com/fpga=2, rdma/hca=1, resource-7=5",
        "FormatResources: " + FormatResources(r));
    // Extended resources are whole units, like gpus.
    f += Check(ParseResourceAmount(4, "1.5").value_or(-1) == 2, "1.5 fpga -> 2");
    return f;
  });
}

// A real GPU node lists far more than the inline ids: ephemeral-storage,
// hugepages, MIG profiles, RDMA devices. 600 names cross the table's
// 256-name chunks twice; every one keeps its id and name, and a vector that
// asks for the last one works as one that asks for the first.
TEST(ResourcesDeathTest, InternsAnyNumberOfNames) {
  ExpectInFreshProcess([] {
    std::string f;
    constexpr int kNames = 600;
    for (int i = 4; i < kNames; ++i) {
      std::string name = "example.com/r" + std::to_string(i);
      f += Check(InternResource(name).value_or(0) == i, name + " gets the next id");
    }
    f += Check(NumResources() == kNames, "600 names");
    for (int i = 4; i < kNames; ++i) {
      std::string name = "example.com/r" + std::to_string(i);
      f += Check(FindResource(name) == i && ResourceName(static_cast<ResourceId>(i)) == name,
                 name + " round-trips");
      f += Check(InternResource(name).value_or(0) == i, name + " again: the same id");
    }
    f += Check(InternResource("cpu").value_or(99) == kCpu, "cpu keeps id 0");
    f += Check(FindResource("example.com/never") == -1, "an unknown name is not found");

    // node has 2 of r599 and 8 gpus; a task asks for 1 gpu and 1 r599.
    Resources node, task;
    node[kGpu] = 8;
    node[599] = 2;
    task[kGpu] = 1;
    task[599] = 1;
    f += Check(task.FitsIn(node), "1 of r599 fits in 2");
    Resources used = task * 2;
    f += Check(used.FitsIn(node) && !(task * 3).FitsIn(node), "2 fit, 3 do not");
    f += Check(FormatResources(node - used) == "nvidia.com/gpu=6",
               "left: " + FormatResources(node - used));
    f += Check(FormatResources(task) == "nvidia.com/gpu=1, example.com/r599=1",
               "FormatResources: " + FormatResources(task));
    return f;
  });
}

TEST(ResourcesDeathTest, RefusesNamesBeyondTheIdType) {
  ExpectInFreshProcess([] {
    std::string f;
    for (int i = 4; i < kMaxResourceNames; ++i) {
      if (!InternResource("r" + std::to_string(i))) return std::string("refused before the end");
    }
    f += Check(NumResources() == kMaxResourceNames, "every id used");
    auto one_more = InternResource("example.com/one-too-many");
    f += Check(!one_more.has_value() &&
                   one_more.error().message == "too many distinct resource names (at most 65536)",
               "the next name is refused");
    f += Check(NumResources() == kMaxResourceNames, "refusal adds nothing");
    f += Check(InternResource("r65535").value_or(0) == 65535, "a known name still resolves");
    return f;
  });
}

TEST(ResourcesDeathTest, ConcurrentInterningAgreesOnIds) {
  ExpectInFreshProcess([] {
    const std::vector<std::string> names = {"a.io/x", "b.io/y", "c.io/z", "d.io/w"};
    constexpr int kThreads = 8;
    constexpr int kRounds = 200;
    // got[t][n]: the id thread t received for names[n].
    std::vector<std::vector<int>> got(kThreads, std::vector<int>(names.size(), -1));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < kRounds; ++round) {
          for (size_t k = 0; k < names.size(); ++k) {
            size_t n = (k + t) % names.size();  // each thread starts elsewhere
            auto id = InternResource(names[n]);
            int v = id ? *id : -2;
            if (got[t][n] == -1) got[t][n] = v;
            if (got[t][n] != v) got[t][n] = -3;  // an id changed between calls
            (void)ResourceName(static_cast<ResourceId>(v));
            (void)NumResources();
          }
        }
      });
    }
    for (auto& th : threads) th.join();

    std::string f;
    f += Check(NumResources() == 4 + static_cast<int>(names.size()), "each name interned once");
    std::vector<bool> seen(kInlineResources, false);
    for (size_t n = 0; n < names.size(); ++n) {
      int id = got[0][n];
      f += Check(id >= 4 && id < kInlineResources && !seen[id], names[n] + " has its own new id");
      if (id >= 0 && id < kInlineResources) seen[id] = true;
      for (int t = 1; t < kThreads; ++t) {
        f += Check(got[t][n] == id, names[n] + " has the same id in every thread");
      }
      f += Check(FindResource(names[n]) == id, names[n] + " is findable");
      f += Check(id >= 0 && ResourceName(static_cast<ResourceId>(id)) == names[n],
                 names[n] + " name round-trips");
    }
    return f;
  });
}

}  // namespace
}  // namespace dlsched::core
