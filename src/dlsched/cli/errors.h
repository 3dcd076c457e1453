#pragma once

// How a command ends (cli/ internal): its exit code and, when it fails, one
// line on stderr saying why.

#include <cstddef>
#include <string_view>

#include "dlsched/core/error.h"

namespace dlsched::cli {

inline constexpr int kOk = 0;
inline constexpr int kRunFailed = 1;
inline constexpr int kBadInput = 2;
inline constexpr int kInterrupted = 130;  // 128 + SIGINT, as shells report it

// Messages echo user text (file names, field names, values): escaped, so
// each is one line whatever the input held.
inline constexpr size_t kMaxMessageBytes = 4096;

// "dlsched: MESSAGE" on stderr, after whatever stdout holds.
void PrintError(std::string_view message);

// Prints `e`; returns kBadInput.
int BadInput(const core::Error& e);
// Prints `e`; returns kRunFailed.
int RunFailed(const core::Error& e);
// The inputs did not load: bad input, or a Ctrl-C that stopped a trace's
// load (exit 130, as a run interrupted).
int LoadFailed(const core::Error& e);

}  // namespace dlsched::cli
