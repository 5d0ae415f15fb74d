// A thread that its owner joins on every way out of the owner's scope.
//
// std::thread's destructor terminates the process while the thread is still
// joinable, which is what an exception between its start and its join()
// leaves (issue #34: convert's reader threads while link_rank or plan_rank
// throws). std::jthread joins there, but a thread that waits for input the
// unwound scope would have given (convert's pipe reader) would wait forever:
// `unblock` runs first, and only on that way out; a join() that the code
// reaches itself has given the thread its input's end already.
//
// What the body throws does not end the process either (an exception leaving
// a std::thread's function calls std::terminate): join() rethrows it.
#pragma once

#include <exception>
#include <functional>
#include <thread>
#include <utility>

namespace chakrashim::tools {

class JoiningThread {
 public:
  template <class Body>
  explicit JoiningThread(Body body, std::function<void()> unblock = {})
      : unblock_(std::move(unblock)), thread_([this, body = std::move(body)]() mutable {
          try {
            body();
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}

  JoiningThread(const JoiningThread&) = delete;
  JoiningThread& operator=(const JoiningThread&) = delete;

  // The scope is left before join(): by an exception, as a rule. The body's
  // own exception, if any, is dropped: one is already on its way.
  ~JoiningThread() {
    if (!thread_.joinable()) return;
    if (unblock_) unblock_();
    thread_.join();
  }

  // Waits for the body; rethrows what it threw.
  void join() {
    thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::function<void()> unblock_;
  std::exception_ptr error_;  // written by the thread, read after its join
  std::thread thread_;        // last: started once the members above exist
};

}  // namespace chakrashim::tools
