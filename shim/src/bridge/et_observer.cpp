#include "bridge/et_observer.h"

#include <dirent.h>
#include <sys/stat.h>
#include <dlfcn.h>
#include <unistd.h>

#include <c10/util/Logging.h>
#include <torch/csrc/profiler/standalone/execution_trace_observer.h>

#include <climits>
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

// Every descriptor open on the file at `path`, matched by device and inode
// (fstat), so that any spelling of the path finds it. /proc/self/fd lists
// the open descriptors; without /proc, the low ones are tried.
std::vector<int> fds_open_on(const std::string& path) {
  std::vector<int> found;
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return found;
  const auto match = [&](int fd) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == target.st_dev &&
        st.st_ino == target.st_ino)
      found.push_back(fd);
  };
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    // The link's target first: only a descriptor on the same file is
    // fstat'ed. Another thread of ours (the writer of an earlier window, still
    // at work when the next one arms) opens and closes its own descriptors
    // meanwhile, and an fstat of one of those races with its close.
    char resolved[PATH_MAX];
    const bool have_real = ::realpath(path.c_str(), resolved) != nullptr;
    while (dirent* e = ::readdir(dir)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const int fd = std::atoi(e->d_name);
      if (fd <= 2 || fd == ::dirfd(dir)) continue;
      if (have_real) {
        char target_path[PATH_MAX];
        const ssize_t n = ::readlinkat(::dirfd(dir), e->d_name, target_path, sizeof target_path - 1);
        if (n <= 0) continue;
        target_path[n] = '\0';
        if (std::strcmp(target_path, resolved) != 0) continue;
      }
      match(fd);
    }
    ::closedir(dir);
  } else {
    for (int fd = 3; fd < 4096; ++fd) match(fd);
  }
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
  // Once removed, torch takes a new observer (repeated and triggered
  // windows, docs/on-demand.md): its slot is empty again, and the old one is
  // kept alive by us (remove()).
  if (added()) {
    error = "the Execution Trace observer is already added in this process";
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
  fds_ = fds_open_on(partial_path);
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
  if (const auto* slot = torch_et_slot()) keep_alive_.push_back(*slot);
  QuietTorchLog quiet;
  impl::removeExecutionTraceObserver();
  state_ = State::removed;
  fds_.clear();
}

void EtObserver::silence_in_forked_child() {
  if (state_ != State::enabled) return;  // disabled: torch's callback is off already
  QuietTorchLog quiet;
  impl::disableExecutionTraceObserver();
  state_ = State::disabled;
}

}  // namespace chakrashim::bridge
