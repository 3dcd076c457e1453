#include "dlsched/cli/runs.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace dlsched::cli {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnStopSignal(int sig) {
  g_stop.store(true);
  // A second Ctrl-C ends the process the usual way.
  ::signal(sig, SIG_DFL);
}

std::string Duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

}  // namespace

StopSignals::StopSignals() {
  g_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

bool StopSignals::Stopped() { return g_stop.load(); }

const std::atomic<bool>* StopSignals::Flag() { return &g_stop; }

namespace {

// Jobs done, of all: a finished run's jobs all count.
std::pair<int64_t, int64_t> JobsDone(std::span<const RunProgress> runs) {
  int64_t done = 0;
  int64_t all = 0;
  for (const RunProgress& r : runs) {
    all += r.jobs;
    done += r.done ? r.jobs : std::min(r.finished, r.jobs);
  }
  return {done, all};
}

// A request's run, its jobs made first when it makes them.
core::Result<sim::SimResult> RunOne(const RunRequest& r) {
  if (!r.make_workload) return sim::Simulate(*r.cluster, *r.workload, *r.engine, r.options);
  DLSCHED_TRY_LET(made, r.make_workload());
  return sim::Simulate(*r.cluster, *made, *r.engine, r.options);
}

// `threads` threads, each running `worker`. A thread that cannot be
// created (no memory for its stack or its state, a limit on threads:
// std::system_error or std::bad_alloc) leaves its runs to the others;
// escaping here, it would end the process with the threads already started
// unjoined.
template <typename Worker>
std::vector<std::thread> StartThreads(int threads, const Worker& worker) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  try {
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  } catch (const std::system_error&) {
  } catch (const std::bad_alloc&) {
  }
  return pool;
}

// The progress line on stderr, over every run's jobs, those not started
// too (the ETA covers them all); `counts` has a place for each run.
void ShowProgress(std::span<const RunRequest> runs, const std::deque<sim::Progress>& progress,
                  std::vector<RunProgress>& counts, double elapsed) {
  double simulated = -1;
  for (size_t i = 0; i < runs.size(); ++i) {
    const sim::Progress& p = progress[i];
    const size_t jobs = runs[i].workload ? runs[i].workload->jobs.size() : runs[i].jobs;
    counts[i] = {static_cast<int64_t>(jobs), p.jobs_finished.load(), p.done.load()};
    if (!p.done && p.jobs_total > 0) {
      simulated = simulated < 0 ? p.now.load() : std::min(simulated, p.now.load());
    }
  }
  std::fprintf(stderr, "\r\033[K%s",
               ProgressLine(counts, std::max(simulated, 0.0), elapsed).c_str());
  std::fflush(stderr);
}

}  // namespace

std::optional<double> EtaSeconds(std::span<const RunProgress> runs, double elapsed) {
  const auto [done, all] = JobsDone(runs);
  if (done <= 0 || elapsed <= 0) return std::nullopt;
  return static_cast<double>(all - done) * elapsed / static_cast<double>(done);
}

std::string ProgressLine(std::span<const RunProgress> runs, double simulated, double elapsed) {
  const auto [done, all] = JobsDone(runs);
  const int runs_done = static_cast<int>(
      std::count_if(runs.begin(), runs.end(), [](const auto& r) { return r.done; }));
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  const std::optional<double> eta = EtaSeconds(runs, elapsed);
  return fmt::format("{}/{} runs done, {}/{} jobs, simulated {}, {:.0f} jobs/s, ETA {}", runs_done,
                     runs.size(), done, all, Duration(simulated), rate,
                     eta ? Duration(*eta) : std::string("?"));
}

BatchOptions Batch(int threads, bool quiet) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return {.threads = threads, .show_progress = !quiet && ::isatty(2) == 1};
}

std::vector<core::Result<sim::SimResult>> RunAll(std::span<RunRequest> runs,
                                                 const BatchOptions& options, bool* interrupted,
                                                 const OnResult& on_result) {
  if (runs.empty()) return {};
  std::deque<sim::Progress> progress(runs.size());
  std::vector<core::Result<sim::SimResult>> results(runs.size(), core::MakeError("not run"));
  std::atomic<size_t> next{0};
  std::atomic<int> finished{0};
  std::mutex mu;
  std::condition_variable all_done;
  // The first exception of any thread, std::bad_alloc above all: it stops
  // the other runs (after their current cycle) and is rethrown here, on
  // the calling thread, once every thread has ended, where main reports
  // it ("dlsched: out of memory", exit code 1). Escaping a thread, it
  // would end the process with std::terminate.
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lock(mu);
    if (!failure) failure = std::move(e);
    failed.store(true);
    g_stop.store(true);
    all_done.notify_all();
  };
  auto worker = [&] {
    try {
      for (size_t i = next++; i < runs.size() && !failed.load(); i = next++) {
        RunRequest& r = runs[i];
        r.options.progress = &progress[i];
        r.options.stop = &g_stop;
        core::Result<sim::SimResult> result = RunOne(r);
        if (on_result) {
          on_result(i, std::move(result));
        } else {
          results[i] = std::move(result);
        }
        progress[i].done = true;
        std::lock_guard lock(mu);
        ++finished;
        all_done.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
  };
  const int threads =
      std::clamp<int>(std::min(options.threads, kMaxThreads), 1, static_cast<int>(runs.size()));
  std::vector<std::thread> pool;
  // One run with nothing to show needs no thread of its own: it runs here,
  // in the memory the loading left free.
  if (threads > 1 || options.show_progress) pool = StartThreads(threads, worker);
  if (pool.empty()) {
    worker();
    if (failure) std::rethrow_exception(failure);
    *interrupted = g_stop.load();
    return results;
  }

  try {
    const auto begin = std::chrono::steady_clock::now();
    std::vector<RunProgress> counts(runs.size());
    std::unique_lock lock(mu);
    while (finished < static_cast<int>(runs.size()) && !failed) {
      all_done.wait_for(lock, std::chrono::milliseconds(250));
      if (!options.show_progress || failed) continue;
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      ShowProgress(runs, progress, counts, elapsed);
    }
  } catch (...) {
    // Out of memory here too: the threads still run and must be joined.
    fail(std::current_exception());
  }
  for (auto& t : pool) t.join();
  if (options.show_progress) std::fputs("\r\033[K", stderr);
  if (failure) std::rethrow_exception(failure);
  *interrupted = g_stop.load();
  return results;
}

}  // namespace dlsched::cli
