#include "bridge/et_observer.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <c10/util/Logging.h>
#include <torch/csrc/profiler/standalone/execution_trace_observer.h>

#include <cstdlib>
#include <cstring>

namespace chakrashim::bridge {

namespace impl = torch::profiler::impl;

namespace {

// Raises torch's (c10's) log threshold to ERROR for one call: enable and
// disable each log a WARNING line that would change the job's stderr.
// FLAGS_caffe2_log_level is process-global; another thread's warning in the
// same microseconds would be lost too, which is the lesser harm.
class QuietTorchLog {
 public:
  QuietTorchLog() : saved_(FLAGS_caffe2_log_level) { FLAGS_caffe2_log_level = 2; }
  ~QuietTorchLog() { FLAGS_caffe2_log_level = saved_; }
  QuietTorchLog(const QuietTorchLog&) = delete;
  QuietTorchLog& operator=(const QuietTorchLog&) = delete;

 private:
  int saved_;
};

// The descriptor whose /proc/self/fd link is `path`, or -1.
int find_fd_of(const std::string& path) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  int found = -1;
  while (dirent* e = ::readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd <= 2 || fd == ::dirfd(dir)) continue;
    char link[PATH_MAX];
    const std::string entry = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t n = ::readlink(entry.c_str(), link, sizeof link - 1);
    if (n > 0 && path.compare(0, std::string::npos, link, static_cast<std::size_t>(n)) == 0) {
      found = fd;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

}  // namespace

namespace {
// torch keeps the observer in GlobalStateManager<ExecutionTraceObserver>::
// singleton()::singleton_, a library-local static whose one member is a
// std::shared_ptr<ExecutionTraceObserver> (torch/csrc/profiler/util.h). Our
// own instantiation of that template would be a different object, so it is
// read from libtorch through a handle (RTLD_DEFAULT cannot see an
// RTLD_LOCAL libtorch). nullptr when this torch has no such symbol.
const std::shared_ptr<void>* torch_et_slot() {
  void* torch = ::dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);
  if (!torch) return nullptr;
  void* sym = ::dlsym(torch,
                      "_ZZN5torch8profiler4impl18GlobalStateManagerINS1_"
                      "22ExecutionTraceObserverEE9singletonEvE10singleton_");
  ::dlclose(torch);  // libtorch stays loaded: the job holds it
  return static_cast<const std::shared_ptr<void>*>(sym);
}
}  // namespace

bool EtObserver::someone_else_observing() {
  const auto* slot = torch_et_slot();
  return slot && slot->get() != nullptr;
}

bool EtObserver::add(const std::string& partial_path, std::string& error) {
  if (state_ != State::none) {
    error = "the Execution Trace observer was already used in this process";
    return false;
  }
  bool ok = false;
  {
    QuietTorchLog quiet;
    ok = impl::addExecutionTraceObserver(partial_path);
  }
  if (!ok) {
    error = "torch could not open " + partial_path + " for the Execution Trace";
    state_ = State::removed;  // never call remove on a half-added observer
    return false;
  }
  state_ = State::disabled;
  fd_ = find_fd_of(partial_path);
  return true;
}

void EtObserver::enable() {
  if (state_ != State::disabled) return;
  QuietTorchLog quiet;
  impl::enableExecutionTraceObserver();
  state_ = State::enabled;
}

void EtObserver::disable() {
  if (state_ != State::enabled) return;
  QuietTorchLog quiet;
  impl::disableExecutionTraceObserver();
  state_ = State::disabled;
}

void EtObserver::remove() {
  if (!added()) return;
  disable();
  // torch's remove deletes the observer while another thread may be inside
  // its start callback, which read the raw pointer just before (seen as a
  // heap-use-after-free under TSan, with a user thread running ops at the
  // window's end). A reference of ours keeps the object alive for the rest
  // of the process; torch still finalizes the file and unregisters.
  if (const auto* slot = torch_et_slot()) keep_alive_ = *slot;
  QuietTorchLog quiet;
  impl::removeExecutionTraceObserver();
  state_ = State::removed;
  fd_ = -1;
}

}  // namespace chakrashim::bridge
