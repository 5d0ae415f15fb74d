// On-demand capture's side of the files (docs/on-demand.md): a thread of
// ours that, once a second, publishes the step (on the publishing rank) and
// looks for new trigger files in TRACE_DIR/.chakrashim/JOB/.
//
// Why a thread, not a look at step ends: on a shared filesystem (NFS,
// Lustre) one readdir or rename can take tens of milliseconds, and a step
// that pays it is a distorted step in someone's trace or a straggler in a
// collective. The training thread only stores the step (one relaxed store)
// and reads one flag; everything that touches the disk happens here.
//
// Started at the process's first completed optimizer step, so a process
// that never steps (a launcher, a data-loader worker that imported torch)
// never looks. A forked child has no copy of the thread, and the Capture
// turns itself off there before it could ask. The thread is detached and
// its object is never destroyed (it is the Capture's, which lives for the
// whole process).
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "files/control_dir.h"
#include "files/on_demand_files.h"

namespace chakrashim::bridge {

class TriggerWatch {
 public:
  struct Params {
    std::string trace_dir;      // CHAKRA_TRACE_DIR
    std::string job_id;         // the folder is TRACE_DIR/.chakrashim/JOB
    bool publisher = false;     // this rank writes step.json
    window::StepNote note;      // the note's fixed fields (job, rank, host, ...)
    std::chrono::milliseconds period{1000};
  };

  // Starts the thread; false (one line said) if it cannot.
  bool start(Params params);
  bool started() const { return started_.load(std::memory_order_relaxed); }

  // From the stepping thread, at each step end: the step in progress now.
  void note_step(std::uint64_t step) { step_.store(step, std::memory_order_relaxed); }
  // New triggers have arrived (one relaxed load).
  bool has_triggers() const { return has_triggers_.load(std::memory_order_relaxed); }
  // The triggers found since the last call, each with its file name.
  std::vector<std::pair<std::string, window::Trigger>> take();
  // This rank captures nothing for a requested window: the thread writes
  // missed-S-rank-R.json at once (for `chakrashim trigger --wait`).
  void note_missed(window::Missed missed);

  // At exit: the thread stops looking, and, where this process owns the
  // control folder, removes its files and the folder (no job publishes
  // here any more). Waits for that at most `limit`; no lock of ours is held
  // across the thread's file I/O, so a hung filesystem costs the exit
  // `limit` and nothing more.
  void stop_for_exit(std::chrono::milliseconds limit);

 private:
  void run();
  // The thread's: the control folder open and still there (made again by
  // the publishing rank if it went away). False while it is not usable.
  bool ensure_dir();
  void publish(std::chrono::steady_clock::time_point now);
  // Another live process (a child that trains under the same variables, the
  // previous owner) publishes this job's step in the folder.
  bool another_publisher(std::chrono::steady_clock::time_point now);
  void look_for_triggers(bool first_look);
  void write_missed();
  // At exit, by the folder's owner: the job's control files and folders.
  void remove_control_files();

  Params params_;
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> step_{0};
  std::atomic<bool> has_triggers_{false};

  std::mutex mutex_;  // guards the fields below; held only briefly, never across I/O
  std::condition_variable cv_;
  bool stopping_ = false;
  bool finished_ = false;  // the thread has done its exit work
  std::vector<std::pair<std::string, window::Trigger>> inbox_;
  std::vector<window::Missed> outbox_;

  // The thread's own (no lock): the folder, what it saw and published.
  files::ControlDir dir_;
  // This process made the folder (or took it over from a publisher that is
  // gone): only the owner removes it at exit, so a child that trains under
  // the same variables never deletes its parent's folder.
  bool owner_ = false;
  std::set<std::string> seen_;
  std::optional<std::uint64_t> published_step_;
  std::chrono::steady_clock::time_point published_at_{};
  std::chrono::steady_clock::time_point other_checked_at_{};
  bool other_publishes_ = false;
  std::uint64_t rate_step_ = 0;
  std::chrono::steady_clock::time_point rate_at_{};
  double steps_per_s_ = 0;
  bool publish_failed_said_ = false;
  bool dir_failed_said_ = false;
  bool other_said_ = false;
};

}  // namespace chakrashim::bridge
