#include "trigger/trigger_command.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "check/capture_rules.h"
#include "check/check_command.h"
#include "common/missing_ranks.h"
#include "common/options.h"
#include "config/value_grammar.h"
#include "trigger/control_folder.h"
#include "trigger/trigger_file.h"
#include "trigger/trigger_plan.h"
#include "trigger/window_wait.h"

namespace chakrashim::tools::trigger {

namespace {

constexpr const char* kUsage =
    "usage: chakrashim trigger [options] TRACE_DIR\n"
    "\n"
    "Asks a running job to capture a window of steps now. The job runs with\n"
    "CHAKRA_ON_DEMAND=1 and CHAKRA_TRACE_DIR=TRACE_DIR: its lowest capturing rank\n"
    "publishes its step in TRACE_DIR/.chakrashim/JOB/step.json, and every rank looks\n"
    "in that folder once a second for new trigger files. This command reads the\n"
    "step, writes one trigger there and says what it asked for. The window that\n"
    "begins at step S is written to TRACE_DIR/step-S/, in the usual layout\n"
    "(JOB_chakra/rank-R.json, JOB_kineto/rank-R.json[.gz]), so `chakrashim check\n"
    "TRACE_DIR/step-S` reads it like any capture. docs/on-demand.md has the details.\n"
    "\n"
    "options:\n"
    "  --steps N     steps to keep (default 5, at most 100000); a job with\n"
    "                CHAKRA_WARMUP_STEPS=W runs W warm-up steps before them\n"
    "  --in K        begin K steps after the published step (default: about 3 s\n"
    "                ahead at the job's published rate, and at least 2 steps)\n"
    "  --at STEP     begin at this step, which must be ahead of the published one\n"
    "  --job ID      the job to ask, when several publish under TRACE_DIR/.chakrashim/\n"
    "  --wait        wait until every rank that captures has written its files, then\n"
    "                run `chakrashim check` on TRACE_DIR/step-S\n"
    "  --timeout S   with --wait: give up after S seconds (default 600)\n"
    "  -h, --help    this text\n"
    "\n"
    "examples:\n"
    "  # five steps from all ranks, as soon as they can take it; wait and check them\n"
    "  chakrashim trigger /traces --steps 5 --wait\n"
    "  # twenty steps from step 12000 (the job must not have reached it yet)\n"
    "  chakrashim trigger /traces --at 12000 --steps 20\n"
    "\n"
    "exit status: 0 the trigger was written (with --wait: and every rank's files are\n"
    "there, and check is clean); 1 no live job publishes its step, the step asked\n"
    "for is past, the trigger could not be written, or (with --wait) files are\n"
    "missing or check found errors; 2 usage errors.\n";

constexpr std::uint64_t kMaxTimeoutS = 7 * 24 * 3600;
// How long a note without a rate is watched for a second one: the publishing
// rank rewrites step.json at most once a second, when its step changed.
constexpr double kMeasurePatienceS = 2.5;

int failure(const std::string& why) {
  std::fprintf(stderr, "chakrashim trigger: %s\n", why.c_str());
  return 1;
}

struct Options {
  std::string trace_dir;
  PlanRequest plan;
  std::optional<std::string> job;
  bool wait = false;
  std::optional<std::uint64_t> timeout_s;
};

CommandLine command_line(Options& out, std::vector<std::string>& paths) {
  CommandLine line("trigger", kUsage);
  line.number({"--steps"}, 1, window::kMaxTriggerSteps, "1 to " + std::to_string(window::kMaxTriggerSteps),
              out.plan.steps)
      .number({"--in"}, 1, UINT64_MAX, "a number of steps, 1 or more", out.plan.in)
      .number({"--at"}, 0, UINT64_MAX, "a step number", out.plan.at)
      .value({"--job"},
             [&out](std::string_view, const std::string& value) {
               const auto id = config::parse_job_id(value);
               if (!id) return "--job takes a job id (1-128 characters of A-Z a-z 0-9 . _ + -), not '" + value + "'";
               out.job = *id;
               return std::string();
             })
      .flag({"--wait"}, out.wait)
      .number({"--timeout"}, 1, kMaxTimeoutS, "seconds, 1 to " + std::to_string(kMaxTimeoutS), out.timeout_s)
      .positionals(paths, 1, "give the trace folder the job writes to (its CHAKRA_TRACE_DIR)", 1,
                   [](const std::string& extra) { return "give one trace folder, not '" + extra + "' too"; });
  return line;
}

// What the options say together; empty when they agree. Sets the trace
// folder, absolute, so that the folder the lines name can be pasted from
// anywhere.
std::string settle(Options& out, const std::string& path) {
  if (out.plan.in && out.plan.at) return "--in and --at both say where the window begins: give one";
  if (out.timeout_s && !out.wait) return "--timeout is how long --wait waits: give --wait too";
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  out.trace_dir = ec ? path : absolute.lexically_normal().string();
  while (out.trace_dir.size() > 1 && out.trace_dir.back() == '/') out.trace_dir.pop_back();
  return {};
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "ranks 0-7", "rank 0", "ranks 0,2 (CHAKRA_RANKS=0,2 of world size 8)", "rank 0 (one process)"
std::string ranks_text(const ExpectedRanks& expected, const window::StepNote& note) {
  const auto& r = expected.ranks;
  std::string out = r.empty() ? "no rank" : (r.size() == 1 ? "rank " : "ranks ") + rank_ranges(r);
  if (note.world_size < 0) return out + " (one process)";
  if (note.ranks)
    out += " (CHAKRA_RANKS=" + *note.ranks + " of world size " + std::to_string(note.world_size) + ")";
  return out;
}

std::string some_ranks(const std::vector<std::uint64_t>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

// What keeps the window from being complete, in one clause:
//   "ranks 3,5-7 of 0-7 wrote nothing; rank 2 is still writing"
std::string incomplete_text(const WindowStatus& s, const std::vector<std::uint64_t>& expected) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (!s.missing.empty()) {
    add(s.missing.size() == expected.size() ? "no rank wrote anything (" + some_ranks(expected) + " expected)"
                                            : some_ranks(s.missing) + " of " + rank_ranges(expected) +
                                                  " wrote nothing");
  }
  if (!s.writing.empty())
    add(some_ranks(s.writing) + (s.writing.size() == 1 ? " is" : " are") +
        " still writing (a .partial file, or the ET without its device trace)");
  if (s.other_partials > 0)
    add(std::to_string(s.other_partials) + " other .partial file" + (s.other_partials == 1 ? "" : "s") + " remain");
  if (!s.missed.empty()) {
    std::vector<std::uint64_t> ranks;
    for (const auto& [rank, why] : s.missed) ranks.push_back(rank);
    // The first rank's own words; the others missed it the same way, or
    // their logs say how.
    add(some_ranks(ranks) + " captured nothing for it (rank " + std::to_string(s.missed.front().first) +
        ": " + s.missed.front().second + ")");
  }
  return out;
}

std::string folders_text(const std::vector<std::string>& folders) {
  std::string out;
  for (const auto& f : folders) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// The same code as `chakrashim check DIR`, in this process; its lines go to
// stdout as they would there. Returns check's exit status.
int run_check_on(const std::string& dir) {
  std::printf("chakrashim check %s:\n", dir.c_str());
  std::fflush(stdout);
  std::string name = "check", path = dir;
  char* args[] = {name.data(), path.data(), nullptr};
  return check::run_check_command(2, args);
}

// Redraws one status line on a terminal while --wait waits; prints nothing
// when stderr is a file or a pipe (logs want the outcome, not the ticks).
class WaitProgress {
 public:
  explicit WaitProgress(std::string window) : window_(std::move(window)), on_(isatty(STDERR_FILENO) == 1) {}
  WaitProgress(const WaitProgress&) = delete;
  WaitProgress& operator=(const WaitProgress&) = delete;
  ~WaitProgress() { clear(); }

  void draw(const WindowStatus& s, const std::optional<window::StepNote>& note, double waited_s,
            std::size_t expected) {
    if (!on_) return;
    std::string line = "waiting for " + window_ + ": " + std::to_string(s.done.size()) + "/" +
                       std::to_string(expected) + " ranks written";
    if (!s.writing.empty()) line += ", " + std::to_string(s.writing.size()) + " writing";
    if (note) line += ", job at step " + std::to_string(note->step);
    line += ", " + age_text(waited_s);
    std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (!drawn_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  std::string window_;
  bool on_;
  bool drawn_ = false;
};

int wait_and_check(const Options& options, const window::StepNote& note, const std::string& control_dir,
                   const std::string& window_dir, std::uint64_t first_step, const ExpectedRanks& expected,
                   std::set<std::string> earlier) {
  WaitOptions w;
  w.control_dir = control_dir;
  w.window_dir = window_dir;
  w.job_id = note.job_id;
  w.first_step = first_step;
  w.expected = expected.ranks;
  w.earlier = std::move(earlier);
  w.restart = note.restart;
  w.timeout_s = static_cast<double>(options.timeout_s.value_or(600));
  std::printf("waiting up to %s for %s to write %s/ (Ctrl-C stops waiting; the trigger stays)\n",
              age_text(w.timeout_s).c_str(), some_ranks(expected.ranks).c_str(), window_dir.c_str());
  std::fflush(stdout);
  WaitProgress progress(window_dir);
  w.on_poll = [&](const WindowStatus& s, const std::optional<window::StepNote>& n, double waited_s) {
    progress.draw(s, n, waited_s, expected.ranks.size());
  };
  const WaitResult result = wait_for_window(w);
  progress.clear();
  const std::string waited = age_text(result.waited_s);
  const std::string missing = incomplete_text(result.status, expected.ranks);
  switch (result.end) {
    case WaitEnd::complete:
      std::printf("window complete after %s: %s wrote %s files into %s/ (%s)\n", waited.c_str(),
                  some_ranks(expected.ranks).c_str(), expected.ranks.size() == 1 ? "its" : "their",
                  window_dir.c_str(), folders_text(result.status.folders).c_str());
      break;
    case WaitEnd::timed_out:
      std::printf("timed out after %s waiting for %s/: %s\n", waited.c_str(), window_dir.c_str(), missing.c_str());
      break;
    case WaitEnd::job_exited:
      std::printf("job %s exited (its step.json is gone) before the window was complete: %s\n",
                  note.job_id.c_str(), missing.c_str());
      break;
    case WaitEnd::job_stale:
      std::printf("job %s stopped publishing its step (its last note, %s, is %s old): %s\n", note.job_id.c_str(),
                  note_origin(*result.last_note).c_str(), age_text(unix_now() - result.last_note->time_s).c_str(),
                  missing.c_str());
      break;
    case WaitEnd::missed:
      std::printf("window incomplete after %s: %s\n", waited.c_str(), missing.c_str());
      break;
    case WaitEnd::job_restarted:
      std::printf("job %s restarted (restart count %llu; the trigger was for %llu), and a restarted job does not "
                  "take a trigger from before its restart: %s\n",
                  note.job_id.c_str(), static_cast<unsigned long long>(result.last_note->restart),
                  static_cast<unsigned long long>(note.restart), missing.c_str());
      break;
  }
  if (!result.status.folder_exists) {
    std::printf("nothing under %s/ to check\n", window_dir.c_str());
    return 1;
  }
  const int check_status = run_check_on(window_dir);
  return result.end == WaitEnd::complete && check_status == 0 ? 0 : 1;
}

}  // namespace

int run_trigger_command(int argc, char** argv) {
  Options options;
  std::vector<std::string> paths;
  const CommandLine line = command_line(options, paths);
  if (const auto status = line.read(argc, argv)) return *status;
  if (const std::string why = settle(options, paths[0]); !why.empty()) return line.usage_error(why);
  const JobChoice choice = choose_job(options.trace_dir, options.job, unix_now());
  if (choice.status == 2) return line.usage_error(choice.message);
  if (!choice.job) return failure(choice.message);
  const JobFolder& job = *choice.job;
  window::StepNote note = *job.note;
  bool measured = false;
  if (!options.plan.in && !options.plan.at && usable_rate(note.steps_per_s) == 0) {
    // Said before the wait, flushed: a user sees why nothing happens for a
    // moment, and a caller (the tests) knows the first note was read.
    std::printf("job %s publishes no rate yet: watching its step.json for up to %.1f s to measure one\n",
                note.job_id.c_str(), kMeasurePatienceS);
    std::fflush(stdout);
    note = with_measured_rate(job.dir, note, kMeasurePatienceS, measured);
  }
  const Plan plan = plan_trigger(note, options.plan);
  if (!plan.error.empty()) return failure(plan.error);
  if (!plan.warning.empty()) std::fprintf(stderr, "chakrashim trigger: warning: %s\n", plan.warning.c_str());

  const std::string window_dir = (options.trace_dir == "/" ? std::string() : options.trace_dir) + "/" +
                                 window::window_folder_name(plan.first_step);
  const ExpectedRanks expected = expected_ranks(note);
  if (!expected.note.empty()) std::fprintf(stderr, "chakrashim trigger: warning: %s\n", expected.note.c_str());
  // Taken before the trigger exists, so that nothing of this window is in it.
  std::set<std::string> earlier;
  if (options.wait) {
    earlier = final_files_now(window_dir, note.job_id);
    earlier.merge(missed_notes_now(job.dir, plan.first_step));
  }

  window::Trigger trigger;
  trigger.first_step = plan.first_step;
  trigger.steps = options.plan.steps;
  trigger.restart = note.restart;
  const double now_s = unix_now();
  trigger.requested_s = now_s;
  trigger.requested_by = requester();
  const WriteResult written = write_trigger(job.dir, trigger, unix_now_ns(), static_cast<std::int64_t>(::getpid()));
  if (!written.ok) return failure("cannot write the trigger for job " + note.job_id + ": " + written.error);

  std::printf("job %s: asked for %s from %s, into %s/\n", note.job_id.c_str(),
              kept_steps_text(plan.first_step, note.warmup, options.plan.steps).c_str(),
              ranks_text(expected, note).c_str(), window_dir.c_str());
  const auto eta = seconds_until(note, plan.first_step, now_s);
  const std::string when = !eta         ? "begins " + std::to_string(plan.lead) + " steps after the published one"
                           : *eta >= 0.05 ? "begins in about " + age_text(*eta)
                                          : "may have begun already on the ranks (they capture nothing if so)";
  std::printf("the job is at step %llu (%s%s, published %s ago by pid %lld on %s): the window %s\n",
              static_cast<unsigned long long>(note.step), rate_text(note.steps_per_s).c_str(),
              measured ? " measured between two notes" : "",
              age_text(now_s - note.time_s).c_str(), static_cast<long long>(note.pid),
              note.host.empty() ? "an unnamed host" : note.host.c_str(), when.c_str());
  if (!options.wait) return 0;
  std::fflush(stdout);
  return wait_and_check(options, note, job.dir, window_dir, plan.first_step, expected, std::move(earlier));
}

}  // namespace chakrashim::tools::trigger
