// The files through which `chakrashim trigger` and a running job talk
// (docs/on-demand.md), pure: names, and the two JSON documents encoded and
// decoded. The I/O is the caller's (the bridge's TriggerWatch, the command).
//
//   TRACE_DIR/.chakrashim/JOB/step.json      the publishing rank's step, at
//                                            most once a second (rename)
//   TRACE_DIR/.chakrashim/JOB/trigger-*.json one file a trigger (rename)
//   TRACE_DIR/step-S/JOB_chakra/ ...         the window that begins at step S
//
// Every file is written under a temporary name that starts with '.', then
// renamed, so a reader sees a whole document or none: on NFS and Lustre
// too, where appending to one shared file is not atomic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chakrashim::window {

// "/t", "123" -> "/t/.chakrashim/123"
std::string control_dir(const std::string& trace_dir, const std::string& job_id);
inline constexpr std::string_view kStepFileName = "step.json";
// 1234 -> "step-1234": the folder of the window that begins at that step.
std::string window_folder_name(std::uint64_t first_step);
// "trigger-1764633600123456789-4242.json" and the like: trigger-*.json.
bool is_trigger_file_name(std::string_view name);
// A name for a new trigger, unique per (time, pid).
std::string trigger_file_name(std::int64_t time_ns, std::int64_t pid);

// What the publishing rank says about the job, in step.json.
struct StepNote {
  std::string job_id;
  std::uint64_t rank = 0;        // the publishing rank
  std::uint64_t step = 0;        // the step in progress
  double time_s = 0;             // when written (Unix time)
  double steps_per_s = 0;        // since the previous note; 0 unknown
  std::int64_t pid = 0;
  std::string host;
  std::uint64_t restart = 0;     // TORCHELASTIC_RESTART_COUNT
  std::int64_t world_size = -1;  // -1: unknown (one process)
  std::optional<std::string> ranks;  // CHAKRA_RANKS as given; none: all
  std::uint64_t warmup = 0;      // CHAKRA_WARMUP_STEPS: added before each triggered window
  bool gzip = false;             // CHAKRA_GZIP: the device files are .json.gz
};
std::string encode_step_note(const StepNote& note);
std::optional<StepNote> decode_step_note(std::string_view text, std::string& error);

// One request: capture `steps` steps from `first_step` (after the job's
// warmup steps, if it has any). `restart` must match the job's restart count:
// a trigger left from before a restart is not taken by the restarted job.
struct Trigger {
  std::uint64_t first_step = 0;
  std::uint64_t steps = 0;  // >= 1
  std::uint64_t restart = 0;
  double requested_s = 0;   // Unix time
  std::string requested_by; // user@host, for the log line
};
std::string encode_trigger(const Trigger& trigger);
// Rejects anything but the documented form: a bad trigger is ignored with
// one line that says why (`error`).
std::optional<Trigger> decode_trigger(std::string_view text, std::string& error);

// A rank that captures nothing for a requested window (it was past its
// first step, or another window was in the way) says so in
// missed-S-rank-R.json beside the triggers, so that `chakrashim trigger
// --wait` stops waiting for that rank and says why.
struct Missed {
  std::uint64_t first_step = 0;
  std::uint64_t rank = 0;
  std::string why;  // the rank's own log line
};
//   (1300, 7) -> "missed-1300-rank-7.json"
std::string missed_file_name(std::uint64_t first_step, std::uint64_t rank);
std::string encode_missed(const Missed& missed);
std::optional<Missed> decode_missed(std::string_view text, std::string& error);

// Bounds on a trigger's size: a window that long would exhaust any budget.
inline constexpr std::uint64_t kMaxTriggerSteps = 100000;

}  // namespace chakrashim::window
