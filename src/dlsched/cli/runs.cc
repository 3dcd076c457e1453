#include "dlsched/cli/runs.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
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
  auto worker = [&] {
    for (size_t i = next++; i < runs.size(); i = next++) {
      RunRequest& r = runs[i];
      r.options.progress = &progress[i];
      r.options.stop = &g_stop;
      auto result = sim::Simulate(*r.cluster, *r.workload, *r.engine, r.options);
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
  };
  const int threads = std::clamp<int>(options.threads, 1, static_cast<int>(runs.size()));
  // One run with nothing to show needs no thread of its own: it runs here,
  // in the memory the loading left free.
  if (threads == 1 && !options.show_progress) {
    worker();
    *interrupted = g_stop.load();
    return results;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);

  const auto begin = std::chrono::steady_clock::now();
  std::vector<RunProgress> counts(runs.size());
  {
    std::unique_lock lock(mu);
    while (finished < static_cast<int>(runs.size())) {
      all_done.wait_for(lock, std::chrono::milliseconds(250));
      if (!options.show_progress) continue;
      // Every run's jobs, those not started too: the ETA covers them all.
      double simulated = -1;
      for (size_t i = 0; i < runs.size(); ++i) {
        const sim::Progress& p = progress[i];
        counts[i] = {static_cast<int64_t>(runs[i].workload->jobs.size()), p.jobs_finished.load(),
                     p.done.load()};
        if (!p.done && p.jobs_total > 0) {
          simulated = simulated < 0 ? p.now.load() : std::min(simulated, p.now.load());
        }
      }
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      std::fprintf(stderr, "\r\033[K%s",
                   ProgressLine(counts, std::max(simulated, 0.0), elapsed).c_str());
      std::fflush(stderr);
    }
  }
  for (auto& t : pool) t.join();
  if (options.show_progress) std::fputs("\r\033[K", stderr);
  *interrupted = g_stop.load();
  return results;
}

}  // namespace dlsched::cli
