#include <string>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"

namespace dlsched::config {
namespace {

std::string ProfileError(const std::string& text) {
  auto p = ParseProfile(text, "gang.yaml");
  EXPECT_FALSE(p.has_value()) << "parsed: " << text;
  return p ? std::string() : p.error().message;
}

void ExpectEmptyArgs(const PluginSpec& p) {
  EXPECT_TRUE(p.args.IsMap()) << p.name;
  EXPECT_EQ(p.args.size(), 0u) << p.name;
}

TEST(ParseProfileTest, Defaults) {
  auto p = ParseProfile("name: plain\norder: FIFO\n", "plain.yaml");
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->name, "plain");
  EXPECT_EQ(p->description, "");
  EXPECT_EQ(p->source, "plain.yaml");
  EXPECT_EQ(p->admission.name, "Gang");
  EXPECT_EQ(p->admission.where, "plain.yaml: admission.args");
  EXPECT_EQ(p->order.name, "FIFO");
  EXPECT_EQ(p->packer.name, "TaskByTask");
  EXPECT_EQ(p->preemptor.name, "None");
  EXPECT_EQ(p->sizer.name, "Fixed");
  EXPECT_EQ(p->sizer.where, "plain.yaml: sizer.args");
  ASSERT_EQ(p->scorers.size(), 1u);
  EXPECT_EQ(p->scorers[0].name, "LeastAllocated");
  EXPECT_EQ(p->scorers[0].weight, 1);
  EXPECT_EQ(p->scorers[0].where, "plain.yaml: scorers[0].args");
  for (const PluginSpec* s :
       {&p->admission, &p->order, &p->packer, &p->preemptor, &p->sizer, &p->scorers[0]}) {
    ExpectEmptyArgs(*s);
  }
}

TEST(ParseProfileTest, FullProfile) {
  auto p = ParseProfile(R"(
name: gang-binpack
description: "Gang admission, bin packing"
admission: {name: Gang, args: {backfill: true}}
order: {name: FIFO}
packer: KOD2
scorers:
  - LeastAllocated
  - name: MostAllocated
    weight: 2.5
    args: {resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 3}]}
preemptor: {name: Priority, args: }
sizer: {name: Fixed}
)",
                        "gang.yaml");
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->description, "Gang admission, bin packing");
  EXPECT_EQ(p->admission.name, "Gang");
  EXPECT_TRUE(p->admission.args["backfill"].as<bool>());
  EXPECT_EQ(p->admission.where, "gang.yaml: admission.args");
  EXPECT_EQ(p->order.name, "FIFO");
  ExpectEmptyArgs(p->order);
  EXPECT_EQ(p->packer.name, "KOD2");  // bare-string form
  EXPECT_EQ(p->packer.where, "gang.yaml: packer.args");
  ExpectEmptyArgs(p->packer);
  ASSERT_EQ(p->scorers.size(), 2u);
  EXPECT_EQ(p->scorers[0].name, "LeastAllocated");
  EXPECT_EQ(p->scorers[0].weight, 1);
  EXPECT_EQ(p->scorers[1].name, "MostAllocated");
  EXPECT_EQ(p->scorers[1].weight, 2.5);
  EXPECT_EQ(p->scorers[1].where, "gang.yaml: scorers[1].args");
  ASSERT_TRUE(p->scorers[1].args["resources"].IsSequence());
  EXPECT_EQ(p->scorers[1].args["resources"][1]["name"].as<std::string>(), "nvidia.com/gpu");
  EXPECT_EQ(p->preemptor.name, "Priority");
  ExpectEmptyArgs(p->preemptor);  // `args:` with no value
}

TEST(ParseProfileTest, UnknownPluginNamesAreLeftToTheRegistry) {
  auto p = ParseProfile("name: x\norder: NoSuchOrder\n", "x.yaml");
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->order.name, "NoSuchOrder");
}

TEST(ParseProfileTest, EmptyScorerListMeansNoScoring) {
  auto p = ParseProfile("name: x\nscorers: []\n", "x.yaml");
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_TRUE(p->scorers.empty());
}

TEST(ParseProfileTest, Errors) {
  EXPECT_EQ(ProfileError("order: FIFO\n"), "gang.yaml: name: missing, expected a non-empty string");
  EXPECT_EQ(ProfileError("name: g\nordr: FIFO\n"),
            "gang.yaml: ordr: unknown key (allowed: name, description, admission, order, filters, "
            "packer, scorers, preemptor, sizer, queueOrder, protectFactor, protect, taskLoss, "
            "handOver, percentageOfNodesToScore); did you mean 'order'?");
  EXPECT_EQ(ProfileError("name: g\norder: {name: FIFO, weight: 2}\n"),
            "gang.yaml: order.weight: unknown key (allowed: name, args)");
  EXPECT_EQ(ProfileError("name: g\nscorers: [{name: A, wieght: 2}]\n"),
            "gang.yaml: scorers[0].wieght: unknown key (allowed: name, weight, args); did you "
            "mean 'weight'?");
  EXPECT_EQ(ProfileError("name: g\nscorers:\n  - A\n  - {name: B, weight: 0}\n"),
            "gang.yaml: scorers[1].weight: expected a number in (0, 1000000], got '0'");
  EXPECT_EQ(ProfileError("name: g\nscorers: {name: A}\n"),
            "gang.yaml: scorers: expected a list of scorers, got a map");
  EXPECT_EQ(ProfileError("name: g\norder: {args: {}}\n"),
            "gang.yaml: order.name: missing, expected a plugin name");
  EXPECT_EQ(ProfileError("name: g\norder: [FIFO]\n"),
            "gang.yaml: order: expected a plugin name or a map with 'name', got a list");
  EXPECT_EQ(ProfileError("name: g\nsizer: {name: FScheduling, args: [1, 2]}\n"),
            "gang.yaml: sizer.args: expected a map, got a list");
  EXPECT_EQ(ProfileError("name: g\nsizer: {name: FScheduling, args: 3}\n"),
            "gang.yaml: sizer.args: expected a map, got '3'");
  EXPECT_EQ(ProfileError("name: g\nhandOver: Later\n"),
            "gang.yaml: handOver: expected Immediate or AfterCheckpoint, got 'Later'");
}

// `handOver`: Immediate (the default) or AfterCheckpoint.
TEST(ParseProfileTest, HandOverIsImmediateUnlessAfterCheckpoint) {
  auto plain = ParseProfile("name: p\n", "p.yaml");
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  EXPECT_FALSE(plain->hand_over_after_checkpoint);
  auto immediate = ParseProfile("name: p\nhandOver: Immediate\n", "p.yaml");
  ASSERT_TRUE(immediate.has_value()) << immediate.error().message;
  EXPECT_FALSE(immediate->hand_over_after_checkpoint);
  auto after = ParseProfile("name: p\nhandOver: AfterCheckpoint\n", "p.yaml");
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_TRUE(after->hand_over_after_checkpoint);
}

// --set's path: at most 64 keys. yaml-cpp writes and reads a map in a map by
// recursion, so a path 60,000 keys deep (`a.a.a...`) overflowed the stack
// (SIGSEGV), in `simulate --set` and in a compare variant alike.
TEST(ProfileOverridesTest, PathsAreAtMost64KeysDeep) {
  const std::string profile = "name: p\norder: {name: FIFO}\n";
  std::string deep = "order.args";
  for (int i = 0; i < 62; ++i) deep += ".k";
  // 64 keys: fine (then refused by the plugin, as any unknown key).
  const std::string sixty_four = deep + "=1";
  EXPECT_TRUE(ApplyProfileOverrides(profile, "p.yaml", {&sixty_four, 1}).has_value());
  std::string very_deep;
  for (int i = 0; i < 60'000; ++i) very_deep += "a.";
  for (const std::string& o : {deep + ".k=1", very_deep + "b=1"}) {
    auto r = ApplyProfileOverrides(profile, "p.yaml", {&o, 1});
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(r.error().message.starts_with("--set: '")) << r.error().message.substr(0, 200);
    EXPECT_TRUE(r.error().message.ends_with(": more than 64 keys in the path"))
        << r.error().message.substr(0, 200);
  }
  // A long key is no deeper: it reads back, and the plugin names it.
  const std::string long_key = "order.args." + std::string(55'000, 'k') + "=1";
  auto r = ApplyProfileOverrides(profile, "p.yaml", {&long_key, 1});
  ASSERT_TRUE(r.has_value()) << r.error().message.substr(0, 200);
  EXPECT_TRUE(ParseProfile(*r, "p.yaml").has_value());
}

}  // namespace
}  // namespace dlsched::config
