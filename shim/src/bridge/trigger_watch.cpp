#include "bridge/trigger_watch.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "bridge/bridge_log.h"
#include "files/publish.h"
#include "files/small_file.h"

namespace chakrashim::bridge {

namespace {

// The heartbeat: step.json is rewritten at least this often, so that the
// command can tell a job that is alive in a long step from one that is gone.
constexpr std::chrono::seconds kHeartbeat{10};
// A trigger file larger than this is not one of ours.
constexpr std::size_t kMaxTriggerBytes = 64 * 1024;

double unix_now_s() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

bool TriggerWatch::start(Params params) {
  // Called once, by the stepping thread under the Capture's lock; params_ is
  // written before started_ says so (stop_for_exit reads it on another thread).
  if (started_.load(std::memory_order_acquire)) return true;
  params_ = std::move(params);
  started_.store(true, std::memory_order_release);
  log_debug("looking for triggers in " + window::control_dir(params_.trace_dir, params_.job_id) +
            " once a second" + (params_.publisher ? ", and publishing the step there" : ""));
  try {
    std::thread([this] { run(); }).detach();
  } catch (const std::exception& e) {
    // CHAKRA_TRIGGER_SIGNAL needs no thread of ours: it still opens windows.
    // started_ stays set, so no step asks again; with no thread, nothing is
    // left for the exit to wait for.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    log_warn(std::string("cannot start the thread that looks for trigger files (") + e.what() +
             "): `chakrashim trigger` does not reach this process");
    return false;
  }
  return true;
}

std::vector<std::pair<std::string, window::Trigger>> TriggerWatch::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  has_triggers_.store(false, std::memory_order_relaxed);
  return std::move(inbox_);
}

void TriggerWatch::note_missed(window::Missed missed) {
  if (!started_.load()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    outbox_.push_back(std::move(missed));
  }
  cv_.notify_all();
}

void TriggerWatch::stop_for_exit(std::chrono::milliseconds limit) {
  if (!started_.load(std::memory_order_acquire)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return;
  stopping_ = true;
  cv_.notify_all();
  // Only a publishing rank may own files to remove; the others need not wait.
  if (!params_.publisher) return;
  // The thread may be in a slow (or hung) filesystem call: the exit waits
  // for its clean-up at most `limit`, then goes on without it.
  cv_.wait_for(lock, limit, [&] { return finished_; });
}

void TriggerWatch::run() {
  bool first = true;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (ensure_dir()) {
      write_missed();
      if (params_.publisher) publish(now);
      look_for_triggers(first);
    }
    // The first look is this process's first cycle, folder or not: a trigger
    // that appears in a folder made after it is this run's (a rank that is
    // not the publisher often looks before the publisher made the folder).
    first = false;
    std::unique_lock<std::mutex> lock(mutex_);
    if (cv_.wait_for(lock, params_.period, [&] { return stopping_; })) break;
  }
  // Exiting: nothing more is published, so a note can never outlive its
  // removal (this thread is the only one that touches the folder).
  if (owner_ && files::control_dir_intact(dir_)) remove_control_files();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  cv_.notify_all();
}

bool TriggerWatch::ensure_dir() {
  if (dir_ && files::control_dir_intact(dir_)) return true;
  if (dir_) {
    // Removed or renamed by someone else (an older child of this job once
    // did it at its exit): a publishing rank makes it again at once.
    log_debug("the control folder " + dir_.path + " went away" +
              (params_.publisher ? "; making it again" : ""));
    dir_ = files::ControlDir{};
    owner_ = false;
    published_step_.reset();
  }
  std::string error;
  auto dir = files::open_control_dir(params_.trace_dir, params_.job_id, params_.publisher, error);
  if (!dir.note.empty()) log_warn("on-demand control folder: " + dir.note);
  if (!dir) {
    // Not there yet: the publishing rank makes it with its first note.
    if (error != "not there yet" && !dir_failed_said_) {
      if (params_.publisher)
        log_error("cannot publish the step for `chakrashim trigger` (" + error +
                  "): triggers cannot find this job; the job runs on");
      else
        log_warn("cannot use the on-demand control folder (" + error +
                 "): on-demand capture waits; the job runs on");
      dir_failed_said_ = true;
    }
    return false;
  }
  dir_ = std::move(dir);
  owner_ = dir_.created;
  return true;
}

void TriggerWatch::write_missed() {
  std::vector<window::Missed> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out.swap(outbox_);
  }
  for (const auto& m : out) {
    std::string error;
    if (!files::replace_file_at(dir_.job.get(), window::missed_file_name(m.first_step, m.rank),
                               window::encode_missed(m), /*durable=*/false, error, dir_.path))
      log_debug("cannot leave word of the missed window for `chakrashim trigger --wait`: " + error);
  }
}

void TriggerWatch::remove_control_files() {
  // The job's triggers and its ranks' missed notes are this run's business
  // only: once the job ends they would only pile up (a rerun ignores them).
  // Names only, relative to our own folder: whatever a name is (a link, a
  // FIFO), unlinking it touches nothing outside.
  const int dir = dir_.job.get();
  ::unlinkat(dir, std::string(window::kStepFileName).c_str(), 0);
  std::string error;
  if (const auto names = files::list_names_at(dir, error)) {
    for (const auto& name : *names) {
      if (window::is_trigger_file_name(name) ||
          (name.rfind("missed-", 0) == 0 && name.size() > 5 &&
           name.compare(name.size() - 5, 5, ".json") == 0))
        ::unlinkat(dir, name.c_str(), 0);
    }
  }
  files::remove_control_dir(dir_);
}

bool TriggerWatch::another_publisher(std::chrono::steady_clock::time_point now) {
  if (owner_) return false;
  // Asked again every heartbeat: the other one may have gone meanwhile.
  if (other_checked_at_ != std::chrono::steady_clock::time_point{} &&
      now - other_checked_at_ < kHeartbeat)
    return other_publishes_;
  other_checked_at_ = now;
  std::string error;
  const auto text = files::read_small_file_at(dir_.job.get(), std::string(window::kStepFileName),
                                              kMaxTriggerBytes, error);
  std::optional<window::StepNote> note;
  if (text) note = window::decode_step_note(*text, error);
  other_publishes_ = false;
  if (note && note->pid != params_.note.pid) {
    const double age = unix_now_s() - note->time_s;
    if (note->host == params_.note.host && note->pid > 0)
      other_publishes_ = ::kill(static_cast<pid_t>(note->pid), 0) == 0 || errno == EPERM;
    else
      other_publishes_ = age < 3.0 * static_cast<double>(kHeartbeat.count());
  }
  if (other_publishes_ && !other_said_) {
    log_info("process " + std::to_string(note->pid) + " on " + note->host + " publishes job " +
             params_.job_id + "'s step in " + dir_.path +
             "; this process does not (it takes over once that one is gone)");
    other_said_ = true;
  }
  if (!other_publishes_) owner_ = true;  // taken over: ours to remove at exit
  return other_publishes_;
}

void TriggerWatch::publish(std::chrono::steady_clock::time_point now) {
  const std::uint64_t step = step_.load(std::memory_order_relaxed);
  if (published_step_ && *published_step_ == step && now - published_at_ < kHeartbeat) return;
  // At most once a second, also when note_missed woke the thread early.
  if (published_step_ && now - published_at_ < std::chrono::seconds(1)) return;
  if (another_publisher(now)) return;
  if (!published_step_) {
    rate_step_ = step;
    rate_at_ = now;
  }
  // The rate over the last few seconds at least, so that one slow step
  // does not swing it.
  const double elapsed = std::chrono::duration<double>(now - rate_at_).count();
  if (elapsed >= 3.0) {
    steps_per_s_ = static_cast<double>(step - rate_step_) / elapsed;
    rate_step_ = step;
    rate_at_ = now;
  }
  window::StepNote note = params_.note;
  note.step = step;
  note.time_s = unix_now_s();
  note.steps_per_s = steps_per_s_;
  std::string error;
  if (!files::replace_file_at(dir_.job.get(), std::string(window::kStepFileName),
                             window::encode_step_note(note), /*durable=*/false, error, dir_.path)) {
    if (!publish_failed_said_)
      log_error("cannot publish the step for `chakrashim trigger` (" + error + "): triggers cannot find this job; the job runs on");
    publish_failed_said_ = true;
    return;
  }
  published_step_ = step;
  published_at_ = now;
}

void TriggerWatch::look_for_triggers(bool first_look) {
  std::string error;
  const auto names = files::list_names_at(dir_.job.get(), error);
  if (!names) {
    if (!dir_failed_said_) {
      log_warn("cannot look for triggers in " + dir_.path + " (" + error +
               "); on-demand capture waits");
      dir_failed_said_ = true;
    }
    return;
  }
  std::vector<std::string> fresh;
  for (const auto& name : *names)
    if (window::is_trigger_file_name(name) && !seen_.count(name)) fresh.push_back(name);
  std::vector<std::pair<std::string, window::Trigger>> found;
  for (const auto& name : fresh) {
    seen_.insert(name);
    // Triggers from before this process looked (an earlier run of the same
    // job id) are not this run's.
    if (first_look) continue;
    const auto text = files::read_small_file_at(dir_.job.get(), name, kMaxTriggerBytes, error);
    std::optional<window::Trigger> trigger;
    if (text) trigger = window::decode_trigger(*text, error);
    if (!trigger) {
      // The name goes into the log: log.cpp makes control characters visible.
      log_warn("the trigger file " + dir_.path + "/" + name + " is ignored: " + error);
      continue;
    }
    found.emplace_back(name, *trigger);
  }
  if (first_look && !fresh.empty())
    log_debug(std::to_string(fresh.size()) + " trigger file(s) from before this process are ignored");
  if (found.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& f : found) inbox_.push_back(std::move(f));
  has_triggers_.store(true, std::memory_order_relaxed);
}

}  // namespace chakrashim::bridge
