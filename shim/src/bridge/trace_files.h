// One window's output files: where they go, claiming them at arm, and
// writing them in the background at disarm (docs/design.md sections 1 and 4.6).
// The training thread only hands data over; JSON, validation, fsync and
// renames happen on the writer thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chakrashim/bridge_abi.h"
#include "bridge/et_recorder.h"
#include "bridge/span_store.h"
#include "chakrashim/events.h"
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

// Picks the folder index, creates the folders and claims the .partial names
// (O_EXCL), proving the folders writable before torch opens anything.
// Returns the layout, or nullopt with one line in `error`.
std::optional<files::Layout> prepare_outputs(const chakrashim_capture_config& config,
                                             bool host, bool device, std::string& error);

// prepare_outputs in three parts: the folder index, chosen at the step
// before the window (stat calls only, issue #34); then, at arm, the folders
// and the claimed names, so that folders are made when a rank first arms,
// never earlier (a job that dies in the step before its window, of a
// SIGTERM say, leaves nothing behind).
std::optional<files::Layout> choose_folders(const chakrashim_capture_config& config,
                                            std::string& error);
bool make_folders(const files::Layout& layout, bool host, bool device, std::string& error);
// choose_folders, then make_folders.
std::optional<files::Layout> prepare_folders(const chakrashim_capture_config& config, bool host,
                                             bool device, std::string& error);
bool claim_outputs(const files::Layout& layout, bool host, bool device, bool overwrite,
                   std::string& error);

// Removes what prepare_outputs created, for a window that keeps nothing
// (START=0 in a process that never completed a step). Folders are removed
// only if empty.
void discard_outputs(const files::Layout& layout, bool host, bool device);

// The background writer: a thread per window. With repeated or triggered
// windows (docs/on-demand.md) one window's files may still be being written
// when the next window ends; wait() waits for all of them.
class TraceWriterThread {
 public:
  ~TraceWriterThread();
  void start(WindowOutput output);
  // Waits until the files are written or `seconds` passed; false on timeout.
  bool wait(std::uint64_t seconds);
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
  std::thread thread_;
  // The thread running at the lowest priority now, 0 if none.
  std::atomic<pid_t> lowered_tid_{0};
  std::atomic<bool> full_speed_{false};
};

// Writes both files now, on the calling thread; logs one summary line.
void write_window(WindowOutput& output);

}  // namespace chakrashim::bridge
