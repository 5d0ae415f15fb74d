#include "bridge/distributed_watch.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "bridge/bridge_log.h"
#include "bridge/python_api.h"
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
  std::string no_thread;
  bool started = false;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (exiting_) return;
    ++requested_;
    started = start_locked(no_thread);
    // Woken only where it waits for a question: asked at every step of a
    // window, a wake-up each time cost the stepping thread a futex call and
    // the other core a context switch, though the watch answers at most
    // once a second (about 65 us a step of mlp_loop.py on a 2-core VM:
    // spans alone 349 -> 284 us, plain 207). Anywhere else it finds the
    // question when it next looks (under this lock: none is lost).
    wake = waiting_for_question_;
  }
  if (!started) {
    if (!no_thread.empty()) say_no_thread(no_thread);  // said outside our lock
    return;
  }
  if (wake) cv_.notify_all();
}

void DistributedWatch::say_no_thread(const std::string& why) {
  log_warn("cannot start the thread that asks torch.distributed for its process groups (" + why +
           "): this process's traces leave them out");
}

void DistributedWatch::replay() {
  std::string no_thread;
  bool started = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (exiting_ || !latest_) return;
    replay_ = true;
    started = start_locked(no_thread);
  }
  if (!started) {
    if (!no_thread.empty()) say_no_thread(no_thread);
    return;
  }
  cv_.notify_all();
}

bool DistributedWatch::start_locked(std::string& no_thread) {
  stop_requested_ = false;
  finish_ = false;
  if (running_) return true;
  if (no_thread_) {
    answered_ = requested_;  // nobody will answer
    replay_ = false;
    return false;
  }
  try {
    // Detached: it may be blocked in Python (waiting for the GIL) when
    // the process exits, and exit must never wait for it.
    std::thread([this] { run(); }).detach();
    running_ = true;
    return true;
  } catch (const std::exception& e) {
    // No thread (a pids-limited cgroup): given up for the process, said
    // once (by the caller, outside the lock), not tried again at every step.
    no_thread_ = true;
    no_thread = e.what();
    answered_ = requested_;  // nobody will answer
    replay_ = false;
    return false;
  }
}

bool DistributedWatch::ever_answered() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ever_answered_;
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

void DistributedWatch::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finish_ = true;
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

void DistributedWatch::stop_before_python_finalizes() {
  std::unique_lock<std::mutex> lock(mutex_);
  exiting_ = true;
  cv_.notify_all();
  if (!in_query_) return;
  const PythonApi& py = python();
  if (!py.save_thread || !py.restore_thread || !py.gil_check || py.gil_check() == 0) return;
  lock.unlock();
  void* state = py.save_thread();
  lock.lock();
  // A question takes a fraction of a millisecond once it has the GIL.
  const bool done = cv_.wait_for(lock, std::chrono::seconds(2), [&] { return !in_query_; });
  lock.unlock();
  py.restore_thread(state);
  log_debug(done ? "Python finalizes: the torch.distributed question under way was let finish"
                 : "Python finalizes: the torch.distributed question under way did not finish in 2 s");
}

void DistributedWatch::run() {
  for (;;) {
    std::uint64_t target = 0;
    std::optional<std::string> replay;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto ends = [&] { return exiting_ || stop_requested_ || (finish_ && requested_ <= answered_); };
      waiting_for_question_ = true;
      cv_.wait(lock, [&] { return ends() || replay_ || requested_ > answered_; });
      waiting_for_question_ = false;
      // At most one question a second (each takes the GIL from the job): the
      // first of a window at once, later ones a second after the last; a
      // finishing window's question at once (the writer waits for it).
      if (!ends() && !replay_ && !finish_ && last_answer_ != Clock::time_point{})
        cv_.wait_until(lock, last_answer_ + kMinInterval,
                       [&] { return ends() || replay_ || finish_; });
      // The window ended (what it still asked is dropped), or the process exits.
      if (ends()) {
        answered_ = requested_;
        running_ = false;
        replay_ = false;
        finish_ = false;
        cv_.notify_all();
        return;
      }
      if (replay_) {
        replay_ = false;
        replay = latest_;
      } else if (requested_ > answered_) {
        target = requested_;
        in_query_ = true;  // set under the lock that exiting_ is set under
      } else {
        continue;  // woken early by finish(), nothing asked
      }
    }
    if (replay) {
      std::function<void(const std::string&)> on_answer;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        on_answer = on_answer_;
      }
      if (on_answer) on_answer(*replay);
      continue;
    }
    // No lock of ours is held while Python runs.
    std::optional<std::string> answer = distributed_info_json();
    std::function<void(const std::string&)> on_answer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_query_ = false;  // stop_before_python_finalizes waits for this
      last_answer_ = Clock::now();
      ever_answered_ = true;
      if (answer) latest_ = answer;
      on_answer = on_answer_;
    }
    cv_.notify_all();
    if (answer && on_answer) on_answer(*answer);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_ = std::max(answered_, target);
    }
    cv_.notify_all();
  }
}

}  // namespace chakrashim::bridge
