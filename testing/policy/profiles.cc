#include "policy/profiles.h"

#include <utility>

#include <gtest/gtest.h>

#include "dlsched/policy/framework/registry.h"

namespace dlsched::testing {

namespace {

engine::Profile Build(const config::ProfileSpec& spec, const std::string& what) {
  auto built = policy::BuildProfile(spec);
  EXPECT_TRUE(built.has_value()) << what << ": " << built.error().message;
  return built ? std::move(*built) : engine::Profile{};
}

}  // namespace

engine::Profile BuiltinProfile(const std::string& name_or_path, const ProfileEdit& edit) {
  auto spec = policy::ResolveProfile(name_or_path);
  EXPECT_TRUE(spec.has_value()) << name_or_path << ": " << spec.error().message;
  if (!spec) return {};
  if (edit) edit(*spec);
  return Build(*spec, name_or_path);
}

engine::Profile MakeProfile(const std::string& yaml) {
  auto spec = config::ParseProfile(yaml, "p.yaml");
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  if (!spec) return {};
  return Build(*spec, "p.yaml");
}

engine::Engine MakeEngine(const std::string& name_or_path, const ProfileEdit& edit) {
  return engine::Engine(BuiltinProfile(name_or_path, edit));
}

std::unique_ptr<engine::Engine> NewEngine(const std::string& name_or_path) {
  return std::make_unique<engine::Engine>(BuiltinProfile(name_or_path));
}

}  // namespace dlsched::testing
