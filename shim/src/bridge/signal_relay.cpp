#include "bridge/signal_relay.h"

#include <errno.h>
#include <unistd.h>

#include <thread>

#include "bridge/bridge_log.h"

namespace chakrashim::bridge {

std::atomic<int> SignalRelay::pending_{0};
sem_t SignalRelay::wakeup_;

namespace {
bool terminating(int sig) { return sig == SIGTERM || sig == SIGINT; }
}  // namespace

void SignalRelay::handler(int sig, siginfo_t*, void*) {
  // Async-signal-safe only: an atomic store and sem_post.
  const int saved = errno;
  int none = 0;
  pending_.compare_exchange_strong(none, sig);
  ::sem_post(&wakeup_);
  errno = saved;
}

bool SignalRelay::start(int flush_signal, std::chrono::milliseconds grace,
                        std::function<void(int)> finalize) {
  finalize_ = std::move(finalize);
  flush_signal_ = flush_signal;
  grace_ = grace;
  if (::sem_init(&wakeup_, 0, 0) != 0) return false;
  try {
    std::thread([this] { watch(); }).detach();
  } catch (...) {
    return false;
  }
  const int signals[3] = {SIGTERM, SIGINT, flush_signal};
  for (int i = 0; i < 3; ++i) {
    Slot& slot = slots_[i];
    slot.sig = signals[i];
    if (slot.sig == 0) continue;
    struct sigaction ours {};
    ours.sa_sigaction = &SignalRelay::handler;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    // A signal the job ignores stays ignored: we would have nothing to
    // deliver after finalizing.
    if (::sigaction(slot.sig, nullptr, &slot.previous) != 0) continue;
    if (slot.previous.sa_handler == SIG_IGN) continue;
    slot.installed = ::sigaction(slot.sig, &ours, nullptr) == 0;
  }
  return true;
}

void SignalRelay::restore_dispositions() {
  for (Slot& slot : slots_) {
    if (!slot.installed) continue;
    slot.installed = false;
    struct sigaction current {};
    // Only where ours is still there: the job may have installed its own
    // handler since (Python's signal.signal), which must stay.
    if (::sigaction(slot.sig, nullptr, &current) == 0 &&
        (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == &SignalRelay::handler) {
      ::sigaction(slot.sig, &slot.previous, nullptr);
    }
  }
}

void SignalRelay::reset_in_forked_child() {
  pending_.store(0);
  for (Slot& slot : slots_) {
    if (!slot.installed) continue;
    slot.installed = false;
    struct sigaction current {};
    if (::sigaction(slot.sig, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == &SignalRelay::handler) {
      ::sigaction(slot.sig, &slot.previous, nullptr);
    }
  }
}

void SignalRelay::stop() {
  restore_dispositions();
  stopping_.store(true);
  ::sem_post(&wakeup_);
}

void SignalRelay::poll_on_stepping_thread() {
  const int sig = pending_.load();
  if (sig != 0) finalize_once(sig);
}

void SignalRelay::finalize_once(int sig) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finalize_started_) return;
    finalize_started_ = true;
  }
  finalize_(sig);
  std::lock_guard<std::mutex> lock(mutex_);
  finalized_ = true;
  finalized_cv_.notify_all();
}

void SignalRelay::watch() {
  while (::sem_wait(&wakeup_) != 0) {
    if (errno != EINTR) return;
  }
  if (stopping_.load()) return;
  const int sig = pending_.load();
  {
    // The stepping thread finalizes at its next op; give it the grace
    // period, then do it here (it is blocked outside torch ops).
    std::unique_lock<std::mutex> lock(mutex_);
    finalized_cv_.wait_for(lock, grace_, [&] { return finalized_; });
  }
  finalize_once(sig);  // no-op if the stepping thread did it
  {
    // Wait for a finalize that the stepping thread is still running.
    std::unique_lock<std::mutex> lock(mutex_);
    finalized_cv_.wait(lock, [&] { return finalized_; });
  }
  restore_dispositions();
  if (terminating(sig)) {
    // Deliver it again under the job's own disposition: the default kills
    // the process as it would have; a handler of the job's runs.
    ::kill(::getpid(), sig);
  } else {
    pending_.store(0);
  }
}

}  // namespace chakrashim::bridge
