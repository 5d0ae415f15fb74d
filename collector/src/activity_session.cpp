// Collector (chakrashim/collector.h): one CUPTI Activity API session per
// window. See the header for threads; here, what CUPTI is asked and why.
#include "chakrashim/collector.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>

#include "buffer_decoder.h"
#include "buffer_pool.h"
#include "cuda_driver.h"
#include "cupti_library.h"
#include "chakrashim/immortal.h"
#include "record_decoder.h"

namespace chakrashim::collector {

namespace {

// Ours: Kineto (torch.profiler) uses CUSTOM0 and CUSTOM1 (docs/design.md section 4.5).
constexpr CUpti_ExternalCorrelationKind kOurKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;

// The driver calls Chakra counts as launches (docs/trace-format.md), enabled one
// by one: the whole DRIVER kind would record every cu* call torch makes.
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

std::int64_t realtime_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

struct State {
  std::mutex mutex;  // start/stop
  std::unique_ptr<CuptiLibrary> lib;  // kept once loaded: never dlclose'd
  std::unique_ptr<BufferPool> pool;   // kept mapped: CUPTI may hold a buffer
  std::atomic<BufferPool*> pool_ptr{nullptr};
  std::atomic<const CuptiApi*> api{nullptr};
  std::atomic<bool> active{false};
  std::atomic<bool> standing_back{false};  // stand_back() left kinds enabled
  std::optional<RecordDecoder> decoder;
  std::vector<CUpti_ActivityKind> enabled;
  std::vector<CUpti_CallbackId> driver_enabled;
  CudaDriver driver;

  // Completed buffers, from CUPTI's threads to the decode thread.
  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<std::pair<std::uint8_t*, std::size_t>> queue;
  bool draining = false;
  bool decoding = false;  // a decode thread takes buffers (under queue_mutex)
  std::thread decode_thread;  // started and joined by start/stop only
  std::atomic<std::uint64_t> cupti_dropped{0};

  // The decode thread's alone until stop() joins it.
  std::optional<BufferDecoder> buffers;

  std::mutex threads_mutex;
  std::vector<std::pair<std::uint32_t, std::int64_t>> threads;
};

State& state() { return immortal<State>(); }

void decode_loop(State& s) {
  for (;;) {
    std::pair<std::uint8_t*, std::size_t> item;
    {
      std::unique_lock<std::mutex> lock(s.queue_mutex);
      s.queue_cv.wait(lock, [&] { return !s.queue.empty() || s.draining; });
      if (s.queue.empty()) return;  // draining, and nothing left
      item = s.queue.front();
      s.queue.pop_front();
    }
    s.buffers->decode(item.first, item.second);
    if (BufferPool* pool = s.pool_ptr.load()) pool->release(item.first);
  }
}

void CUPTIAPI on_buffer_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  BufferPool* pool = state().pool_ptr.load();
  std::uint8_t* b = pool ? pool->acquire() : nullptr;
  *buffer = b;
  *size = b ? pool->buffer_size() : 0;
  *max_records = 0;
}

void CUPTIAPI on_buffer_complete(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                                 std::size_t /*size*/, std::size_t valid) {
  State& s = state();
  if (const CuptiApi* api = s.api.load()) {
    std::size_t dropped = 0;
    if (api->ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
      s.cupti_dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (!buffer) return;
  {
    std::lock_guard<std::mutex> lock(s.queue_mutex);
    if (s.decoding && !s.draining) {
      s.queue.emplace_back(buffer, valid);
      s.queue_cv.notify_one();
      return;
    }
  }
  // Late (after stop): nothing decodes it any more.
  if (BufferPool* pool = s.pool_ptr.load()) pool->release(buffer);
}

// CUPTI's clock against CLOCK_REALTIME, the host trace's (docs/design.md section 4.5):
// the best of a few bracketed samples. Zero when within 20 us.
std::int64_t clock_offset(const CuptiApi& api, bool& calibrated) {
  std::int64_t best_width = INT64_MAX, offset = 0;
  for (int i = 0; i < 7; ++i) {
    const std::int64_t before = realtime_ns();
    std::uint64_t t = 0;
    if (api.GetTimestamp(&t) != CUPTI_SUCCESS) break;
    const std::int64_t after = realtime_ns();
    if (after - before < best_width) {
      best_width = after - before;
      offset = before + (after - before) / 2 - static_cast<std::int64_t>(t);
    }
  }
  calibrated = offset > 20000 || offset < -20000;
  return calibrated ? offset : 0;
}

// Lets the decode thread finish what is queued, and joins it.
void stop_decoding(State& s) {
  {
    std::lock_guard<std::mutex> q(s.queue_mutex);
    s.draining = true;
    s.queue_cv.notify_all();
  }
  if (s.decode_thread.joinable()) s.decode_thread.join();
  std::lock_guard<std::mutex> q(s.queue_mutex);
  s.decoding = false;
}

std::optional<std::string> libtorch_dir() {
  std::optional<std::string> dir;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        const char* name = info->dlpi_name;
        if (!name || !std::strstr(name, "/libtorch_cpu.so")) return 0;
        std::string path(name);
        *static_cast<std::optional<std::string>*>(out) = path.substr(0, path.rfind('/'));
        return 1;
      },
      &dir);
  return dir;
}

}  // namespace

Collector& Collector::instance() { return immortal<Collector>(); }

bool Collector::cuda_present(const CollectorConfig& config) {
  return config.cupti_lib.has_value() || CudaDriver::loaded().present();
}

bool Collector::active() const { return state().active.load(std::memory_order_acquire); }

StartOutcome Collector::start(const CollectorConfig& config) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active.load()) return {"ok", ""};
  if (s.standing_back.load()) return {"profiler_active", ""};
  if (!cuda_present(config)) return {"absent", ""};
  if (!s.lib) {
    LocateInput where;
    where.override_path = config.cupti_lib;
    where.torch_lib_dir = config.torch_lib_dir ? config.torch_lib_dir : libtorch_dir();
    where.cuda_home = config.cuda_home;
    std::string error;
    s.lib = CuptiLibrary::open(where, error);
    if (!s.lib) return {"absent", "cannot load libcupti (" + error + "); the device trace holds host ops only"};
  }
  const CuptiApi& api = s.lib->api();
  s.driver = CudaDriver::loaded();
  s.decoder.emplace(s.lib->version(), static_cast<std::uint32_t>(kOurKind));
  if (!s.pool) {
    const auto [size, count] = BufferPool::shape_for_cap(config.buffer_bytes);
    s.pool = std::make_unique<BufferPool>(size, count);
    if (!s.pool->ok()) {
      s.pool.reset();
      return {"failed", "cannot map CUPTI's activity buffers; the device trace holds host ops only"};
    }
  }
  s.pool_ptr.store(s.pool.get());
  s.api.store(&api);
  s.cupti_dropped.store(0);

  if (CUptiResult r = api.ActivityRegisterCallbacks(&on_buffer_request, &on_buffer_complete);
      r != CUPTI_SUCCESS) {
    return {"failed", "cuptiActivityRegisterCallbacks: " + s.lib->result_string(r) +
                          "; the device trace holds host ops only"};
  }
  bool calibrated = false;
  const std::int64_t offset = clock_offset(api, calibrated);
  s.buffers.emplace(*s.decoder, api.ActivityGetNextRecord, api.GetCallbackName, offset,
                    config.budget);
  s.buffers->capture().clock = calibrated ? "calibrated" : "realtime";

  {
    std::lock_guard<std::mutex> t(s.threads_mutex);
    s.threads.clear();
  }
  // The decode thread first: CUPTI may complete a buffer as soon as a kind
  // is enabled.
  {
    std::lock_guard<std::mutex> q(s.queue_mutex);
    s.draining = false;
    s.decoding = true;
    s.queue.clear();
  }
  try {
    s.decode_thread = std::thread([&s] { decode_loop(s); });
  } catch (const std::exception& e) {
    // No thread (a pids-limited cgroup): left uncaught, this escaped arm.
    // Nothing is enabled yet, so no buffer is queued.
    {
      std::lock_guard<std::mutex> q(s.queue_mutex);
      s.decoding = false;
    }
    s.buffers.reset();
    return {"failed", std::string("cannot start the thread that decodes CUPTI's buffers (") +
                          e.what() + "); the device trace holds host ops only"};
  }
  std::vector<CUpti_ActivityKind> kinds{CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                        CUPTI_ACTIVITY_KIND_RUNTIME,
                                        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMCPY2,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
  if (config.sync_records) kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (config.overhead_records) kinds.push_back(CUPTI_ACTIVITY_KIND_OVERHEAD);
  s.enabled.clear();
  for (const auto kind : kinds) {
    const CUptiResult r = api.ActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
      s.enabled.push_back(kind);
      continue;
    }
    for (const auto k : s.enabled) api.ActivityDisable(k);
    s.enabled.clear();
    api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    stop_decoding(s);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      return {"refused", "CUPTI refused activity collection (" + s.lib->result_string(r) +
                             ": another profiler, such as Nsight Systems, holds it); the device "
                             "trace holds host ops only"};
    }
    return {"failed", "cuptiActivityEnable(kind " + std::to_string(static_cast<int>(kind)) +
                          "): " + s.lib->result_string(r) + "; the device trace holds host ops only"};
  }
  s.driver_enabled.clear();
  if (api.ActivityEnableDriverApi) {
    for (const auto cbid : kDriverLaunches)
      if (api.ActivityEnableDriverApi(cbid, 1) == CUPTI_SUCCESS) s.driver_enabled.push_back(cbid);
  }
  s.active.store(true, std::memory_order_release);
  return {"ok", ""};
}

bool Collector::push(std::uint64_t external_id) {
  State& s = state();
  if (!s.active.load(std::memory_order_acquire)) return false;
  const CuptiApi* api = s.api.load(std::memory_order_relaxed);
  return api->ActivityPushExternalCorrelationId(kOurKind, external_id) == CUPTI_SUCCESS;
}

void Collector::pop() {
  // Also after stop: an op that was open at disarm still leaves CUPTI's
  // stack balanced. The library is never unloaded.
  const CuptiApi* api = state().api.load(std::memory_order_relaxed);
  if (!api) return;
  std::uint64_t last = 0;
  api->ActivityPopExternalCorrelationId(kOurKind, &last);
}

void Collector::note_thread(std::int64_t os_tid) {
  // Once per thread per process: there is one window per process.
  thread_local bool noted = false;
  if (noted || !active()) return;
  noted = true;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.threads_mutex);
  s.threads.emplace_back(static_cast<std::uint32_t>(::pthread_self()), os_tid);
}

namespace {
// cuCtxSynchronize on every device, on a thread of its own, waited for at
// most `limit`. The thread owns a reference to its state, so one that is
// still stuck after the limit (a hung collective) touches nothing freed.
bool synchronize_within(const CudaDriver& driver, std::chrono::milliseconds limit) {
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  };
  auto shared = std::make_shared<Shared>();
  try {
    std::thread([shared, driver] {
      driver.synchronize();
      std::lock_guard<std::mutex> lock(shared->m);
      shared->done = true;
      shared->cv.notify_all();
    }).detach();
  } catch (...) {
    return driver.synchronize();  // no thread to be had: as before, unbounded
  }
  std::unique_lock<std::mutex> lock(shared->m);
  return shared->cv.wait_for(lock, limit, [&] { return shared->done; });
}
}  // namespace

DeviceCapture Collector::stop(std::chrono::milliseconds sync_limit) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active.exchange(false)) return DeviceCapture{};
  const CuptiApi& api = s.lib->api();
  // CUPTI's flush does not wait for the device: work launched in the last
  // step must have finished for its records to exist.
  std::string sync = "none";
  if (s.driver.present()) sync = synchronize_within(s.driver, sync_limit) ? "ok" : "timed_out";
  for (const auto kind : s.enabled) api.ActivityDisable(kind);
  s.enabled.clear();
  for (const auto cbid : s.driver_enabled) api.ActivityEnableDriverApi(cbid, 0);
  s.driver_enabled.clear();
  // Blocking: every buffer, partial ones too, reaches on_buffer_complete.
  api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  stop_decoding(s);
  // Drops after the last completed buffer (the pool was empty to the end,
  // so no buffer completed to ask with) are counted here.
  if (std::size_t late = 0; api.ActivityGetNumDroppedRecords(nullptr, 0, &late) == CUPTI_SUCCESS)
    s.cupti_dropped.fetch_add(late, std::memory_order_relaxed);
  DeviceCapture out = std::move(s.buffers->capture());
  s.buffers.reset();
  out.cupti = "ok";
  out.device_sync = sync;
  out.dropped_records += s.cupti_dropped.load();
  {
    std::lock_guard<std::mutex> t(s.threads_mutex);
    out.threads = std::move(s.threads);
    s.threads.clear();
  }
  // Device properties ask the driver, which a hung device may block too.
  if (s.driver.present() && sync != "timed_out")
    out.device_properties_json = s.driver.device_properties_json();
  return out;
}

void Collector::stand_back() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active.exchange(false)) return;
  // No disable, no flush: the kinds and the buffer callbacks may be the
  // profiler's now. Buffers that complete from here reach its callbacks.
  // The kinds we enabled are disabled once the profiler is gone.
  s.standing_back.store(true);
  stop_decoding(s);
  s.buffers.reset();
  std::lock_guard<std::mutex> t(s.threads_mutex);
  s.threads.clear();
}

bool Collector::standing_back() const { return state().standing_back.load(); }

void Collector::release_after_stand_back() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.standing_back.exchange(false) || !s.lib) return;
  const CuptiApi& api = s.lib->api();
  for (const auto kind : s.enabled) api.ActivityDisable(kind);
  s.enabled.clear();
  for (const auto cbid : s.driver_enabled) api.ActivityEnableDriverApi(cbid, 0);
  s.driver_enabled.clear();
}

}  // namespace chakrashim::collector
