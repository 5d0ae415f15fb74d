#include "trigger/control_folder.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <thread>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/capture_scan.h"
#include "config/value_grammar.h"
#include "files/small_file.h"

namespace chakrashim::tools::trigger {

namespace fs = std::filesystem;

namespace {

// step.json is one short line; anything much larger is not ours.
constexpr std::size_t kMaxNoteBytes = 64 * 1024;

std::string trimmed(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string names(const std::vector<JobFolder>& jobs) {
  std::string out;
  for (const auto& j : jobs) out += (out.empty() ? "" : ", ") + j.job_id;
  return out;
}

double age_of(const window::StepNote& note, double now_s) { return std::max(0.0, now_s - note.time_s); }

// A live job rewrites its note at least every 10 s (the heartbeat, on a
// thread of its own whatever its steps do). A note older than this, from a
// process of this host that no longer exists, is a job killed before it could
// remove it (SIGKILL, or SIGTERM while no window was open): gone, without
// waiting kStaleAfterS. Younger notes are always taken as live (a process
// in another PID namespace would look gone to kill()).
constexpr double kLocalGoneAfterS = 15;

}  // namespace

bool local_process_gone(const window::StepNote& note, double now_s) {
  if (age_of(note, now_s) <= kLocalGoneAfterS || note.pid <= 0) return false;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || note.host != host) return false;
  return ::kill(static_cast<pid_t>(note.pid), 0) != 0 && errno == ESRCH;
}

namespace {

bool live(const JobFolder& j, double now_s) {
  return j.note && age_of(*j.note, now_s) <= kStaleAfterS && !local_process_gone(*j.note, now_s);
}

// Why one job folder cannot be triggered, in the words of the "no job" line.
std::string why_not_live(const JobFolder& j, double now_s) {
  if (!j.has_step_file)
    return "job " + j.job_id + " has no step.json (a job removes its own when it exits; a new one writes it "
           "at its first step)";
  if (!j.note) return "job " + j.job_id + "'s step.json does not decode: " + j.error;
  if (local_process_gone(*j.note, now_s))
    return "job " + j.job_id + "'s step.json is " + age_text(age_of(*j.note, now_s)) + " old and its process (" +
           note_origin(*j.note) + ") is gone: it was killed before it could remove it";
  return "job " + j.job_id + "'s step.json is " + age_text(age_of(*j.note, now_s)) + " old (" + note_origin(*j.note) +
         "): the job is gone or hung";
}

JobChoice fail(int status, std::string message) {
  JobChoice c;
  c.status = status;
  c.message = std::move(message);
  return c;
}

// The one folder chosen (by --job, or as the only one with a step.json):
// usable only if its note decodes and is fresh.
JobChoice take(const std::string& root, const JobFolder& j, double now_s) {
  if (j.has_step_file && !j.note)
    return fail(1, "cannot read " + j.dir + "/" + std::string(window::kStepFileName) + ": " + j.error);
  if (!live(j, now_s)) return fail(1, "no job publishes its step under " + root + ": " + why_not_live(j, now_s));
  JobChoice c;
  c.job = j;
  return c;
}

}  // namespace

std::optional<window::StepNote> read_step_note(const std::string& dir, bool& missing, std::string& error) {
  missing = false;
  const std::string path = dir + "/" + std::string(window::kStepFileName);
  int open_errno = 0;
  const auto text = files::read_small_file(path, kMaxNoteBytes, error, &open_errno);
  if (!text) {
    // The job removes it on exit; any other failure to read is worth saying.
    if (open_errno == ENOENT || open_errno == ENOTDIR) {
      missing = true;
      error.clear();
    }
    return std::nullopt;
  }
  return window::decode_step_note(*text, error);
}

std::vector<JobFolder> list_job_folders(const std::string& trace_dir, bool& exists) {
  std::vector<JobFolder> out;
  const fs::path base = fs::path(trimmed(trace_dir)) / ".chakrashim";
  std::error_code ec;
  // The folder is shared: a link where a folder should be is not followed,
  // and a name that is no job id (escape codes, say) is not ours to show.
  exists = fs::is_directory(fs::symlink_status(base, ec));
  if (!exists) return out;
  const uid_t me = ::geteuid();
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    std::error_code inner;
    if (!fs::is_directory(entry.symlink_status(inner))) continue;
    const std::string name = entry.path().filename().string();
    if (!config::parse_job_id(name)) continue;
    JobFolder j;
    j.job_id = name;
    j.dir = (base / name).string();
    struct stat st {};
    j.ours = ::lstat(j.dir.c_str(), &st) == 0 && st.st_uid == me;
    bool missing = false;
    j.note = read_step_note(j.dir, missing, j.error);
    j.has_step_file = !missing;
    // A job whose JOB folder another user holds publishes in JOB.uid<N>
    // (files/control_dir.h): the note names the job.
    if (j.note && name == j.note->job_id + ".uid" + std::to_string(st.st_uid)) j.job_id = j.note->job_id;
    out.push_back(std::move(j));
  }
  // One folder a job: where two claim the same job, this user's first, then
  // the one with the newer note.
  std::sort(out.begin(), out.end(), [](const JobFolder& a, const JobFolder& b) {
    if (a.job_id != b.job_id) return a.job_id < b.job_id;
    if (a.ours != b.ours) return a.ours;
    return (a.note ? a.note->time_s : -1.0) > (b.note ? b.note->time_s : -1.0);
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const JobFolder& a, const JobFolder& b) { return a.job_id == b.job_id; }),
            out.end());
  return out;
}

namespace {

// Without a control folder: what the trace folder says of the job, so that
// a job that has ended is said to have ended (issue #38), rather than only
// how to start one. A running on-demand job keeps TRACE_DIR/.chakrashim; it
// removes it when it exits.
std::string why_no_control_folder(const std::string& root) {
  const std::string start = "start the job with CHAKRA_ON_DEMAND=1 and CHAKRA_TRACE_DIR=" + root;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return "there is no folder " + root + " (" + start + ")";
  const std::string none = root + " holds no .chakrashim folder";
  if (const auto windows = window_folders(root); !windows.empty()) {
    const std::string more =
        windows.size() > 1 ? " and " + std::to_string(windows.size() - 1) + " more window" +
                                 (windows.size() > 2 ? "s" : "")
                           : "";
    return none + ", so the job that wrote " + windows.back() + more +
           " has ended (an on-demand job removes its .chakrashim folder when it exits; " + start + " to ask again)";
  }
  const ScanResult scan = scan_directory(root);
  for (const auto& g : scan.groups) {
    if (g.ranks.empty() || (g.host_dir.empty() && g.device_dir.empty())) continue;
    return none + ": the job that wrote " + (g.host_dir.empty() ? g.device_dir : g.host_dir) +
           " was not started with CHAKRA_ON_DEMAND=1, or has ended (" + start + ")";
  }
  // One level down, as `check` looks (issue #49): the trace folder given
  // may be the parent of the job's.
  std::vector<std::string> below;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    std::error_code e;
    if (entry.is_directory(e) && std::filesystem::is_directory(entry.path() / ".chakrashim", e))
      below.push_back(entry.path().string());
  }
  std::sort(below.begin(), below.end());
  if (!below.empty()) {
    std::string list;
    for (const auto& b : below) list += (list.empty() ? "" : ", ") + b;
    return none + "; on-demand jobs publish one level down, in " + list + ": give that folder (the job's "
           "CHAKRA_TRACE_DIR)";
  }
  return none + ": no on-demand job runs there now; one that ran has ended (" + start + ")";
}

}  // namespace

JobChoice choose_job(const std::string& trace_dir, const std::optional<std::string>& wanted, double now_s) {
  const std::string root = trimmed(trace_dir);
  const std::string base = root + "/.chakrashim";
  bool exists = false;
  const auto jobs = list_job_folders(root, exists);
  if (!exists) return fail(1, "no job publishes its step under " + root + ": " + why_no_control_folder(root));
  if (wanted) {
    const auto it = std::find_if(jobs.begin(), jobs.end(), [&](const JobFolder& j) { return j.job_id == *wanted; });
    if (it == jobs.end())
      return fail(1, "no job publishes its step under " + root + ": there is no " + base + "/" + *wanted +
                         (jobs.empty() ? std::string(" (and no other job folder)") : " (jobs there: " + names(jobs) + ")"));
    return take(root, *it, now_s);
  }
  std::vector<JobFolder> with_note;
  std::copy_if(jobs.begin(), jobs.end(), std::back_inserter(with_note), [](const JobFolder& j) { return j.has_step_file; });
  if (with_note.empty())
    return fail(1, "no job publishes its step under " + root + ": no " + base + "/JOB/step.json" +
                       (jobs.empty() ? std::string(" (no job folder at all)")
                                     : " (job folders without one: " + names(jobs) +
                                           "; a job removes its own when it exits)"));
  if (with_note.size() == 1) return take(root, with_note[0], now_s);
  // A job killed hard leaves its step.json behind: among several, the one
  // that is alive is meant, and the stale ones need no --job to be passed over.
  std::vector<JobFolder> alive;
  std::copy_if(with_note.begin(), with_note.end(), std::back_inserter(alive),
               [&](const JobFolder& j) { return live(j, now_s); });
  if (alive.size() == 1) return take(root, alive[0], now_s);
  if (alive.size() > 1) {
    std::string list;
    for (const auto& j : alive) list += (list.empty() ? "" : ", ") + j.job_id + " (step " + std::to_string(j.note->step) + ")";
    return fail(2, "several jobs publish their step under " + base + ": " + list + "; choose one with --job ID");
  }
  std::string why;
  for (const auto& j : with_note) why += (why.empty() ? "" : "; ") + why_not_live(j, now_s);
  return fail(1, "no job publishes its step under " + root + ": " + why);
}

window::StepNote with_measured_rate(const std::string& dir, const window::StepNote& note, double patience_s,
                                    bool& measured) {
  measured = false;
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(patience_s);
  while (clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    bool missing = false;
    std::string error;
    const auto next = read_step_note(dir, missing, error);
    if (!next || next->pid != note.pid || next->host != note.host || next->restart != note.restart) continue;
    if (next->step <= note.step || next->time_s <= note.time_s) continue;
    window::StepNote out = *next;
    if (!(out.steps_per_s > 0)) {
      out.steps_per_s = static_cast<double>(next->step - note.step) / (next->time_s - note.time_s);
      measured = true;
    }
    return out;
  }
  return note;
}

std::string age_text(double seconds) {
  char buf[48];
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 10) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (seconds < 600) std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  else if (seconds < 3 * 3600) std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  return buf;
}

std::string note_origin(const window::StepNote& note) {
  return "step " + std::to_string(note.step) + ", pid " + std::to_string(note.pid) + " on " +
         (note.host.empty() ? std::string("an unnamed host") : note.host);
}

}  // namespace chakrashim::tools::trigger
