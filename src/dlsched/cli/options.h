#pragma once

// Options several subcommands share, so that each means one thing
// everywhere (cli/ internal).

#include <string>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

// -q/--quiet, on every command that takes it: no tables and no progress
// line; the line saying where the results went, and errors, still print.
CLI::Option* AddQuietOption(CLI::App* cmd, bool* quiet);

// The check of every flag that takes a number with a fraction (a double):
// a finite number in [min, max]. CLI11's own Range lets NaN through (it
// compares, and every comparison with NaN is false): `snapshot --timeout
// nan` passed it and then never timed out.
CLI::Validator FiniteIn(double min, double max);

// --threads/-j of compare, sweep and rerun: runs at once, 0 (one per core)
// to kMaxThreads.
CLI::Option* AddThreadsOption(CLI::App* cmd, int* threads, const std::string& help);

}  // namespace dlsched::cli
