// torch.distributed's state, asked on a thread of ours (python_query.h says
// why never on a thread of the job's). The stepping thread only requests an
// answer at step boundaries (a flag and a wake-up) and never waits for one
// (issue #34: a wait at the window's end cost every rank 50 ms per window);
// the watch thread takes the GIL, asks, keeps the answer, and hands it to
// `on_answer` (the capture writes the ET's process-group node from there).
// Started with a window's first request (the step before the window, where
// the capture prepares it) and ended at the window's end (stop, or finish
// when nothing was ever answered), so that no thread of ours outlives the
// window; absent in forked children; it never asks once the process is
// exiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace chakrashim::bridge {

class DistributedWatch {
 public:
  // `on_answer(json)` runs on the watch thread, holding no lock of ours.
  void set_on_answer(std::function<void(const std::string&)> on_answer);
  // Asks for a fresh answer; never blocks (starts the thread at first use).
  // Answers come at most once a second, the first of a window at once.
  void request();
  // A window opens: its first question is answered at once.
  void new_window();
  // Hands the latest answer to `on_answer` again, at once, on the watch
  // thread, without asking Python (the ET began recording: its process-group
  // node is written from what is known). Never blocks.
  void replay();
  // The latest answer, if any (kept from window to window).
  std::optional<std::string> latest();
  // Whether any question was ever answered (torch.distributed may have had
  // nothing to say): false only before the first answer of the process.
  bool ever_answered();
  // Waits until every request made so far is answered, or `limit` passed.
  // Only from a thread that does not hold the GIL (the watch needs it).
  bool wait_answered(std::chrono::milliseconds limit);
  // The window ended: the thread ends; what is still asked is dropped.
  void stop();
  // The window ended before any answer came: what is asked is answered (at
  // once, ignoring the one-a-second pace), then the thread ends, unless a
  // new request came meanwhile. For the writer thread to wait_answered on.
  void finish();
  // The process is exiting: no more questions to Python.
  void stop_for_exit();
  // Python's atexit callbacks run (the calling thread holds the GIL): no
  // more questions, and one under way is let finish first, the GIL released
  // meanwhile (bounded), so that the watch thread is never inside Python,
  // nor waiting for its GIL, when the finalization begins: CPython ends such
  // a thread with pthread_exit, unwinding our frames (ASan reported that
  // unwinding as a stack overflow in CI's variant, 2026-12-07).
  void stop_before_python_finalizes();

 private:
  void run();
  // mutex_ held: a new question or replay; starts the thread if needed.
  // False if it could not start (nobody will answer).
  // Starts the thread if it is not running; false if there is none (then
  // `no_thread` says why, the first time only).
  bool start_locked(std::string& no_thread);
  static void say_no_thread(const std::string& why);

  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void(const std::string&)> on_answer_;
  std::optional<std::string> latest_;
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kMinInterval{1000};
  Clock::time_point last_answer_{};  // the watch thread's (and new_window's)
  std::uint64_t requested_ = 0;
  std::uint64_t answered_ = 0;
  bool running_ = false;
  bool stop_requested_ = false;
  bool finish_ = false;   // end once what is asked is answered
  bool replay_ = false;   // hand latest_ to on_answer_ now
  bool ever_answered_ = false;
  bool exiting_ = false;
  bool no_thread_ = false;  // a thread could not be started: never asked again
  bool waiting_for_question_ = false;  // the watch thread waits for requested_ (request wakes it)
  bool in_query_ = false;  // the watch thread is in distributed_info_json (or about to be)
};

}  // namespace chakrashim::bridge
