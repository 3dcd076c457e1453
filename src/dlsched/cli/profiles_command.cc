#include "dlsched/cli/profiles_command.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dlsched/cli/errors.h"
#include "dlsched/core/text.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::cli {

CLI::App* AddProfilesCommand(CLI::App& app, ProfilesArgs* args) {
  CLI::App* profiles = app.add_subcommand(
      "profiles", "List the built-in scheduler profiles (use one with `simulate --profile NAME`)");
  profiles->add_option("--show", args->show,
                       "Print a built-in profile's YAML, a starting point for your own");
  return profiles;
}

int Profiles(const ProfilesArgs& args) {
  const std::string& show = args.show;
  if (!show.empty()) {
    if (auto text = policy::BuiltinProfileText(show)) {
      std::fwrite(text->data(), 1, text->size(), stdout);
      return kOk;
    }
    std::vector<std::string_view> names;
    for (const auto& b : policy::BuiltinProfiles()) names.push_back(b.name);
    return BadInput(
        core::Error{fmt::format("--show: no built-in profile named '{}' (see `dlsched "
                                "profiles`){}",
                                show, core::DidYouMean(show, names))});
  }
  int width = 0;
  for (const auto& b : policy::BuiltinProfiles()) width = std::max(width, int(b.name.size()));
  for (const auto& b : policy::BuiltinProfiles()) {
    std::printf("%-*s  %s\n", width, std::string(b.name).c_str(), std::string(b.summary).c_str());
  }
  return kOk;
}

}  // namespace dlsched::cli
