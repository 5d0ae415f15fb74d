// One window's output files: where they go, claiming them at arm, and
// writing them in the background at disarm (docs/design.md sections 1 and 4.6).
// The training thread only hands data over; JSON, validation, fsync and
// renames happen on the writer thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "chakrashim/bridge_abi.h"
#include "bridge/et_recorder.h"
#include "bridge/span_store.h"
#include "chakrashim/events.h"
#include "bridge/window_folders.h"
#include "files/output_paths.h"
#include "writers/kineto_trace_writer.h"

namespace chakrashim::bridge {

// Everything the writer needs, handed over whole.
struct WindowOutput {
  files::Layout layout;
  bool host = false;    // an ET is to be kept: torch's .partial, or et_records
  bool et_native = false;  // the ET is et_records, written here (native recorder)
  EtRecords et_records;
  // Each op's inputs as Kineto writes them on its cpu_op, from the native
  // ET (filled as the ET is written, read by the device trace's writer).
  writers::InputsByRfId inputs;
  bool device = false;  // a device trace is to be written
  bool overwrite = false;
  bool gzip = false;  // the device trace as rank-R.json.gz
  std::uint64_t memory_bytes = 0;  // what the window's records held (the budget's count)
  std::vector<ThreadSpans> spans;
  std::vector<StepSpan> steps;
  // The last steps before the window, which ran unrecorded (durations).
  std::vector<std::int64_t> unrecorded_step_ns;
  DeviceCapture device_capture;  // joined and written by the writer thread
  writers::TraceHeader header;
  writers::TraceTrailer trailer;
  std::string exe_name;
  std::int64_t pid = 0;
  // The stepping thread's RecordFunction thread id (the native ET's "tid"):
  // where the process-group node goes if the writer adds it.
  std::uint64_t stepping_rf_tid = 0;
  // Set when torch.distributed's state was not known at the window's end
  // (no answer yet in this process): the writer thread asks it, with a
  // bounded wait, before it writes; the training thread never waits for it
  // (issue #34). Returns the JSON (python_query.h), or nullopt.
  std::function<std::optional<std::string>()> await_distributed;
};

// torch.distributed's state (python_query.h's JSON) into the device trace's
// distributedInfo and the metadata's world size.
void set_distributed_info(WindowOutput& output, const std::string& json);

// A writer thread's scheduling before it lowered it (trace_files.cpp).
struct WriterPriority {
  pid_t tid = 0;  // 0: none lowered
  int policy = 0;
  int nice = 0;
};

// The background writer: a thread per window. With repeated or triggered
// windows (docs/on-demand.md) one window's files may still be being written
// when the next window ends; wait() waits for all of them.
class TraceWriterThread {
 public:
  ~TraceWriterThread();
  void start(WindowOutput output);
  // Waits until the files are written or `timeout` passed; false on timeout.
  bool wait(std::chrono::milliseconds timeout);
  bool wait(std::uint64_t seconds) { return wait(std::chrono::milliseconds(seconds * 1000)); }
  // The windows handed over and not written yet: what a person waiting at
  // exit is told.
  struct Pending {
    std::string steps;  // "3-5"
    std::size_t ops = 0;
    std::uint64_t memory_bytes = 0;
    std::vector<std::string> partials;  // the .partial files being written
  };
  std::vector<Pending> pending();
  // The job is ending (exit, a terminating signal): a writer that lowered
  // its priority while the job trained on gets the job's back, and later
  // windows keep it; nothing of the job's competes any more.
  void raise_priority();

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  int running_ = 0;  // windows being written
  std::uint64_t next_ticket_ = 0;  // windows handed over, in order
  std::uint64_t written_ = 0;      // windows done, in order
  std::vector<std::pair<std::uint64_t, Pending>> pending_;  // by ticket
  std::thread thread_;
  // The thread running at the lowest priority now (tid 0 if none), and
  // what to put back.
  std::mutex priority_mutex_;
  WriterPriority lowered_;
  std::atomic<bool> full_speed_{false};
};

// Writes both files now, on the calling thread; logs one summary line.
void write_window(WindowOutput& output);

}  // namespace chakrashim::bridge
