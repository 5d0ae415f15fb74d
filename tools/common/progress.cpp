#include "common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace chakrashim::tools {

bool progress_wanted(std::uint64_t total_bytes) {
  return total_bytes >= kProgressMinBytes && isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::uint64_t total_bytes, bool enabled, const char* verb)
    : total_(total_bytes), verb_(verb) {
  if (!enabled || total_ == 0) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) draw();
  });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::fputs("\r\033[K", stderr);
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

}  // namespace chakrashim::tools
