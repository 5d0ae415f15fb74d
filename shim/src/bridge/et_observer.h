// Torch's Execution Trace observer (torch::profiler::impl add / enable /
// disable / remove) behind our own state, so that no call ever happens out
// of order (docs/design.md section 4.3):
//   - enable or disable before add, or after remove, crashes torch;
//   - add silently joins an observer the user already has;
//   - add fails half-way on an unwritable path (we pre-check it);
//   - its stream ignores write errors (the publisher validates the file).
// Torch logs a warning line on every enable and disable; those calls run
// with torch's log level raised so the job's stderr stays as it was.
#pragma once

#include <memory>
#include <string>
#include <vector>

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
  // The descriptors open on torch's output file, found after add by what
  // the file is (device and inode), never by its name: a relative, `../` or
  // symlinked trace folder never matches /proc's resolved links. A forked
  // child points them at /dev/null. Empty if none was found.
  const std::vector<int>& output_fds() const { return fds_; }

  // In a forked child (pthread_atfork child handler): torch's callback must
  // not run at all there. If another thread of the parent was inside it at
  // fork time, it held the observer's mutex, and the child's first op would
  // block on that mutex forever. Disabling turns torch's state to disabled
  // (its callback tests the state before it locks) and disables its
  // RecordFunction callback. Only a flag and torch's callback table are
  // touched; torch's log line is kept quiet.
  void silence_in_forked_child();

 private:
  enum class State { none, disabled, enabled, removed };
  State state_ = State::none;
  std::vector<int> fds_;
  // The observer torch deletes at remove, kept alive (see remove()).
  // Every observer this process removed (one per window with torch's
  // recorder): a few hundred bytes each, for the rest of the process.
  std::vector<std::shared_ptr<void>> keep_alive_;
};

}  // namespace chakrashim::bridge
