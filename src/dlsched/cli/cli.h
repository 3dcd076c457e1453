#pragma once

namespace dlsched::cli {

// Runs the dlsched command line. Exit codes: 0 success, 1 the run failed
// (stuck or failed jobs, I/O error while writing results), 2 bad input.
int Main(int argc, char** argv);

}  // namespace dlsched::cli
