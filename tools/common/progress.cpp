#include "common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace chakrashim::tools {

bool progress_wanted(std::uint64_t total_bytes) {
  return total_bytes >= kProgressMinBytes && isatty(STDERR_FILENO) == 1;
}

void Ticker::start(std::chrono::milliseconds period, std::function<void(double elapsed_s)> tick) {
  thread_ = std::thread([this, period, tick = std::move(tick)] {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stop_; }))
      tick(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
}

bool Ticker::stop() {
  if (!thread_.joinable()) return false;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  return true;
}

Progress::Progress(std::uint64_t total_bytes, bool enabled, const char* verb)
    : total_(total_bytes), verb_(verb) {
  if (enabled && total_ > 0) ticker_.start(std::chrono::milliseconds(200), [this](double) { draw(); });
}

Progress::~Progress() {
  if (ticker_.stop()) std::fputs("\r\033[K", stderr);
}

void Progress::draw() {
  constexpr int kWidth = 30;
  const std::uint64_t done = std::min(done_.load(std::memory_order_relaxed), total_);
  const int filled = static_cast<int>(kWidth * done / total_);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = '\0';
  std::fprintf(stderr, "\r%s [%s] %3d%% of %llu MB", verb_, bar, static_cast<int>(100 * done / total_),
               static_cast<unsigned long long>(total_ >> 20));
  std::fflush(stderr);
}

std::string rank_progress_text(const char* verb, std::size_t done, std::size_t total, double elapsed_s, int width) {
  std::string bar;
  if (width > 0) {
    const int filled = total == 0 ? width : static_cast<int>(static_cast<std::size_t>(width) * std::min(done, total) / total);
    bar = " [" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.') + "]";
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s%s %zu/%zu ranks, %.1f s, %.1f ranks/s", verb, bar.c_str(), done, total, elapsed_s,
                elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0);
  return buf;
}

RankProgress::Mode RankProgress::mode_for_stderr() { return isatty(STDERR_FILENO) == 1 ? Mode::bar : Mode::lines; }

RankProgress::RankProgress(std::size_t total, Mode mode, const char* verb) : total_(total), mode_(mode), verb_(verb) {
  if (mode_ == Mode::none || total_ == 0) return;
  // A bar is drawn at once and kept fresh; plain lines only for long runs.
  if (mode_ == Mode::bar) draw(0);
  const std::chrono::milliseconds period =
      mode_ == Mode::bar ? std::chrono::milliseconds(200) : std::chrono::seconds(kPlainEverySeconds);
  ticker_.start(period, [this](double elapsed_s) { draw(elapsed_s); });
}

RankProgress::~RankProgress() {
  if (ticker_.stop() && mode_ == Mode::bar) std::fputs("\r\033[K", stderr);
}

void RankProgress::draw(double elapsed_s) {
  const std::string text = rank_progress_text(verb_, done_.load(std::memory_order_relaxed), total_, elapsed_s,
                                              mode_ == Mode::bar ? 30 : 0);
  if (mode_ == Mode::bar) std::fprintf(stderr, "\r\033[K%s", text.c_str());
  else std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace chakrashim::tools
