#include "bridge/host_trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "bridge/bridge_log.h"

namespace chakrashim::bridge {

bool HostTrace::choose(const chakrashim_capture_config& config) {
  on_ = config.host_trace != 0;
  state_ = "on";
  if (on_ && EtObserver::someone_else_observing()) {
    log_warn("an Execution Trace observer is already running in this process (the job's own); "
             "chakrashim leaves it alone and captures no ET");
    on_ = false;
    state_ = "skipped: the job runs its own ExecutionTraceObserver";
  }
  native_ = config.et_native != 0;
  if (on_ && native_ && config.et_integral_tensors) {
    // Those read tensors' contents inside the op: torch's observer does it.
    log_info("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_* is set: torch's observer records "
             "the Execution Trace instead of chakrashim's (CHAKRA_ET_RECORDER=native)");
    native_ = false;
  }
  pg_node_written_.store(false);
  return on_;
}

bool HostTrace::add(const std::string& partial_path, MemoryBudget* budget, std::string& error) {
  if (!on_) return false;
  if (native_) {
    // Nothing is open on the claimed .partial: the writer thread writes it.
    // Its records are taken by the op-span callback (register_op_callback_with_et).
    EtRecorder::instance().add_shared(budget);
  } else if (!observer_.add(partial_path, error)) {
    on_ = false;
    state_ = "failed: " + error;
    return false;
  }
  const auto& fds = observer_.output_fds();
  for (int i = 0; i < kMaxFds; ++i)
    fds_[i].store(!native_ && i < static_cast<int>(fds.size()) ? fds[i] : -1);
  if (!native_ && fds.empty())
    log_warn("cannot find the Execution Trace's descriptor: a child forked in the window could "
             "write into it (chakrashim check reports that as duplicate node ids)");
  return true;
}

bool HostTrace::start_recording() {
  if (native_) EtRecorder::instance().enable();
  else observer_.enable();
  generation_.fetch_add(1);
  recording_.store(enabled());
  return recording_.load();
}

void HostTrace::stop_recording() {
  recording_.store(false);
  generation_.fetch_add(1);
  if (native_) EtRecorder::instance().disable();
  else observer_.disable();
}

bool HostTrace::enabled() const {
  return native_ ? EtRecorder::instance().enabled() : observer_.enabled();
}

void HostTrace::finish(bool other_threads) {
  recording_.store(false);
  generation_.fetch_add(1);
  if (!native_ && observer_.added() && other_threads) {
    // torch's disable is a flag, and its remove writes the file's tail
    // without the lock its callbacks write under: an op that another thread
    // started just before the disable could still be writing its node (a
    // race TSan showed on a job with a second thread running ops). Ops take
    // microseconds; let theirs finish. Only when other threads ran ops.
    observer_.disable();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  remove();
}

void HostTrace::remove() {
  if (native_) EtRecorder::instance().remove();
  else observer_.remove();
  for (auto& fd : fds_) fd.store(-1);
}

void HostTrace::write_process_groups(const std::string& pg_config) {
  if (pg_node_written_.load() || !recording_.load()) return;
  // What torch's Python ExecutionTraceObserver.start() writes and its C++
  // enable does not: Chakra reads the process groups from this node (by
  // name; the thread does not matter). A USER_SCOPE record with the JSON as
  // its one input, recorded by the ET like any op. No lock of the capture's
  // is held: the record runs its op-span callback too.
  const std::uint64_t generation = generation_.load();
  {
    at::RecordFunction rf(at::RecordScope::USER_SCOPE);
    if (rf.isActive()) {
      const c10::IValue input(pg_config);
      rf.before("## process_group:init ##", c10::ArrayRef<const c10::IValue>(&input, 1));
    }
  }
  // Written only if the ET recorded from before the record to after it.
  if (recording_.load() && generation_.load() == generation) pg_node_written_.store(true);
}

void HostTrace::on_forked_child() {
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull >= 0) {
    for (auto& slot : fds_) {
      const int fd = slot.load(std::memory_order_relaxed);
      if (fd >= 0) ::dup2(devnull, fd);
    }
    ::close(devnull);
  }
  observer_.silence_in_forked_child();
  EtRecorder::instance().silence_in_forked_child();
}

}  // namespace chakrashim::bridge
