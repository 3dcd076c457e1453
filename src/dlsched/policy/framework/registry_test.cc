#include "dlsched/policy/framework/registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/files.h"
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/shared/order_fifo.h"

namespace dlsched::policy {
namespace {

using dlsched::testing::ReadFile;

TEST(RegistryTest, EveryBuiltinProfileBuildsAndMatchesItsExampleFile) {
  for (const auto& b : BuiltinProfiles()) {
    auto spec = ResolveProfile(std::string(b.name));
    ASSERT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    ASSERT_TRUE(built.has_value()) << built.error().message;
    EXPECT_EQ(built->name, b.name);
    // Built from examples/profiles/<name>.yaml at build time: byte for byte
    // (the embedding keeps semicolons, backslashes and quotes as they are).
    const std::string path =
        std::string(DLSCHED_SOURCE_DIR) + "/examples/profiles/" + std::string(b.name) + ".yaml";
    EXPECT_EQ(ReadFile(path), b.yaml) << path << " differs from the built-in profile";
  }
}

// Every unit registers itself (DLSCHED_REGISTER_UNIT), each folder's
// although nothing calls into it: the policy layer is linked whole. The
// table is built in the order of the units' names.
TEST(RegistryTest, UnitsRegisterThemselvesInTheOrderOfTheirNames) {
  std::vector<std::string_view> names;
  for (const Unit& u : RegisteredUnits()) names.push_back(u.name);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (std::string_view unit :
       {"baselines", "cps", "deadline", "fsched", "kod2", "tiresias", "volcano"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), unit), names.end()) << unit;
  }
  auto table = BuildTable(RegisteredUnits());
  ASSERT_TRUE(table.has_value()) << table.error().message;
  EXPECT_TRUE(table->orders.contains("Kod2Weight"));   // kod2/kod2.cc
  EXPECT_TRUE(table->sizers.contains("FScheduling"));  // fsched/fsched.cc
}

void AddFifo(PluginTable& t) { t.orders.emplace("FIFO", NoArgs<engine::JobOrder, FifoOrder>()); }
void AddNothing(PluginTable& /*t*/) {}

// A name means one piece: two units registering one, or two units of one
// name, are an error naming them (whichever order they were linked in).
TEST(RegistryTest, ANameTakenTwiceIsAnError) {
  const Unit clash[] = {{"mine", AddFifo}, {"theirs", AddFifo}};
  auto table = BuildTable(clash);
  ASSERT_FALSE(table.has_value());
  EXPECT_EQ(table.error().message,
            "policy units 'mine' and 'theirs' both register JobOrder 'FIFO'");
  const Unit twice[] = {{"mine", AddNothing}, {"mine", AddFifo}};
  table = BuildTable(twice);
  ASSERT_FALSE(table.has_value());
  EXPECT_EQ(table.error().message, "two policy units are named 'mine'");
  const Unit fine[] = {{"mine", AddFifo}, {"other", AddNothing}};
  table = BuildTable(fine);
  ASSERT_TRUE(table.has_value()) << table.error().message;
  EXPECT_EQ(table->orders.size(), 1u);
}

TEST(RegistryTest, StaticNTakesAnySlotSize) {
  auto spec = ResolveProfile("static-3");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->name, "static-3");
  EXPECT_EQ(spec->sizer.args["slotGpus"].as<int>(), 3);
  EXPECT_FALSE(ResolveProfile("static-0").has_value());
  EXPECT_FALSE(ResolveProfile("static-x").has_value());
}

TEST(RegistryTest, UnknownNamesAndArgumentsNameTheField) {
  auto spec = config::ParseProfile("name: p\norder: LIFO\n", "p.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto built = BuildProfile(*spec);
  ASSERT_FALSE(built.has_value());
  EXPECT_EQ(
      built.error().message,
      "p.yaml: order.name: unknown JobOrder 'LIFO' (known: CombinedPriority, EarliestDeadline, "
      "FIFO, GpuDemand, Kod2Weight, Las, Priority, RemainingTime); did you mean 'FIFO'?");

  spec =
      config::ParseProfile("name: p\nadmission: {name: Gang, args: {backfil: true}}\n", "p.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  built = BuildProfile(*spec);
  ASSERT_FALSE(built.has_value());
  EXPECT_EQ(built.error().message,
            "p.yaml: admission.args.backfil: unknown argument (expected one of: backfill); did "
            "you mean 'backfill'?");

  spec = config::ParseProfile("name: p\nsizer: {name: StaticPartition}\n", "p.yaml");
  ASSERT_TRUE(spec.has_value());
  built = BuildProfile(*spec);
  ASSERT_FALSE(built.has_value());
  EXPECT_EQ(built.error().message,
            "p.yaml: sizer.args.slotGpus: required (the GPUs in one slot, e.g. 2)");
}

// Pieces that do not work together are refused when the profile loads,
// naming the field to change.
TEST(RegistryTest, IncompatiblePiecesAreAnError) {
  auto error = [](const std::string& yaml) {
    auto spec = config::ParseProfile(yaml, "p.yaml");
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    EXPECT_FALSE(built.has_value()) << yaml;
    return built ? std::string() : built.error().message;
  };
  EXPECT_EQ(error("name: p\nadmission: Kod2\norder: FIFO\n"),
            "p.yaml: order: admission Kod2 needs order Kod2Weight (it takes each job's weight "
            "from the order's key and compares waiting with running jobs by it), got FIFO");
  EXPECT_EQ(error("name: p\npreemptor: Kod2ScaleIn\norder: {name: CombinedPriority}\n"),
            "p.yaml: order: preemptor Kod2ScaleIn needs order Kod2Weight (it shrinks only jobs of "
            "a lower KOD2 weight, read from the order's keys), got CombinedPriority");
  EXPECT_EQ(error("name: p\nadmission: PerPod\norder: Priority\n"),
            "p.yaml: order: admission PerPod needs order FIFO (pods are scheduled in the order "
            "they were created; a job order would be ignored), got Priority");
  EXPECT_EQ(error("name: p\nadmission: PerPod\npacker: FewestNodes\n"),
            "p.yaml: packer: admission PerPod needs packer TaskByTask (pods are placed one at a "
            "time by the scorers; a packer would be ignored), got FewestNodes");
  EXPECT_EQ(error("name: p\nadmission: PerPod\npreemptor: PriorityEviction\n"),
            "p.yaml: preemptor: admission PerPod needs preemptor None (per-pod scheduling here "
            "does not preempt; a preemptor would be ignored), got PriorityEviction");
  EXPECT_EQ(error("name: p\nadmission: PerPod\nsizer: {name: StaticPartition, args: "
                  "{slotGpus: 2}}\n"),
            "p.yaml: sizer: admission PerPod needs sizer Fixed (a job's pods are created at its "
            "replicas and never resized; a sizer would be ignored), got StaticPartition");
  // Unusual but sound combinations load.
  for (const char* ok : {"name: p\nadmission: Kod2\norder: Kod2Weight\npreemptor: None\n",
                         "name: p\norder: Kod2Weight\nsizer: Kod2ScaleOut\n",
                         "name: p\nadmission: Gang\norder: Kod2Weight\npreemptor: Kod2ScaleIn\n",
                         "name: p\nsizer: FScheduling\npacker: FewestNodes\n"}) {
    auto spec = config::ParseProfile(ok, "p.yaml");
    ASSERT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    EXPECT_TRUE(built.has_value()) << ok << ": " << built.error().message;
  }
}

TEST(RegistryTest, UnknownProfileNameListsBuiltins) {
  auto spec = ResolveProfile("fastest");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().message,
            "--profile: 'fastest' is neither a built-in profile (k8s-default, gang-binpack, "
            "static-n, cps, volcano-priority, fsched, kod2, fifo, sjf, srtf, las, "
            "pollux-tiresias, gavel-las, gavel-fifo, queue-reclaim) nor a .yaml file");
}

}  // namespace
}  // namespace dlsched::policy
