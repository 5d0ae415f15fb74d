// The core's one global: what this process decided at start, and the path
// from "libtorch appeared" to an attached bridge.
//
// Lifecycle (each arrow happens at most once):
//   inert                      CHAKRA_PROFILE off, or not a target
//   watching -> attached       a target: the bridge loads once libtorch does
//   watching -> refused        the bridge refused (another torch) or failed
//   reporting -> inert         the configuration was bad: its lines are
//                              printed once, when libtorch appears, i.e. in
//                              processes that would have been targets
//
// Threads: start() runs once, on the thread of the first dlopen in a Python
// process (the stub's load_core guarantees once). on_dlopen() runs on any
// thread, inside dlopen's caller, and only reads atomics. The pending call
// runs on Python's main thread with the GIL.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "chakrashim/bridge_abi.h"
#include "config/config.h"
#include "preload/os_seams.h"
#include "preload/stub_abi.h"
#include "config/identity.h"

namespace chakrashim::preload {

enum class State : int { not_started = 0, inert, watching, reporting, attached, refused };

class Session {
 public:
  // The process-wide instance. Never destroyed: dlopen can run during exit,
  // after static destructors, and must still find a valid object.
  static Session& instance();

  // Decides what this process is, from what the stub saw at load (the
  // environment, the working directory, its own folder).
  void start(const chakrashim_stub_view& view);
  // Called by the dlopen wrapper on every dlopen, before the real one.
  // It only schedules work; it never loads or probes anything itself.
  void on_dlopen();

  State state() const { return state_.load(std::memory_order_acquire); }

 private:
  static int pending_call(void*);
  void after_libtorch_seen();
  void attach_bridge();
  void fill_capture_config();

  std::atomic<State> state_{State::not_started};
  std::atomic<bool> call_scheduled_{false};
  PythonApi python_;
  std::string own_dir_;                           // the bridge lies beside us
  void* (*real_dlopen_)(const char*, int) = nullptr;
  std::optional<config::Config> config_;
  target::Identity identity_;
  std::vector<std::string> config_errors_;  // printed once, as errors
  std::vector<std::string> warnings_;       // printed once, when torch appears
  target::ProcessInfo process_;
  // The launch's identity (Identity::run_id), or for a lone process with no
  // launcher "pid:PID@HOST": a second run's files then never pass for the
  // first's (issue #49).
  std::string run_id_;
  chakrashim_capture_config capture_config_{};
  chakrashim_core_api core_api_{};
  chakrashim_bridge_api bridge_api_{};
};

}  // namespace chakrashim::preload
