// `chakrashim trigger --wait`: which ranks a window needs, how far its files
// are, and the watch that polls until they are complete, the job goes away,
// or time runs out. No output here: the command prints what it returns.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "files/on_demand_files.h"

namespace chakrashim::tools::trigger {

// The ranks that write a window: 0..world_size-1 that CHAKRA_RANKS lets
// through, or the publishing rank alone when the job is one process.
struct ExpectedRanks {
  std::vector<std::uint64_t> ranks;
  std::string note;  // set when the note's rank list did not parse (all ranks are expected)
};
ExpectedRanks expected_ranks(const window::StepNote& note);

// The window folder's files for one job, as they stand.
struct WindowStatus {
  bool folder_exists = false;
  std::vector<std::uint64_t> done;     // all their files final
  std::vector<std::uint64_t> writing;  // a .partial remains, or the ET is final and the device trace not yet
  std::vector<std::uint64_t> missing;  // nothing of theirs yet
  std::uint64_t other_partials = 0;    // .partial files of no expected rank (or whose name gives none)
  std::vector<std::string> folders;    // JOB_chakra[.i]/JOB_kineto[.i] holding this window's files
  // Ranks that said they capture nothing for this window (missed-S-rank-R.json
  // in the control folder), with the line they logged; not in `missing`.
  std::vector<std::pair<std::uint64_t, std::string>> missed;
  bool complete() const { return writing.empty() && missing.empty() && other_partials == 0 && missed.empty(); }
  // Every expected rank is done or has said it misses the window.
  bool settled() const { return writing.empty() && missing.empty() && other_partials == 0; }
};

// The final rank files of `job_id` under `window_dir` now. Taken before the
// trigger is written: files already there are an earlier run's (a rerun of
// job 0 outside Slurm), and never count for this window.
std::set<std::string> final_files_now(const std::string& window_dir, const std::string& job_id);

// A rank is done when it has no .partial left and its last file is final:
// the device trace where the run has a JOB_kineto folder (a rank publishes
// its ET first, then writes the device trace from scratch, so a final ET
// alone is a rank still writing), else the ET.
WindowStatus window_status(const std::string& window_dir, const std::string& job_id,
                           const std::vector<std::uint64_t>& expected, const std::set<std::string>& earlier);
// The same, with the missed notes of the window that begins at `first_step`
// read from `control_dir` (those in `earlier` are an earlier run's).
WindowStatus window_status(const std::string& window_dir, const std::string& job_id,
                           const std::vector<std::uint64_t>& expected, const std::set<std::string>& earlier,
                           const std::string& control_dir, std::uint64_t first_step);
// The missed notes of that window now (paths), for `earlier`.
std::set<std::string> missed_notes_now(const std::string& control_dir, std::uint64_t first_step);

enum class WaitEnd {
  complete,
  timed_out,
  job_exited,    // step.json went away (and nothing is being written any more)
  job_stale,     // step.json stopped being rewritten (and nothing is being written)
  job_restarted,  // a restarted job ignores a trigger from before its restart
  missed          // every rank is done or said it captures nothing, and some did
};

struct WaitOptions {
  std::string control_dir, window_dir, job_id;
  std::uint64_t first_step = 0;  // the window's (for the ranks' missed notes)
  std::vector<std::uint64_t> expected;
  std::set<std::string> earlier;
  std::uint64_t restart = 0;  // the trigger's
  double timeout_s = 600;
  double poll_s = 0.25;
  // After step.json goes, ranks may still be finishing their files on the
  // way out (CHAKRA_EXIT_TIMEOUT, 20 s by default): wait this long for them.
  double exit_grace_s = 30;
  // Called after each poll that did not end the wait: the progress line.
  std::function<void(const WindowStatus&, const std::optional<window::StepNote>&, double waited_s)> on_poll;
};

struct WaitResult {
  WaitEnd end = WaitEnd::timed_out;
  WindowStatus status;
  std::optional<window::StepNote> last_note;  // the last one read
  double waited_s = 0;
};

WaitResult wait_for_window(const WaitOptions& options);

}  // namespace chakrashim::tools::trigger
