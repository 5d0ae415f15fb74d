// Torch's Execution Trace observer (torch::profiler::impl add / enable /
// disable / remove) behind our own state, so that no call ever happens out
// of order (DESIGN.md section 4.3):
//   - enable or disable before add, or after remove, crashes torch;
//   - add silently joins an observer the user already has;
//   - add fails half-way on an unwritable path (we pre-check it);
//   - its stream ignores write errors (the publisher validates the file).
// Torch logs a warning line on every enable and disable; those calls run
// with torch's log level raised so the job's stderr stays as it was.
#pragma once

#include <memory>
#include <string>

namespace chakrashim::bridge {

class EtObserver {
 public:
  // True when an ET observer already exists in the process (the user's own
  // ExecutionTraceObserver): we must not join it.
  static bool someone_else_observing();

  // Registers the observer writing to `partial_path` (disabled). False, with
  // `error` set, if torch could not open the file.
  bool add(const std::string& partial_path, std::string& error);
  void enable();
  void disable();
  // Disables if needed and finalizes the file (root node and finish_ts).
  void remove();

  bool added() const { return state_ == State::disabled || state_ == State::enabled; }
  bool enabled() const { return state_ == State::enabled; }
  // The descriptor of torch's output stream, found after add (-1 if not):
  // a forked child points it at /dev/null.
  int output_fd() const { return fd_; }

 private:
  enum class State { none, disabled, enabled, removed };
  State state_ = State::none;
  int fd_ = -1;
  // The observer torch deletes at remove, kept alive (see remove()).
  std::shared_ptr<void> keep_alive_;
};

}  // namespace chakrashim::bridge
