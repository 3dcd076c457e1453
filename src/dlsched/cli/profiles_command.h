#pragma once

// `dlsched profiles` (cli/ internal): the built-in scheduler profiles, or
// one's YAML.

#include <string>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

struct ProfilesArgs {
  std::string show;  // --show NAME: that profile's YAML
};

// Registers `dlsched profiles`; returns it (parsed() tells whether it ran).
CLI::App* AddProfilesCommand(CLI::App& app, ProfilesArgs* args);

// Exit 0, or 2 for a --show that names no built-in profile.
int Profiles(const ProfilesArgs& args);

}  // namespace dlsched::cli
