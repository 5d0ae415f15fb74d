#include "bridge/trigger_watch.h"

#include <dirent.h>
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
  log_debug("looking for triggers in " + params_.control_dir + " once a second" +
            (params_.publisher ? ", and publishing the step there" : ""));
  try {
    std::thread([this] { run(); }).detach();
  } catch (const std::exception& e) {
    // CHAKRA_TRIGGER_SIGNAL needs no thread of ours: it still opens windows.
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

void TriggerWatch::write_missed() {
  std::vector<window::Missed> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out.swap(outbox_);
  }
  if (out.empty()) return;
  std::lock_guard<std::mutex> files(file_mutex_);
  if (stopping()) return;  // the exit removed the control files
  for (const auto& m : out) {
    std::string error;
    if (!files::replace_file(params_.control_dir, window::missed_file_name(m.first_step, m.rank),
                            window::encode_missed(m), /*durable=*/false, error))
      log_debug("cannot leave word of the missed window for `chakrashim trigger --wait`: " + error);
  }
}

void TriggerWatch::remove_control_files() {
  // The job's triggers and its ranks' missed notes are this run's business
  // only: once the job ends they would only pile up (a rerun ignores them).
  const std::string& dir = params_.control_dir;
  ::unlink((dir + "/" + std::string(window::kStepFileName)).c_str());
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> ours;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (window::is_trigger_file_name(name) ||
          (name.rfind("missed-", 0) == 0 && name.size() > 5 &&
           name.compare(name.size() - 5, 5, ".json") == 0))
        ours.push_back(name);
    }
    ::closedir(d);
    for (const auto& name : ours) ::unlink((dir + "/" + name).c_str());
  }
  // rmdir fails, harmlessly, while anything else (another job's folder) remains.
  if (::rmdir(dir.c_str()) == 0) {
    const auto slash = dir.rfind('/');
    if (slash != std::string::npos) ::rmdir(dir.substr(0, slash).c_str());
  }
}

void TriggerWatch::stop_for_exit() {
  if (!started_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  // The thread may be in a slow filesystem call; the file is removed here,
  // and the thread, once it wakes, publishes nothing more (stopping_).
  if (params_.publisher) {
    std::lock_guard<std::mutex> files(file_mutex_);
    remove_control_files();
  }
}

bool TriggerWatch::stopping() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

void TriggerWatch::run() {
  bool first = true;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    write_missed();
    if (params_.publisher) publish(now);
    look_for_triggers(first);
    first = false;
    std::unique_lock<std::mutex> lock(mutex_);
    if (cv_.wait_for(lock, params_.period, [&] { return stopping_; })) return;
  }
}

void TriggerWatch::publish(std::chrono::steady_clock::time_point now) {
  const std::uint64_t step = step_.load(std::memory_order_relaxed);
  if (published_step_ && *published_step_ == step && now - published_at_ < kHeartbeat) return;
  // At most once a second, also when note_missed woke the thread early.
  if (published_step_ && now - published_at_ < std::chrono::seconds(1)) return;
  if (!published_step_) {
    const auto made = files::make_dirs(params_.control_dir);
    if (!made.ok) {
      if (!publish_failed_said_)
        log_error("cannot publish the step for `chakrashim trigger` (" + made.error +
                  "): triggers cannot find this job; the job runs on");
      publish_failed_said_ = true;
      return;
    }
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
  {
    // Not under mutex_: the training thread takes that one (take(),
    // note_missed()) and must never wait for the filesystem.
    std::lock_guard<std::mutex> files(file_mutex_);
    if (stopping()) return;  // removed at exit: never written again
    if (!files::replace_file(params_.control_dir, std::string(window::kStepFileName),
                            window::encode_step_note(note), /*durable=*/false, error)) {
      if (!publish_failed_said_)
        log_error("cannot publish the step for `chakrashim trigger` (" + error +
                  "): triggers cannot find this job; the job runs on");
      publish_failed_said_ = true;
      return;
    }
  }
  published_step_ = step;
  published_at_ = now;
}

void TriggerWatch::look_for_triggers(bool first_look) {
  DIR* dir = ::opendir(params_.control_dir.c_str());
  if (!dir) {
    // Not there yet: the publishing rank makes it with its first note.
    if (errno != ENOENT && !list_failed_said_) {
      log_warn("cannot look for triggers in " + params_.control_dir + " (" +
               std::strerror(errno) + "); on-demand capture waits");
      list_failed_said_ = true;
    }
    return;
  }
  std::vector<std::string> fresh;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (window::is_trigger_file_name(name) && !seen_.count(name)) fresh.push_back(name);
  }
  ::closedir(dir);
  std::vector<std::pair<std::string, window::Trigger>> found;
  for (const auto& name : fresh) {
    seen_.insert(name);
    // Triggers from before this process looked (an earlier run of the same
    // job id) are not this run's.
    if (first_look) continue;
    std::string error;
    const auto text = files::read_small_file(params_.control_dir + "/" + name, kMaxTriggerBytes, error);
    std::optional<window::Trigger> trigger;
    if (text) trigger = window::decode_trigger(*text, error);
    if (!trigger) {
      log_warn("the trigger file " + params_.control_dir + "/" + name + " is ignored: " + error);
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

std::atomic<bool> TriggerSignal::requested_{false};
std::atomic<int> TriggerSignal::signal_{0};
struct sigaction TriggerSignal::previous_ {};

bool TriggerSignal::install(int sig) {
  struct sigaction ours {};
  ours.sa_sigaction = &handler;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  if (::sigaction(sig, &ours, &previous_) != 0) return false;
  signal_.store(sig);
  return true;
}

void TriggerSignal::reset_in_forked_child() {
  const int sig = signal_.load(std::memory_order_relaxed);
  if (sig == 0) return;
  // Only if ours is still the one installed (the job may have put its own).
  struct sigaction now {};
  if (::sigaction(sig, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
      now.sa_sigaction == &handler)
    ::sigaction(sig, &previous_, nullptr);
}

void TriggerSignal::handler(int sig, siginfo_t* info, void* context) {
  requested_.store(true, std::memory_order_relaxed);
  // The job's own handler, if it had one, runs as before; a default action
  // (terminate, for USR1 and USR2) or an ignore is not passed on.
  if (previous_.sa_flags & SA_SIGINFO) {
    if (previous_.sa_sigaction) previous_.sa_sigaction(sig, info, context);
  } else if (previous_.sa_handler != SIG_DFL && previous_.sa_handler != SIG_IGN) {
    previous_.sa_handler(sig);
  }
}

}  // namespace chakrashim::bridge
