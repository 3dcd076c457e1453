#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/error.h"
#include "dlsched/engine/engine.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {

// While one lives, SIGINT and SIGTERM do not end the process but set a flag
// that stops RunAll's simulations after their current cycle; a second
// signal ends the process as usual. Installed before the inputs load, so a
// Ctrl-C at any moment is a clean stop.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  static bool Stopped();
  // The flag itself, for what looks at it as it works (a trace load).
  static const std::atomic<bool>* Flag();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// One simulation of a batch (a profile of `dlsched compare`).
struct RunRequest {
  const core::ClusterSpec* cluster = nullptr;
  const config::WorkloadSpec* workload = nullptr;
  const engine::Engine* engine = nullptr;
  sim::SimOptions options;  // progress and stop are set by RunAll
  // Instead of `workload`: makes the run's jobs on the thread that runs
  // it, when it starts, and frees them when it ends, so a batch holds the
  // workloads of the runs in flight only (a sweep's cells, each its own
  // generated or scaled workload). `jobs`: how many it makes, for the
  // progress line. An error is the run's result.
  std::function<core::Result<config::WorkloadSpec>()> make_workload;
  size_t jobs = 0;
};

// The most runs at once (--threads): each run in flight holds its whole
// simulation, and a thread its stack; more than the cores only costs memory.
inline constexpr int kMaxThreads = 256;

struct BatchOptions {
  int threads = 1;             // runs at once (at least 1)
  bool show_progress = false;  // a progress line on stderr, refreshed a few times a second
};

// The batch of a command's --threads (0: one per core) and --quiet: the
// progress line shows on a terminal unless quiet.
BatchOptions Batch(int threads, bool quiet);

// Takes each result of RunAll on the thread that ran it, as soon as the run
// ends; called concurrently for different indices.
using OnResult = std::function<void(size_t index, core::Result<sim::SimResult>&& result)>;

// Runs every request, `threads` at a time; results in request order, so
// they do not depend on the number of threads. With a StopSignals alive, a
// signal stops every run after its current cycle (each result is then
// marked partial) and sets *interrupted. With `on_result`, each result
// goes to it instead of the returned vector (which then holds
// placeholders): a sweep of many runs writes each and lets it go.
// Threads that cannot be created leave their runs to those that could (or
// to the calling thread). Whatever a run or `on_result` throws on a thread
// (std::bad_alloc above all) stops the other runs and is rethrown here once
// every thread has ended: main reports it, as it does on its own thread.
std::vector<core::Result<sim::SimResult>> RunAll(std::span<RunRequest> runs,
                                                 const BatchOptions& options, bool* interrupted,
                                                 const OnResult& on_result = nullptr);

// One run of a batch as the progress line counts it.
struct RunProgress {
  int64_t jobs = 0;      // the run's jobs, known before it starts
  int64_t finished = 0;  // completed or failed so far
  bool done = false;     // the run has ended: every job of it counts as done
};

// Seconds until every run is done, runs not yet started included: the jobs
// not done at the rate jobs were done so far (all runs together, elapsed
// seconds since the batch began); nullopt before the first job is done.
std::optional<double> EtaSeconds(std::span<const RunProgress> runs, double elapsed);

// The progress line: "3/5 runs done, 41,234/300,000 jobs, simulated 2.4 d,
// 8,100 jobs/s, ETA 31 s", the jobs of every run counted, `simulated` the
// simulated time of the run furthest behind.
std::string ProgressLine(std::span<const RunProgress> runs, double simulated, double elapsed);

}  // namespace dlsched::cli
