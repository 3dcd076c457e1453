#pragma once

// Options several subcommands share, so that each means one thing
// everywhere (cli/ internal).

#include <CLI/CLI.hpp>

namespace dlsched::cli {

// -q/--quiet, on every command that takes it: no tables and no progress
// line; the line saying where the results went, and errors, still print.
CLI::Option* AddQuietOption(CLI::App* cmd, bool* quiet);

}  // namespace dlsched::cli
