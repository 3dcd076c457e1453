#include "dlsched/policy/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace dlsched::policy {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RegistryTest, EveryBuiltinProfileBuildsAndMatchesItsExampleFile) {
  for (const auto& b : BuiltinProfiles()) {
    auto spec = ResolveProfile(std::string(b.name));
    ASSERT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    ASSERT_TRUE(built.has_value()) << built.error().message;
    EXPECT_EQ(built->name, b.name);
    // examples/profiles/<name>.yaml is the same text, so users can copy it.
    const std::string path =
        std::string(DLSCHED_SOURCE_DIR) + "/examples/profiles/" + std::string(b.name) + ".yaml";
    EXPECT_EQ(Slurp(path), b.yaml) << path << " differs from the built-in profile";
  }
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
      "p.yaml: order.name: unknown JobOrder 'LIFO' (known: CombinedPriority, FIFO, Kod2Weight, "
      "Priority)");

  spec =
      config::ParseProfile("name: p\nadmission: {name: Gang, args: {backfil: true}}\n", "p.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  built = BuildProfile(*spec);
  ASSERT_FALSE(built.has_value());
  EXPECT_EQ(built.error().message,
            "p.yaml: admission.args.backfil: unknown argument (expected one of: backfill)");

  spec = config::ParseProfile("name: p\nsizer: {name: StaticPartition}\n", "p.yaml");
  ASSERT_TRUE(spec.has_value());
  built = BuildProfile(*spec);
  ASSERT_FALSE(built.has_value());
  EXPECT_EQ(built.error().message,
            "p.yaml: sizer.args.slotGpus: required (the GPUs in one slot, e.g. 2)");
}

TEST(RegistryTest, UnknownProfileNameListsBuiltins) {
  auto spec = ResolveProfile("fastest");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().message,
            "--profile: 'fastest' is neither a built-in profile (k8s-default, gang-binpack, "
            "static-n, cps, volcano-priority, fsched, kod2) nor a .yaml file");
}

}  // namespace
}  // namespace dlsched::policy
