#include "bridge/signal_relay.h"

#include "bridge/bridge_log.h"

#include <errno.h>
#include <string.h>

#include <algorithm>
#include <cstring>
#include <unistd.h>

#include <thread>

namespace chakrashim::bridge {

std::atomic<unsigned> SignalRelay::pending_{0};
std::atomic<unsigned> SignalRelay::counts_[SignalRelay::kSlots] = {};
std::atomic<int> SignalRelay::first_{0};
std::atomic<bool> SignalRelay::window_open_{false};
std::atomic<bool> SignalRelay::dead_{false};
std::atomic<bool> SignalRelay::say_outside_{false};
int SignalRelay::signals_[SignalRelay::kSlots] = {SIGTERM, SIGINT, 0};
struct sigaction SignalRelay::previous_[SignalRelay::kSlots];
std::atomic<bool> SignalRelay::installed_[SignalRelay::kSlots] = {};
char SignalRelay::outside_line_[512];
std::size_t SignalRelay::outside_len_ = 0;
sem_t SignalRelay::wakeup_;

namespace {
// Repeated arrivals of one signal are delivered again up to this many times
// (a second Ctrl-C is a different request from the first).
constexpr unsigned kMaxRepeats = 2;
// Between two deliveries of the same signal: time for the job's handler to
// run, so that the second is not merged into the first.
constexpr std::chrono::milliseconds kRepeatGap{100};

// The semaphore is initialized once per process, before any handler of
// ours can post it.
std::once_flag g_sem_once;
}  // namespace

int SignalRelay::slot_of(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (signals_[i] != 0 && signals_[i] == sig) return i;
  return -1;
}

bool SignalRelay::ours_installed(int sig) {
  struct sigaction current {};
  return ::sigaction(sig, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
         current.sa_sigaction == &SignalRelay::handler;
}

void SignalRelay::chain_to_job(int slot, int sig, siginfo_t* info, void* context) {
  // The job's own handler, called as the kernel would have called it.
  const struct sigaction& p = previous_[slot];
  if (p.sa_handler == SIG_DFL || p.sa_handler == SIG_IGN) return;
  if (p.sa_flags & SA_SIGINFO) {
    siginfo_t synthesized {};
    if (!info) {
      synthesized.si_signo = sig;
      synthesized.si_code = SI_USER;
      synthesized.si_pid = ::getpid();
      info = &synthesized;
    }
    p.sa_sigaction(sig, info, context);
  } else {
    p.sa_handler(sig);
  }
}

void SignalRelay::handler(int sig, siginfo_t* info, void* context) {
  // Async-signal-safe only: atomics, write(2), sem_post, and the job's own
  // handler (which the kernel would have run here anyway).
  const int saved = errno;
  const int slot = slot_of(sig);
  if (slot < 0) {
    errno = saved;
    return;
  }
  // At exit, while the job waits for the files: the exit guard's rules
  // (the first waits, a second abandons them).
  if (slot != kFlush && ExitSignalGuard::forward(sig, info, context)) {
    errno = saved;
    return;
  }
  if (dead_.load(std::memory_order_relaxed) ||
      (slot == kFlush && !window_open_.load(std::memory_order_acquire))) {
    // Outside a window (or in a forked child): nothing to flush. The job's
    // handler gets it; without one, the signal is swallowed rather than
    // turned into the kill its default action would be.
    const struct sigaction& p = previous_[slot];
    if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
      chain_to_job(slot, sig, info, context);
    } else if (!dead_.load(std::memory_order_relaxed) &&
               say_outside_.load(std::memory_order_relaxed) && outside_len_ > 0) {
      (void)!::write(STDERR_FILENO, outside_line_, outside_len_);
    }
    errno = saved;
    return;
  }
  pending_.fetch_or(1u << slot);
  unsigned n = counts_[slot].load(std::memory_order_relaxed);
  while (n < kMaxRepeats && !counts_[slot].compare_exchange_weak(n, n + 1)) {
  }
  int none = 0;
  first_.compare_exchange_strong(none, sig);
  ::sem_post(&wakeup_);
  errno = saved;
}

bool SignalRelay::install(int slot, int sig) {
  if (ours_installed(sig)) {
    installed_[slot].store(true);
    return true;
  }
  struct sigaction current {};
  if (::sigaction(sig, nullptr, &current) != 0) return false;
  // A signal the job ignores stays ignored: we would have nothing to deliver.
  if (slot != kFlush && current.sa_handler == SIG_IGN) return false;
  previous_[slot] = current;
  const bool ok = put_ours(sig);
  installed_[slot].store(ok);
  return ok;
}

bool SignalRelay::put_ours(int sig) {
  struct sigaction ours {};
  ours.sa_sigaction = &SignalRelay::handler;
  ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  return ::sigaction(sig, &ours, nullptr) == 0;
}

bool SignalRelay::at_python_exit(int (*ignore_in_python)(int sig)) {
  for (int slot : {kInt, kTerm}) {
    const int sig = signals_[slot];
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (dead_.load() || !in_window_ || !installed_[slot].load() || !ours_installed(sig)) continue;
    }
    // Python, outside our lock: signal.signal runs the job's pending signal
    // handlers, whose ops reach our callbacks (which take it).
    const int done = ignore_in_python(sig);
    if (done < 0) return false;
    if (done == 0) continue;  // no Python handler: Python's finalization leaves it alone
    // The signal is ignored from signal.signal's sigaction to here (a few
    // microseconds): one arriving then is lost, never a kill.
    std::lock_guard<std::mutex> lock(mutex_);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (installed_[slot].load()) {
      // Still the window's: ours back in, and the close gives back the default.
      previous_[slot] = dfl;
      put_ours(sig);
    } else {
      // Closed meanwhile (its restore is under this lock): what Python's
      // finalization would have left.
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  return true;
}

void SignalRelay::install_flush(int flush_signal, const std::string& outside_line,
                                bool say_outside) {
  if (flush_signal == 0) return;
  std::call_once(g_sem_once, [] { ::sem_init(&wakeup_, 0, 0); });
  std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t n = std::min(outside_line.size(), sizeof outside_line_);
  std::memcpy(outside_line_, outside_line.data(), n);
  outside_len_ = n;
  say_outside_.store(say_outside);
  signals_[kFlush] = flush_signal;
  install(kFlush, flush_signal);
}

bool SignalRelay::start(std::chrono::milliseconds grace, std::function<void(int)> finalize,
                        std::function<void()> wait_for_files) {
  std::call_once(g_sem_once, [] { ::sem_init(&wakeup_, 0, 0); });
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (in_window_ && waiting_for_files_) {
      // The last window's close waits for its files (its writer may run at
      // the lowest priority for a while): this window takes the relay over
      // instead of waiting on the training thread (issue #34). Our handlers
      // stay in, and the signals recorded meanwhile stay recorded: this
      // window acts on them as on its own.
      taken_over_ = true;
      finalize_ = std::move(finalize);
      wait_for_files_ = std::move(wait_for_files);
      grace_ = grace;
      stop_requested_ = finalize_started_ = finalized_ = false;
      window_open_.store(true, std::memory_order_release);
      install(kTerm, SIGTERM);
      install(kInt, SIGINT);
      if (signals_[kFlush] != 0) install(kFlush, signals_[kFlush]);
      return true;
    }
  }
  // Otherwise a close under way restores and delivers (quick) before this
  // window installs anything.
  std::lock_guard<std::mutex> closing(close_mutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!watcher_running_) {
    try {
      std::thread([this] { watch(); }).detach();
    } catch (...) {
      return false;
    }
    watcher_running_ = true;
  }
  finalize_ = std::move(finalize);
  wait_for_files_ = std::move(wait_for_files);
  grace_ = grace;
  in_window_ = true;
  stop_requested_ = finalize_started_ = finalized_ = false;
  pending_.store(0);
  for (auto& c : counts_) c.store(0);
  first_.store(0);
  window_open_.store(true, std::memory_order_release);
  install(kTerm, SIGTERM);
  install(kInt, SIGINT);
  // The job may have put its own handler in place since attach (Lightning
  // does at fit()): ours goes back in front of it, and passes on to it.
  if (signals_[kFlush] != 0) install(kFlush, signals_[kFlush]);
  return true;
}

void SignalRelay::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!in_window_) return;
    stop_requested_ = true;
  }
  // The watcher may be waiting out the grace period for a signal recorded
  // just before this normal end: no finalize will come now.
  cv_.notify_all();
  ::sem_post(&wakeup_);
}

void SignalRelay::poll_on_stepping_thread() {
  const int sig = first_.load();
  if (sig != 0) finalize_once(sig);
}

void SignalRelay::finalize_once(int sig) {
  std::function<void(int)> finalize;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!in_window_ || finalize_started_) return;
    finalize_started_ = true;
    finalize = finalize_;
  }
  if (finalize) finalize(sig);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finalized_ = true;
  }
  cv_.notify_all();
  ::sem_post(&wakeup_);
  // Delivered from here, at once: left to the watcher, a job whose stepping
  // thread finalized would run on (whole steps, even to its exit under load)
  // before the watcher got to raising its SIGTERM.
  close_now();
}

void SignalRelay::watch() {
  for (;;) {
    while (::sem_wait(&wakeup_) != 0) {
      if (errno != EINTR) return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (!in_window_) continue;
    // The window ended normally (stop) with no finalize under way: a
    // signal recorded just before is delivered by close_now below, once
    // the files are written. Waiting out the grace period for a finalize
    // that a closed window never runs let the job train on for 2 s after
    // its SIGTERM.
    const auto closed_normally = [&] { return stop_requested_ && !finalize_started_; };
    if (pending_.load() != 0 && !finalized_ && !closed_normally()) {
      // The stepping thread finalizes at its next op; give it the grace
      // period, then do it here (it is blocked outside torch ops).
      if (!cv_.wait_for(lock, grace_, [&] { return finalized_ || closed_normally(); })) {
        // Said (debug) so that a test can tell, whatever the machine's
        // load, that a window which closed normally never waits here.
        log_debug("the stepping thread reached no op within " + std::to_string(grace_.count()) +
                  " ms of the signal: the watcher ends the window");
      }
      if (!finalized_ && !closed_normally()) {
        lock.unlock();
        finalize_once(first_.load());
        lock.lock();
      }
      // A finalize that the stepping thread is still running: it is bounded
      // by CHAKRA_EXIT_TIMEOUT.
      cv_.wait(lock, [&] { return finalized_ || closed_normally(); });
    }
    if (finalized_ || stop_requested_) {
      lock.unlock();
      close_now();
      lock.lock();
      // Done, unless another window opened meanwhile (it is this watcher's).
      if (!in_window_) {
        watcher_running_ = false;
        return;
      }
    }
  }
}

void SignalRelay::close_now() {
  std::lock_guard<std::mutex> closing(close_mutex_);
  std::function<void()> wait_for_files;
  bool finalized = false;  // a signal ended the window (its files are the flush)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!in_window_) return;
    finalized = finalize_started_;
    wait_for_files = wait_for_files_;
    waiting_for_files_ = true;
    taken_over_ = false;
  }
  // SIGTERM/SIGINT stay ours until the files are written (bounded): one
  // that arrives meanwhile is delivered right after, not lost with them.
  if (wait_for_files) wait_for_files();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_for_files_ = false;
    if (taken_over_) {
      // The next window opened meanwhile (start): the handlers and what
      // they recorded are its own now.
      taken_over_ = false;
      return;
    }
    in_window_ = false;
  }
  // From here a flush signal is passed on at once, as outside any window.
  window_open_.store(false, std::memory_order_release);
  {
    // Under the lock: at_python_exit may be changing what is restored.
    std::lock_guard<std::mutex> lock(mutex_);
    for (int slot : {kTerm, kInt}) {
      if (!installed_[slot].exchange(false)) continue;
      // Only where ours is still there: the job may have installed its own
      // handler since (Python's signal.signal), which must stay.
      if (ours_installed(signals_[slot])) ::sigaction(signals_[slot], &previous_[slot], nullptr);
    }
  }
  // Whatever arrived up to the restore is ours to deliver; later arrivals
  // went to the job directly.
  const unsigned mask = pending_.exchange(0);
  unsigned counts[kSlots];
  for (int i = 0; i < kSlots; ++i) counts[i] = counts_[i].exchange(0);
  first_.store(0);
  if ((mask & (1u << kFlush)) && signals_[kFlush] != 0) {
    const struct sigaction& p = previous_[kFlush];
    if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
      chain_to_job(kFlush, signals_[kFlush], nullptr, nullptr);
    } else if (!finalized && say_outside_.load(std::memory_order_relaxed) && outside_len_ > 0) {
      // It came once the window had ended at its end step, while its files
      // were being written (a writer at the lowest priority may take a few
      // steps): nothing more to flush, said as for any signal outside a
      // window rather than swallowed silently.
      (void)!::write(STDERR_FILENO, outside_line_, outside_len_);
    }
  }
  for (int slot : {kInt, kTerm}) {
    if (!(mask & (1u << slot))) continue;
    const unsigned times = counts[slot] == 0 ? 1 : counts[slot];
    for (unsigned i = 0; i < times; ++i) {
      if (i > 0) std::this_thread::sleep_for(kRepeatGap);
      // Under the job's own disposition: the default kills the process as
      // it would have; a handler of the job's runs.
      ::kill(::getpid(), signals_[slot]);
    }
  }
}

void SignalRelay::reset_in_forked_child() {
  dead_.store(true);
  pending_.store(0);
  for (int slot : {kTerm, kInt}) {
    if (!installed_[slot].exchange(false)) continue;
    if (ours_installed(signals_[slot])) ::sigaction(signals_[slot], &previous_[slot], nullptr);
  }
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

std::atomic<int> ExitSignalGuard::arrivals_{0};
std::atomic<int> ExitSignalGuard::first_{0};
std::atomic<bool> ExitSignalGuard::installed_{false};
struct sigaction ExitSignalGuard::previous_[2];
char ExitSignalGuard::first_line_[1024];
std::size_t ExitSignalGuard::first_len_ = 0;
char ExitSignalGuard::abandon_line_[2048];
std::size_t ExitSignalGuard::abandon_len_ = 0;

namespace {
constexpr int kGuarded[2] = {SIGINT, SIGTERM};

void copy_line(const std::string& line, char* to, std::size_t size, std::size_t& len) {
  len = std::min(line.size(), size);
  std::memcpy(to, line.data(), len);
}
}  // namespace

void ExitSignalGuard::install(const std::string& first_line, const std::string& abandon_line) {
  if (installed_.load()) return;
  copy_line(first_line, first_line_, sizeof first_line_, first_len_);
  copy_line(abandon_line, abandon_line_, sizeof abandon_line_, abandon_len_);
  arrivals_.store(0);
  first_.store(0);
  struct sigaction ours {};
  ours.sa_sigaction = &ExitSignalGuard::handler;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  for (int sig : kGuarded) sigaddset(&ours.sa_mask, sig);  // one at a time
  for (int i = 0; i < 2; ++i) {
    struct sigaction current {};
    ::sigaction(kGuarded[i], nullptr, &current);
    previous_[i] = current;
    // The relay's, kept through Python's finalization (SignalRelay::
    // at_python_exit) for a window's files: it stays (its close restores
    // the default and delivers what it recorded) and forwards here.
    if (SignalRelay::ours_installed(kGuarded[i])) continue;
    // A signal the job ignores stays ignored; one with a handler of its own
    // (a C handler: Python's are gone by now) keeps it.
    if (current.sa_handler != SIG_DFL) continue;
    ::sigaction(kGuarded[i], &ours, nullptr);
  }
  installed_.store(true);
}

bool ExitSignalGuard::forward(int sig, siginfo_t* info, void* context) {
  if (!installed_.load()) return false;
  handler(sig, info, context);
  return true;
}

void ExitSignalGuard::handler(int sig, siginfo_t*, void*) {
  const int saved = errno;
  if (arrivals_.fetch_add(1) == 0) {
    first_.store(sig);
    (void)!::write(STDERR_FILENO, first_line_, first_len_);
  } else {
    // Abandoned: said, and the job ends of this signal now (its default
    // action, once this handler returns and unblocks it).
    (void)!::write(STDERR_FILENO, abandon_line_, abandon_len_);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::kill(::getpid(), sig);
  }
  errno = saved;
}

void ExitSignalGuard::release_and_deliver() {
  // From here the relay records again: the signal raised below reaches the
  // relay if its handler is still in (it delivers it at its close), else
  // the default.
  if (!installed_.exchange(false)) return;
  for (int i = 0; i < 2; ++i) {
    struct sigaction current {};
    if (::sigaction(kGuarded[i], nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == &ExitSignalGuard::handler)
      ::sigaction(kGuarded[i], &previous_[i], nullptr);
  }
  if (const int sig = first_.load()) ::kill(::getpid(), sig);
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "signal " + std::to_string(sig);
  }
}

}  // namespace chakrashim::bridge
