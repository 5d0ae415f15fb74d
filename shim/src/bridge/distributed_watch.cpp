#include "bridge/distributed_watch.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "bridge/bridge_log.h"
#include "bridge/python_query.h"

namespace chakrashim::bridge {

void DistributedWatch::new_window() {
  std::lock_guard<std::mutex> lock(mutex_);
  last_answer_ = Clock::time_point{};
}

void DistributedWatch::set_on_answer(std::function<void(const std::string&)> on_answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_answer_ = std::move(on_answer);
}

void DistributedWatch::request() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (exiting_) return;
    ++requested_;
    stop_requested_ = false;
    if (!running_) {
      try {
        // Detached: it may be blocked in Python (waiting for the GIL) when
        // the process exits, and exit must never wait for it.
        std::thread([this] { run(); }).detach();
        running_ = true;
      } catch (...) {
        answered_ = requested_;  // nobody will answer
        return;
      }
    }
  }
  cv_.notify_all();
}

std::optional<std::string> DistributedWatch::latest() {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

bool DistributedWatch::wait_answered(std::chrono::milliseconds limit) {
  // Which thread waits (tests/e2e/test_window_end.py: never the training
  // thread, issue #34). Said before the lock: logging never runs under it.
  log_debug("waiting up to " + std::to_string(limit.count()) +
            " ms for torch.distributed's state on thread " + std::to_string(::syscall(SYS_gettid)) +
            " of process " + std::to_string(::getpid()));
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t target = requested_;
  return cv_.wait_for(lock, limit, [&] { return answered_ >= target || exiting_; });
}

void DistributedWatch::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  cv_.notify_all();
}

void DistributedWatch::stop_for_exit() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    exiting_ = true;
  }
  cv_.notify_all();
}

void DistributedWatch::run() {
  for (;;) {
    std::uint64_t target = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return exiting_ || stop_requested_ || requested_ > answered_; });
      // At most one question a second (each takes the GIL from the job): the
      // first of a window at once, later ones a second after the last.
      if (!exiting_ && !stop_requested_ && last_answer_ != Clock::time_point{})
        cv_.wait_until(lock, last_answer_ + kMinInterval, [&] { return exiting_ || stop_requested_; });
      // The window ended (what it still asked is dropped), or the process exits.
      if (exiting_ || stop_requested_ || requested_ <= answered_) {
        answered_ = requested_;
        running_ = false;
        cv_.notify_all();
        return;
      }
      target = requested_;
    }
    // No lock of ours is held while Python runs.
    std::optional<std::string> answer = distributed_info_json();
    std::function<void(const std::string&)> on_answer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_answer_ = Clock::now();
      if (answer) latest_ = answer;
      on_answer = on_answer_;
    }
    if (answer && on_answer) on_answer(*answer);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_ = target;
    }
    cv_.notify_all();
  }
}

}  // namespace chakrashim::bridge
