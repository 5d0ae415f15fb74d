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

#include "buffer_pool.h"
#include "cuda_driver.h"
#include "cupti_library.h"
#include "record_decoder.h"

namespace chakrashim::collector {

namespace {

// Ours: Kineto (torch.profiler) uses CUSTOM0 and CUSTOM1 (DESIGN.md 4.5).
constexpr CUpti_ExternalCorrelationKind kOurKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;

// The driver calls Chakra counts as launches (TRACE_FORMAT.md), enabled one
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

// Kineto's spellings (libkineto cupti_strings.cpp), so that tools keyed on
// its names (HTA's memcpy/memset classification) read ours alike.
const char* memcpy_kind_string(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "<unknown>";
  }
}

const char* memory_kind_string(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN: return "Unknown";
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unrecognized";
  }
}

const char* sync_type_string(std::uint32_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
    default: return "Unknown Sync";
  }
}

const char* overhead_kind_string(std::uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "Resource";
    default: return "Unknown";
  }
}

struct State {
  std::mutex mutex;  // start/stop
  std::unique_ptr<CuptiLibrary> lib;  // kept once loaded: never dlclose'd
  std::unique_ptr<BufferPool> pool;   // kept mapped: CUPTI may hold a buffer
  std::atomic<BufferPool*> pool_ptr{nullptr};
  std::atomic<const CuptiApi*> api{nullptr};
  std::atomic<bool> active{false};
  std::optional<RecordDecoder> decoder;
  std::vector<CUpti_ActivityKind> enabled;
  std::vector<CUpti_CallbackId> driver_enabled;
  CudaDriver driver;

  // Completed buffers, from CUPTI's threads to the decode thread.
  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<std::pair<std::uint8_t*, std::size_t>> queue;
  bool draining = false;
  std::thread decode_thread;
  std::atomic<std::uint64_t> cupti_dropped{0};

  // The decode thread's alone until stop() joins it.
  DeviceCapture capture;
  std::int64_t clock_offset_ns = 0;
  std::size_t max_events = 0;
  std::unordered_map<const char*, std::uint32_t> kernel_name_by_ptr;
  std::unordered_map<std::string, std::uint32_t> name_index;
  std::unordered_map<std::uint64_t, std::uint32_t> keyed_name;  // (kind, key) -> index

  std::mutex threads_mutex;
  std::vector<std::pair<std::uint32_t, std::int64_t>> threads;
};

State& state() {
  // Never destroyed: CUPTI may call our buffer callbacks during exit.
  alignas(State) static unsigned char storage[sizeof(State)];
  static State* s = new (storage) State();
  return *s;
}

std::uint32_t intern(State& s, std::string name) {
  auto it = s.name_index.find(name);
  if (it != s.name_index.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(s.capture.names.size());
  s.capture.names.push_back(name);
  s.name_index.emplace(std::move(name), index);
  return index;
}

std::uint32_t keyed(State& s, std::uint64_t key, std::string (*make)(State&, std::uint64_t)) {
  auto it = s.keyed_name.find(key);
  if (it != s.keyed_name.end()) return it->second;
  const std::uint32_t index = intern(s, make(s, key));
  s.keyed_name.emplace(key, index);
  return index;
}

std::string api_name(State& s, std::uint64_t key) {
  const bool runtime = (key >> 32) == 1;
  const auto cbid = static_cast<std::uint32_t>(key);
  const char* raw = nullptr;
  const CuptiApi* api = s.api.load();
  if (api && api->GetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                                  cbid, &raw) == CUPTI_SUCCESS && raw) {
    return std::string(strip_version_suffix(raw));
  }
  return std::string(runtime ? "cuda_runtime_cbid_" : "cuda_driver_cbid_") + std::to_string(cbid);
}

void decode_buffer(State& s, std::uint8_t* buffer, std::size_t valid) {
  const CuptiApi* api = s.api.load();
  if (!api || !s.decoder || valid == 0) return;
  CUpti_Activity* record = nullptr;
  const char* last_ptr = nullptr;
  std::uint32_t last_index = 0;
  while (api->ActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    Decoded d = s.decoder->decode(record);
    switch (d.outcome) {
      case DecodeOutcome::skipped:
        continue;
      case DecodeOutcome::invalid:
        ++s.capture.invalid_records;
        continue;
      case DecodeOutcome::correlation:
        s.capture.correlations.emplace_back(d.corr_correlation, d.corr_external);
        continue;
      case DecodeOutcome::event:
        break;
    }
    DeviceEvent& e = d.event;
    if (s.capture.events.size() >= s.max_events) {
      // Over CHAKRA_MAX_MEMORY: counted, and the trace says where it was cut.
      ++s.capture.dropped_records;
      if (!s.capture.truncated_at_ns) s.capture.truncated_at_ns = e.start_ns + s.clock_offset_ns;
      continue;
    }
    e.start_ns += s.clock_offset_ns;
    e.end_ns += s.clock_offset_ns;
    switch (e.kind) {
      case DeviceEventKind::kernel:
        if (e.extra) e.extra += static_cast<std::uint64_t>(s.clock_offset_ns);
        if (d.kernel_name == last_ptr && last_ptr) {
          e.name = last_index;
        } else {
          auto it = s.kernel_name_by_ptr.find(d.kernel_name);
          if (it == s.kernel_name_by_ptr.end()) {
            const std::uint32_t index = intern(s, d.kernel_name ? d.kernel_name : "<unnamed kernel>");
            it = s.kernel_name_by_ptr.emplace(d.kernel_name, index).first;
          }
          e.name = last_index = it->second;
          last_ptr = d.kernel_name;
        }
        break;
      case DeviceEventKind::runtime:
      case DeviceEventKind::driver:
        e.name = keyed(s, (std::uint64_t{e.kind == DeviceEventKind::runtime ? 1u : 2u} << 32) | e.context,
                       &api_name);
        break;
      case DeviceEventKind::memcpy:
        // copy kind, source and destination memory kinds (record_decoder).
        e.name = keyed(s, (3ULL << 32) | e.copy[0] | (e.copy[1] << 8) | (e.copy[2] << 16),
                       [](State&, std::uint64_t k) {
          return std::string("Memcpy ") + memcpy_kind_string(k & 0xff) + " (" +
                 memory_kind_string((k >> 8) & 0xff) + " -> " + memory_kind_string((k >> 16) & 0xff) + ")";
        });
        break;
      case DeviceEventKind::memset:
        e.name = keyed(s, (4ULL << 32) | e.copy[1], [](State&, std::uint64_t k) {
          return std::string("Memset (") + memory_kind_string(k & 0xff) + ")";
        });
        break;
      case DeviceEventKind::sync:
        e.name = keyed(s, (5ULL << 32) | e.name, [](State&, std::uint64_t k) {
          return std::string(sync_type_string(static_cast<std::uint32_t>(k)));
        });
        break;
      case DeviceEventKind::overhead:
        e.name = keyed(s, (6ULL << 32) | e.name, [](State&, std::uint64_t k) {
          return std::string(overhead_kind_string(static_cast<std::uint32_t>(k)));
        });
        break;
    }
    s.capture.events.push_back(e);
  }
}

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
    decode_buffer(s, item.first, item.second);
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
    if (s.decode_thread.joinable() && !s.draining) {
      s.queue.emplace_back(buffer, valid);
      s.queue_cv.notify_one();
      return;
    }
  }
  // Late (after stop): nothing decodes it any more.
  if (BufferPool* pool = s.pool_ptr.load()) pool->release(buffer);
}

// CUPTI's clock against CLOCK_REALTIME, the host trace's (DESIGN.md 4.5):
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

Collector& Collector::instance() {
  alignas(Collector) static unsigned char storage[sizeof(Collector)];
  static Collector* c = new (storage) Collector();
  return *c;
}

bool Collector::cuda_present(const CollectorConfig& config) {
  return config.cupti_lib.has_value() || CudaDriver::loaded().present();
}

bool Collector::active() const { return state().active.load(std::memory_order_acquire); }

StartOutcome Collector::start(const CollectorConfig& config) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active.load()) return {"ok", ""};
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
  s.capture = DeviceCapture{};
  s.max_events = std::max<std::size_t>(config.event_bytes / sizeof(DeviceEvent), 1024);
  s.cupti_dropped.store(0);

  if (CUptiResult r = api.ActivityRegisterCallbacks(&on_buffer_request, &on_buffer_complete);
      r != CUPTI_SUCCESS) {
    return {"failed", "cuptiActivityRegisterCallbacks: " + s.lib->result_string(r) +
                          "; the device trace holds host ops only"};
  }
  bool calibrated = false;
  s.clock_offset_ns = clock_offset(api, calibrated);
  s.capture.clock = calibrated ? "calibrated" : "realtime";

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
  {
    std::lock_guard<std::mutex> q(s.queue_mutex);
    s.draining = false;
    s.queue.clear();
  }
  {
    std::lock_guard<std::mutex> t(s.threads_mutex);
    s.threads.clear();
  }
  s.decode_thread = std::thread([&s] { decode_loop(s); });
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

DeviceCapture Collector::stop() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active.exchange(false)) return DeviceCapture{};
  const CuptiApi& api = s.lib->api();
  // CUPTI's flush does not wait for the device: work launched in the last
  // step must have finished for its records to exist.
  if (s.driver.present()) s.driver.synchronize();
  for (const auto kind : s.enabled) api.ActivityDisable(kind);
  s.enabled.clear();
  for (const auto cbid : s.driver_enabled) api.ActivityEnableDriverApi(cbid, 0);
  s.driver_enabled.clear();
  // Blocking: every buffer, partial ones too, reaches on_buffer_complete.
  api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard<std::mutex> q(s.queue_mutex);
    s.draining = true;
    s.queue_cv.notify_all();
  }
  if (s.decode_thread.joinable()) s.decode_thread.join();
  DeviceCapture out = std::move(s.capture);
  s.capture = DeviceCapture{};
  out.cupti = "ok";
  out.dropped_records += s.cupti_dropped.load();
  {
    std::lock_guard<std::mutex> t(s.threads_mutex);
    out.threads = std::move(s.threads);
    s.threads.clear();
  }
  if (s.driver.present()) out.device_properties_json = s.driver.device_properties_json();
  return out;
}

}  // namespace chakrashim::collector
