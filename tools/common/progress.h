// A progress line on stderr while large inputs are read: only when stderr is
// a terminal and the input is large, so logs and tests never see it. A
// background thread redraws it from a byte counter the readers add to.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/rank_pool.h"

namespace chakrashim::tools {

// Inputs below this finish before a bar would help.
inline constexpr std::uint64_t kProgressMinBytes = 50ull * 1024 * 1024;

// The redraw loop of both bars: a thread that calls `tick` with the seconds
// since start() every `period` until stop().
class Ticker {
 public:
  Ticker() = default;
  ~Ticker() { stop(); }
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  void start(std::chrono::milliseconds period, std::function<void(double elapsed_s)> tick);
  // Stops and joins the thread; false when none was started.
  bool stop();

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// True when a bar should be drawn for `total_bytes` on stderr.
bool progress_wanted(std::uint64_t total_bytes);

class Progress {
 public:
  // Draws nothing unless `enabled`; `verb` opens the line ("checking").
  Progress(std::uint64_t total_bytes, bool enabled, const char* verb = "checking");
  ~Progress();  // stops and erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  std::atomic<std::uint64_t>* counter() { return &done_; }

 private:
  void draw();

  std::uint64_t total_;
  const char* verb_;
  std::atomic<std::uint64_t> done_{0};
  Ticker ticker_;  // last: stopped before the members it reads go
};

// Progress over a count of ranks, for `link`: on a terminal, a bar on stderr
// (ranks done / total, elapsed, rate), redrawn in place and erased at the
// end; elsewhere, for runs long enough to wonder about, a plain line every
// kPlainEvery, which logs keep readably. Nothing when disabled.
class RankProgress {
 public:
  static constexpr int kPlainEverySeconds = 10;
  enum class Mode { none, bar, lines };
  // The mode for stderr as it is: bar on a terminal, lines otherwise.
  static Mode mode_for_stderr();

  RankProgress(std::size_t total, Mode mode, const char* verb = "linking");
  ~RankProgress();  // stops; erases the bar
  RankProgress(const RankProgress&) = delete;
  RankProgress& operator=(const RankProgress&) = delete;

  void done_one() { done_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void draw(double elapsed_s);

  std::size_t total_;
  Mode mode_;
  const char* verb_;
  std::atomic<std::size_t> done_{0};
  Ticker ticker_;  // last: stopped before the members it reads go
};

// "linking [##########..........] 256/512 ranks, 3.1 s, 82.6 ranks/s"
std::string rank_progress_text(const char* verb, std::size_t done, std::size_t total, double elapsed_s, int width);

// A capture's ranks worked through as link and convert do: work(job) for
// every job on up to `threads` threads, counted by a RankProgress on stderr
// (none when `quiet`); the results in job order, and the seconds it took.
template <class Result>
struct RankRun {
  std::vector<Result> results;
  double seconds = 0;
};

template <class Job, class Work>
auto run_ranks(const std::vector<Job>& jobs, std::size_t threads, bool quiet, const char* verb, Work work)
    -> RankRun<std::invoke_result_t<Work&, const Job&>> {
  RankRun<std::invoke_result_t<Work&, const Job&>> run;
  run.results.resize(jobs.size());
  const auto start = std::chrono::steady_clock::now();
  {
    RankProgress progress(jobs.size(), quiet ? RankProgress::Mode::none : RankProgress::mode_for_stderr(), verb);
    for_each_index(jobs.size(), threads, [&](std::size_t i) {
      run.results[i] = work(jobs[i]);
      progress.done_one();
    });
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace chakrashim::tools
