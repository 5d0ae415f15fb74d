// A progress line on stderr while large inputs are read: only when stderr is
// a terminal and the input is large, so logs and tests never see it. A
// background thread redraws it from a byte counter the readers add to.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace chakrashim::tools {

// Inputs below this finish before a bar would help.
inline constexpr std::uint64_t kProgressMinBytes = 50ull * 1024 * 1024;

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
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace chakrashim::tools
