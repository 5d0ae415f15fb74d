// Which running job `chakrashim trigger` talks to: the job folders under
// TRACE_DIR/.chakrashim/ and what each one's step.json says (docs/on-demand.md).
// Reading only; the trigger itself is written by trigger_file.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "files/on_demand_files.h"

namespace chakrashim::tools::trigger {

// A note older than this is from a job that is gone or hung: the publishing
// rank rewrites step.json at least every 10 s, even when the step is stuck.
inline constexpr double kStaleAfterS = 60;

// One folder TRACE_DIR/.chakrashim/JOB and its step.json, as found.
struct JobFolder {
  std::string job_id;  // the folder's name (JOB.uid<N>: the JOB its note names)
  std::string dir;     // the control folder's path
  bool ours = false;   // owned by this user
  bool has_step_file = false;
  std::optional<window::StepNote> note;  // decoded step.json
  std::string error;                     // why step.json did not decode
};

// The note is older than the 10 s heartbeat (15 s), comes from this host,
// and its process no longer exists: the job was killed before it could
// remove it. Younger notes never count as gone.
bool local_process_gone(const window::StepNote& note, double now_s);

// Reads DIR/step.json: nullopt with `missing` set when there is none, or
// with `error` set when it does not decode (or cannot be read).
std::optional<window::StepNote> read_step_note(const std::string& dir, bool& missing, std::string& error);

// Every job folder under TRACE_DIR/.chakrashim/, sorted by name; empty when
// that folder does not exist (`exists` says which).
std::vector<JobFolder> list_job_folders(const std::string& trace_dir, bool& exists);

// The job to trigger, or why there is none.
struct JobChoice {
  std::optional<JobFolder> job;  // set: live (a note younger than kStaleAfterS)
  int status = 0;                // otherwise 1 (no live job) or 2 (usage: choose with --job)
  std::string message;           // one line for stderr, without the command's prefix
};

// `wanted`: --job ID, if given. With exactly one job folder holding a
// step.json, that one; with several, the one live job among them, else a
// usage error that lists them. `now_s` is Unix time.
JobChoice choose_job(const std::string& trace_dir, const std::optional<std::string>& wanted, double now_s);

// A job publishes no rate in its first seconds (steps_per_s 0), and a lead
// of 2 steps would be past before its ranks look if it steps fast. So, for
// such a note, watch DIR/step.json up to `patience_s` for a newer note of
// the same process and take the rate between the two (`measured` set), and
// that newer note's step. A job too slow to publish again in that time is
// slow enough for the 2-step lead, and `note` comes back as it was.
window::StepNote with_measured_rate(const std::string& dir, const window::StepNote& note, double patience_s,
                                    bool& measured);

// 0.4 -> "0.4 s", 95.2 -> "95 s", 4000 -> "67 min"
std::string age_text(double seconds);

// "step 1040, pid 4242 on node1"
std::string note_origin(const window::StepNote& note);

}  // namespace chakrashim::tools::trigger
