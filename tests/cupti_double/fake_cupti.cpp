// libfake_cupti.so: a test double of NVIDIA's libcupti (CUDA 13, CUPTI API
// version 130001) for exercising the CUPTI activity collector end to end on a
// machine without a GPU or libcuda. Test-only; never installed.
//
// WHAT IT EMULATES
//   * The entry points the collector binds, with the exact prototypes of the
//     CUDA 13 headers: cuptiGetVersion, cuptiGetResultString, cuptiGetTimestamp,
//     cuptiGetCallbackName, cuptiActivityRegisterCallbacks, cuptiActivityEnable,
//     cuptiActivityDisable, cuptiActivityEnableDriverApi,
//     cuptiActivityEnableRuntimeApi, cuptiActivityFlushAll,
//     cuptiActivityGetNextRecord, cuptiActivityGetNumDroppedRecords,
//     cuptiActivityPushExternalCorrelationId, cuptiActivityPopExternalCorrelationId.
//     Nothing else is exported.
//   * A GPU driven by external-correlation push/pop: popping the id of a leaf
//     op (no other push on that thread between its push and its pop) while at
//     least one activity kind is enabled emulates CUDA calls made inside that
//     op: FAKE_CUPTI_KERNELS_PER_OP cudaLaunchKernel calls, or one
//     cudaMemcpyAsync (every FAKE_CUPTI_MEMCPY_EVERY-th leaf op) or one
//     cudaMemsetAsync (every FAKE_CUPTI_MEMSET_EVERY-th; memcpy wins when both
//     fall on the same op). Each call gets a correlation id from one
//     process-wide counter (1, 2, ...). Per call, in this order:
//       - if an API record is written and EXTERNAL_CORRELATION is enabled: one
//         CUpti_ActivityExternalCorrelation per external kind whose stack on
//         this thread is not empty, carrying that stack's top id (for the
//         popped kind, the popped id itself);
//       - the API record (CUpti_ActivityAPI) if the call is enabled: kind
//         RUNTIME (cbid cudaLaunchKernel_v7000 / cudaMemcpyAsync_v3020 /
//         cudaMemsetAsync_v3020) when the runtime API is traced, else kind
//         DRIVER (cuLaunchKernel / cuMemcpyHtoDAsync_v2 / cuMemsetD8Async)
//         when the driver API is; never both. Traced = the cbid's setting from
//         cuptiActivityEnable{Runtime,Driver}Api if one was made after the
//         last enable/disable of the kind, else whether the kind is enabled;
//       - the device record, independent of API tracing: CUpti_ActivityKernel10
//         if CONCURRENT_KERNEL (kind CONCURRENT_KERNEL) or KERNEL (kind KERNEL)
//         is enabled, CUpti_ActivityMemcpy6 if MEMCPY is, CUpti_ActivityMemset4
//         if MEMSET is.
//     Timing: the op window W = [push time, pop time] (the double's clock,
//     taken on entry to push and to pop) is cut into n equal slots (n calls);
//     call j runs from slot start + L/4 to slot end - L/4 (L = slot length), so
//     calls are strictly inside W and strictly disjoint. n is capped at W/4 ns;
//     an op shorter than 4 ns emits nothing. The device activity runs from
//     call end + 2000 ns to + 7000 ns (kernel: queued = call end + 500,
//     submitted = call end + 700, completed = end), on device 0, context 1,
//     stream 7; kernel grid 4x1x1, block 128x1x1, 32 registers, 1024 B static
//     shared memory, name "_Z9fake_gemmPKfS0_Pfi" (static storage); memcpy
//     HtoD pageable->device 4096 B async; memset 4096 B value 0 async.
//     API records: processId = getpid(), threadId = low 32 bits of
//     pthread_self(), returnValue 0.
//   * Every timestamp (records and cuptiGetTimestamp) is CLOCK_REALTIME in ns
//     plus FAKE_CUPTI_CLOCK_OFFSET_NS.
//   * Buffers, modelled on CUPTI's asynchronous buffer API. Records go into
//     the buffer the request callback gave (8-byte aligned, CUDA-13 record
//     sizes, laid out as the real cuptiActivityGetNextRecord walks them). The
//     request callback runs on the emitting thread, without the double's
//     lock, one request at a time (other threads needing a buffer wait for
//     it); push, pop and FlushAll called from inside it return
//     CUPTI_ERROR_INVALID_OPERATION. A full buffer (the next record does not
//     fit, or maxNumRecords is reached; 0 = no limit) is handed to an
//     internal worker thread (created on first need, all signals blocked)
//     that calls the completion callback with (NULL, 0, buffer, size,
//     validSize), one buffer at a time, in completion order.
//   * Dropped records: a request answered with NULL, with fewer bytes than
//     the record needs, or with a buffer that is not 8-byte aligned drops
//     that record; a non-NULL unusable buffer goes straight back through the
//     completion callback (worker thread) with validSize 0. The next record
//     asks again: at most one request per record. Records emitted while no
//     callbacks are registered are dropped too. cuptiActivityGetNumDroppedRecords
//     returns the drops since its previous call and resets the count (it
//     ignores context and stream); it may be called from either callback.
//   * cuptiActivityFlushAll(flag), any flag: takes the current buffer (even
//     one with no record), waits until every buffer completed before the
//     call has been delivered (by the worker; by the flushing thread itself
//     when no worker runs), then calls the completion callback for the taken
//     buffer on the calling thread, and returns: when it returns, every
//     record emitted before the call has been delivered. Without a current
//     buffer it completes nothing of its own. Emission on other threads goes
//     on meanwhile, into a fresh buffer, and concurrent flushes are fine;
//     so the completion callback can run on the worker and on a flushing
//     thread at the same time. From inside a completion or request callback
//     it returns CUPTI_ERROR_INVALID_OPERATION (it would deadlock); before
//     cuptiActivityRegisterCallbacks too, as documented.
//   * External correlation: a per-thread stack per kind (UNKNOWN..CUSTOM2);
//     INVALID or out-of-range kinds give CUPTI_ERROR_INVALID_PARAMETER; a pop
//     on an empty stack gives CUPTI_ERROR_QUEUE_EMPTY (an unbalanced pop).
//   * Process life: no global constructors; the worker is joined (after it
//     has delivered what is queued; 10 s at most) by a handler registered
//     with atexit on the first entry point call, and again by the library
//     destructor. After that, completed buffers wait for the next FlushAll,
//     which delivers them on its own thread; a buffer still being filled at
//     exit is never completed (as with real CUPTI without a final flush).
//     A fork() child keeps the registered callbacks, the enables and the
//     correlation counter (its memory is a copy) but has no worker, no
//     current or queued buffer (the parent's are forgotten, never completed
//     in the child), empty stacks on the forking thread, no dropped count and
//     zeroed stats, and writes stats only if it calls an entry point itself.
//
// KNOBS (environment, read once, at the first entry point call)
//   FAKE_CUPTI_CLOCK_OFFSET_NS  signed ns added to CLOCK_REALTIME (default 0)
//   FAKE_CUPTI_REFUSE=1         cuptiActivityEnable returns
//                               CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
//                               as when another profiler owns CUPTI
//   FAKE_CUPTI_MEMCPY_EVERY     every N-th leaf op is a memcpy (default 3; 0 never)
//   FAKE_CUPTI_MEMSET_EVERY     every N-th leaf op is a memset (default 0 = never)
//   FAKE_CUPTI_KERNELS_PER_OP   kernel launches per kernel op (default 1, max 1e6)
//   FAKE_CUPTI_STATS            stats file path, "%p" -> pid (default: none)
//   Malformed values are ignored (default kept) with one line on stderr.
//
// STATS (FAKE_CUPTI_STATS): one JSON object, written at exit by the atexit
// handler and again by the library destructor (so that a client's exit-time
// flush after the handler still counts), to PATH.tmp.<pid> then renamed.
//   pid; pushes, pops (successful ones), unbalanced_pops (pops on an empty
//   stack), push_kinds (external kinds pushed), enabled_at_exit (activity
//   kinds), enables (successful cuptiActivityEnable calls), refused_enables,
//   flushes (successful FlushAll calls), leaf_ops (leaf pops while something
//   was enabled, >= 4 ns long: the memcpy/memset cadence counts these),
//   short_ops (shorter leaf pops, no emission), correlation_ids (calls
//   emulated), launches (kernel-launch API records written), kernels,
//   memcpys, memsets (device records written), api_records (all API records
//   written), extcorr_records, dropped (records dropped, ever),
//   buffers_requested (request callback calls), buffers_completed
//   (completion callback calls, empty ones included), worker_deliveries,
//   flush_deliveries (on the worker / on flushing threads),
//   buffers_undelivered (queued or being filled when written),
//   runtime_api_enabled, driver_api_enabled (cbids switched on one by one),
//   callbacks_registered (bool).
//   Records written + dropped = every record the double tried to emit.

// WHAT IT DOES NOT EMULATE
//   No CUDA, no devices, contexts or streams, no callback API (cuptiSubscribe,
//   cuptiEnableCallback, ...), no activity attributes, no flush period, no
//   other record kinds (cuptiActivityGetNextRecord knows only the sizes of
//   KERNEL, CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, RUNTIME, DRIVER,
//   EXTERNAL_CORRELATION, SYNCHRONIZATION and OVERHEAD and gives
//   CUPTI_ERROR_INVALID_KIND for others). SYNCHRONIZATION, OVERHEAD and any
//   other in-range kind can be enabled but produce nothing; MEMCPY2 is never
//   emitted. Kernels of concurrent launches may overlap on stream 7 (no
//   stream serialization). cuptiGetCallbackName knows a few dozen common
//   runtime and driver cbids (the self-test compares them with the real
//   library's names), others give CUPTI_ERROR_INVALID_PARAMETER.
//   Deviations of cuptiActivityGetNextRecord from the real one only on
//   malformed input: a record pointer outside [buffer, buffer + valid) gives
//   CUPTI_ERROR_INVALID_KIND without being read, and a kind field that would
//   straddle validBufferSizeBytes gives CUPTI_ERROR_MAX_LIMIT_REACHED.
//
// Links only libc (no libstdc++ calls: plain arrays and malloc); builds as
// C++17 and later.

#define CUPTI_LIB 1  // the headers' own switch: their declarations get default visibility
#include <cupti.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#define FAKE_CUPTI_API extern "C" __attribute__((visibility("default")))

namespace {

// ---------------------------------------------------------------- utilities

// A growable array of trivially copyable T on malloc (no libstdc++).
template <typename T>
struct Vec {
  T* p;
  size_t n;
  size_t cap;
  bool push(const T& v) {
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 16;
      T* q = static_cast<T*>(realloc(p, nc * sizeof(T)));
      if (!q) return false;
      p = q;
      cap = nc;
    }
    p[n++] = v;
    return true;
  }
  void release() {
    free(p);
    p = nullptr;
    n = cap = 0;
  }
};

constexpr int kExtKinds = CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
constexpr int kActivityKinds = CUPTI_ACTIVITY_KIND_COUNT;
constexpr uint64_t kDeviceDelayNs = 2000;
constexpr uint64_t kDeviceDurationNs = 5000;
constexpr uint64_t kQueuedDelayNs = 500;
constexpr uint64_t kSubmittedDelayNs = 700;
constexpr uint32_t kStreamId = 7;
constexpr uint32_t kContextId = 1;
constexpr uint32_t kDeviceId = 0;
constexpr uint64_t kTransferBytes = 4096;
constexpr const char kKernelName[] = "_Z9fake_gemmPKfS0_Pfi";

struct Config {
  int64_t clock_offset_ns;
  bool refuse;
  uint64_t memcpy_every;
  uint64_t memset_every;
  uint64_t kernels_per_op;
  char* stats_path;  // malloc'd or null
};

struct Pending {
  uint8_t* buf;
  size_t size;
  size_t valid;
};

struct Stats {
  uint64_t pushes, pops, unbalanced_pops, enables, refused_enables, flushes;
  uint64_t leaf_ops, short_ops, correlation_ids;
  uint64_t launches, kernels, memcpys, memsets, api_records, extcorr_records;
  uint64_t dropped, buffers_requested, buffers_completed;
  uint64_t worker_deliveries, flush_deliveries;
  uint32_t push_kinds;  // bit k: kind k was pushed
};

struct Entry {
  uint64_t id;
  uint64_t t_push;
  uint64_t seq;  // the thread's push count at this push: leaf iff unchanged at the pop
};

struct ThreadState {
  Vec<Entry> stacks[kExtKinds];
  uint64_t push_seq;
};

// Everything below is guarded by g_mu. State is zero-initialized (static
// storage, no constructor): no global constructors in this library.
struct State {
  CUpti_BuffersCallbackRequestFunc req;
  CUpti_BuffersCallbackCompleteFunc comp;
  bool enabled[kActivityKinds];
  // Per-cbid settings made by cuptiActivityEnable{Runtime,Driver}Api after the
  // last enable/disable of the kind: 0 none, 1 off, 2 on.
  uint8_t runtime_api[CUPTI_RUNTIME_TRACE_CBID_SIZE];
  uint8_t driver_api[CUPTI_DRIVER_TRACE_CBID_SIZE];
  // The buffer being filled.
  uint8_t* cur;
  size_t cur_size, cur_used, cur_max, cur_n;
  // Completed buffers not yet delivered, FIFO: q.p[q_head .. q.n).
  Vec<Pending> q;
  size_t q_head;
  uint64_t enqueued, delivered;  // counts; delivery is in queue order
  bool delivering;               // one queued buffer is being delivered
  bool requesting;               // a thread is inside the request callback
  bool worker_running, worker_stop, worker_shutdown;
  pthread_t worker;
  uint64_t generation;  // bumped in a fork child
  uint32_t next_corr;
  uint64_t leaf_ops;
  uint64_t dropped_since;
  uint32_t pid;
  Stats stats;
  Config cfg;
};

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_work_cv = PTHREAD_COND_INITIALIZER;  // the worker waits here
pthread_cond_t g_done_cv = PTHREAD_COND_INITIALIZER;  // flushers wait here for deliveries
pthread_cond_t g_req_cv = PTHREAD_COND_INITIALIZER;   // emitters wait here for a request
State g;
std::atomic<bool> g_touched{false};  // an entry point was called in this process
pthread_once_t g_once = PTHREAD_ONCE_INIT;
pthread_key_t g_key;
bool g_key_ok = false;

thread_local ThreadState* t_state = nullptr;
thread_local bool t_in_request = false;   // inside the request callback
thread_local bool t_in_complete = false;  // inside a completion callback

class Lock {
 public:
  Lock() { pthread_mutex_lock(&g_mu); }
  ~Lock() { pthread_mutex_unlock(&g_mu); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

// --------------------------------------------------------------- config

bool parse_i64(const char* s, int64_t& out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end) return false;
  out = v;
  return true;
}

int64_t env_i64(const char* name, int64_t dflt, int64_t lo, int64_t hi) {
  const char* s = getenv(name);
  if (!s) return dflt;
  int64_t v = 0;
  if (!parse_i64(s, v) || v < lo || v > hi) {
    fprintf(stderr, "fake_cupti: ignoring %s=%s (want a decimal in [%lld, %lld])\n", name, s,
            static_cast<long long>(lo), static_cast<long long>(hi));
    return dflt;
  }
  return v;
}

void load_config() {
  Config& c = g.cfg;
  c.clock_offset_ns = env_i64("FAKE_CUPTI_CLOCK_OFFSET_NS", 0, INT64_MIN, INT64_MAX);
  const char* r = getenv("FAKE_CUPTI_REFUSE");
  c.refuse = r && strcmp(r, "1") == 0;
  c.memcpy_every = static_cast<uint64_t>(env_i64("FAKE_CUPTI_MEMCPY_EVERY", 3, 0, INT64_MAX));
  c.memset_every = static_cast<uint64_t>(env_i64("FAKE_CUPTI_MEMSET_EVERY", 0, 0, INT64_MAX));
  c.kernels_per_op = static_cast<uint64_t>(env_i64("FAKE_CUPTI_KERNELS_PER_OP", 1, 0, 1000000));
  const char* p = getenv("FAKE_CUPTI_STATS");
  c.stats_path = (p && *p) ? strdup(p) : nullptr;
}

// ---------------------------------------------------------------- clock

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t t = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  return t + static_cast<uint64_t>(g.cfg.clock_offset_ns);  // wraps like int64 addition
}

// ---------------------------------------------------------------- records

// The record each kind the double writes has, in the version it writes.
struct RecordSize {
  uint32_t kind;
  size_t size;
};
constexpr RecordSize kRecordSizes[] = {
    {CUPTI_ACTIVITY_KIND_KERNEL, sizeof(CUpti_ActivityKernel10)},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof(CUpti_ActivityKernel10)},
    {CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6)},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, sizeof(CUpti_ActivityMemcpyPtoP4)},
    {CUPTI_ACTIVITY_KIND_MEMSET, sizeof(CUpti_ActivityMemset4)},
    {CUPTI_ACTIVITY_KIND_RUNTIME, sizeof(CUpti_ActivityAPI)},
    {CUPTI_ACTIVITY_KIND_DRIVER, sizeof(CUpti_ActivityAPI)},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, sizeof(CUpti_ActivityExternalCorrelation)},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, sizeof(CUpti_ActivitySynchronization2)},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, sizeof(CUpti_ActivityOverhead3)},
};

constexpr size_t record_size(uint32_t kind) {
  for (const RecordSize& r : kRecordSizes)
    if (r.kind == kind) return r.size;
  return 0;
}

constexpr bool records_are_8_byte_multiples() {
  for (const RecordSize& r : kRecordSizes)
    if (r.size % 8 != 0) return false;
  return true;
}
static_assert(records_are_8_byte_multiples(), "CUPTI records are 8-byte multiples");

// ------------------------------------------------------------ delivery

bool queue_empty() { return g.q_head == g.q.n; }

Pending queue_pop() {
  Pending p = g.q.p[g.q_head++];
  if (g.q_head == g.q.n) g.q_head = g.q.n = 0;
  return p;
}

// Delivers the oldest queued buffer on this thread; lock held on entry and exit,
// released around the callback. Returns false if this process forked inside
// the callback (the child must not account for the parent's buffer).
bool deliver_front_locked(bool from_worker) {
  Pending p = queue_pop();
  g.delivering = true;
  CUpti_BuffersCallbackCompleteFunc comp = g.comp;
  const uint64_t gen = g.generation;
  pthread_mutex_unlock(&g_mu);
  t_in_complete = true;
  if (comp) comp(nullptr, 0, p.buf, p.size, p.valid);
  t_in_complete = false;
  pthread_mutex_lock(&g_mu);
  if (gen != g.generation) return false;
  g.delivering = false;
  g.delivered++;
  g.stats.buffers_completed++;
  if (from_worker)
    g.stats.worker_deliveries++;
  else
    g.stats.flush_deliveries++;
  pthread_cond_broadcast(&g_done_cv);
  pthread_cond_broadcast(&g_work_cv);
  return true;
}

void* worker_main(void*) {
  pthread_mutex_lock(&g_mu);
  for (;;) {
    if (!queue_empty() && !g.delivering) {
      if (!deliver_front_locked(true)) {  // a fork child of the callback: leave
        pthread_mutex_unlock(&g_mu);
        return nullptr;
      }
      continue;
    }
    if (g.worker_stop && queue_empty()) break;
    pthread_cond_wait(&g_work_cv, &g_mu);
  }
  // From now on flushers deliver what is queued themselves.
  g.worker_running = false;
  pthread_cond_broadcast(&g_done_cv);
  pthread_mutex_unlock(&g_mu);
  return nullptr;
}

void ensure_worker_locked() {
  if (g.worker_running || g.worker_shutdown) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the worker must not take the job's signals
  const int rc = pthread_create(&g.worker, nullptr, worker_main, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc == 0) {
    g.worker_running = true;
    pthread_setname_np(g.worker, "fake_cupti");
  }
  // On failure, FlushAll delivers the queue on its own thread.
}

void enqueue_locked(uint8_t* buf, size_t size, size_t valid) {
  if (!g.q.push(Pending{buf, size, valid})) {
    // Out of memory for the queue: deliver nothing, but do not lose track
    // silently either.
    fprintf(stderr, "fake_cupti: out of memory queueing a completed buffer\n");
    return;
  }
  g.enqueued++;
  ensure_worker_locked();
  pthread_cond_broadcast(&g_work_cv);
}

void complete_current_locked() {
  uint8_t* b = g.cur;
  g.cur = nullptr;
  enqueue_locked(b, g.cur_size, g.cur_used);
}

// Stops and joins the worker after it has delivered the queue. Idempotent.
void shutdown_worker() {
  pthread_mutex_lock(&g_mu);
  g.worker_shutdown = true;
  if (!g.worker_running) {
    pthread_mutex_unlock(&g_mu);
    return;
  }
  g.worker_stop = true;
  pthread_cond_broadcast(&g_work_cv);
  pthread_t w = g.worker;
  pthread_mutex_unlock(&g_mu);
  if (pthread_equal(w, pthread_self())) {  // exit() from inside a completion callback
    pthread_detach(w);
  } else {
    timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    if (pthread_timedjoin_np(w, nullptr, &until) != 0) {
      fprintf(stderr, "fake_cupti: worker still inside a completion callback after 10 s; "
                      "not waiting for it\n");
      pthread_detach(w);
    }
  }
}

// Writes one record into the current buffer, asking for one if needed (at
// most one request per record). Lock held on entry and exit; released
// around the request callback. Returns false when the record was dropped.
bool put_locked(const void* rec, size_t sz) {
  for (;;) {
    if (g.cur && g.cur_used + sz <= g.cur_size && (g.cur_max == 0 || g.cur_n < g.cur_max)) {
      memcpy(g.cur + g.cur_used, rec, sz);
      g.cur_used += sz;
      g.cur_n++;
      return true;
    }
    if (g.cur) complete_current_locked();
    if (!g.requesting) break;
    pthread_cond_wait(&g_req_cv, &g_mu);  // another thread's request may bring a buffer
  }
  uint8_t* b = nullptr;
  size_t size = 0, max_records = 0;
  if (CUpti_BuffersCallbackRequestFunc req = g.req) {
    g.requesting = true;
    pthread_mutex_unlock(&g_mu);
    t_in_request = true;
    req(&b, &size, &max_records);
    t_in_request = false;
    pthread_mutex_lock(&g_mu);
    g.requesting = false;
    pthread_cond_broadcast(&g_req_cv);
    g.stats.buffers_requested++;
  }
  // Only a requester installs a buffer, so there is no current one here.
  if (b && (reinterpret_cast<uintptr_t>(b) & 7u) == 0 && size >= sz) {
    g.cur = b;
    g.cur_size = size;
    g.cur_max = max_records;
    memcpy(b, rec, sz);
    g.cur_used = sz;
    g.cur_n = 1;
    return true;
  }
  if (b) enqueue_locked(b, size, 0);  // unusable: give it back empty
  g.dropped_since++;
  g.stats.dropped++;
  return false;
}

bool any_enabled_locked() {
  for (int k = 0; k < kActivityKinds; ++k)
    if (g.enabled[k]) return true;
  return false;
}

bool api_traced_locked(bool runtime, uint32_t cbid) {
  const uint8_t s = runtime ? g.runtime_api[cbid] : g.driver_api[cbid];
  if (s) return s == 2;
  return g.enabled[runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER];
}

enum class OpType { kKernel, kMemcpy, kMemset };

uint32_t next_correlation_locked() {
  if (g.next_corr == 0) g.next_corr = 1;
  g.stats.correlation_ids++;
  return g.next_corr++;
}

// What every GPU op's record holds alike: when it ran, on the one device,
// context and stream, and the launch it belongs to.
template <typename Record>
void place_gpu_op(Record& r, uint64_t start, uint64_t end, uint32_t correlation) {
  r.start = start;
  r.end = end;
  r.deviceId = kDeviceId;
  r.contextId = kContextId;
  r.streamId = kStreamId;
  r.correlationId = correlation;
}

// One emulated CUDA call [ls, le] of the given type, with its records.
void emit_call_locked(const ThreadState* ts, OpType type, uint64_t ls, uint64_t le) {
  uint32_t rt_cbid, drv_cbid;
  switch (type) {
    case OpType::kKernel:
      rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
      drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
      break;
    case OpType::kMemcpy:
      rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
      drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
      break;
    default:
      rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020;
      drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async;
      break;
  }
  CUpti_ActivityKind api_kind = CUPTI_ACTIVITY_KIND_INVALID;
  uint32_t api_cbid = 0;
  if (api_traced_locked(true, rt_cbid)) {
    api_kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api_cbid = rt_cbid;
  } else if (api_traced_locked(false, drv_cbid)) {
    api_kind = CUPTI_ACTIVITY_KIND_DRIVER;
    api_cbid = drv_cbid;
  }
  CUpti_ActivityKind dev_kind = CUPTI_ACTIVITY_KIND_INVALID;
  if (type == OpType::kKernel) {
    if (g.enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
      dev_kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    else if (g.enabled[CUPTI_ACTIVITY_KIND_KERNEL])
      dev_kind = CUPTI_ACTIVITY_KIND_KERNEL;
  } else if (type == OpType::kMemcpy) {
    if (g.enabled[CUPTI_ACTIVITY_KIND_MEMCPY]) dev_kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  } else if (g.enabled[CUPTI_ACTIVITY_KIND_MEMSET]) {
    dev_kind = CUPTI_ACTIVITY_KIND_MEMSET;
  }
  if (api_kind == CUPTI_ACTIVITY_KIND_INVALID && dev_kind == CUPTI_ACTIVITY_KIND_INVALID) return;

  const uint32_t c = next_correlation_locked();
  if (api_kind != CUPTI_ACTIVITY_KIND_INVALID) {
    if (g.enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]) {
      for (int k = 1; k < kExtKinds; ++k) {
        const Vec<Entry>& s = ts->stacks[k];
        if (s.n == 0) continue;
        CUpti_ActivityExternalCorrelation x;
        memset(&x, 0, sizeof x);
        x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        x.externalKind = static_cast<CUpti_ExternalCorrelationKind>(k);
        x.externalId = s.p[s.n - 1].id;
        x.correlationId = c;
        if (put_locked(&x, sizeof x)) g.stats.extcorr_records++;
      }
    }
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = api_kind;
    a.cbid = api_cbid;
    a.start = ls;
    a.end = le;
    a.processId = g.pid;
    a.threadId = static_cast<uint32_t>(static_cast<unsigned long>(pthread_self()));
    a.correlationId = c;
    a.returnValue = 0;
    if (put_locked(&a, sizeof a)) {
      g.stats.api_records++;
      if (type == OpType::kKernel) g.stats.launches++;
    }
  }
  const uint64_t start = le + kDeviceDelayNs;
  const uint64_t end = start + kDeviceDurationNs;
  if (dev_kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || dev_kind == CUPTI_ACTIVITY_KIND_KERNEL) {
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = dev_kind;
    k.registersPerThread = 32;
    k.partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
    k.partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
    place_gpu_op(k, start, end, c);
    k.completed = end;
    k.gridX = 4;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 128;
    k.blockY = 1;
    k.blockZ = 1;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 0;
    k.gridId = c;
    k.name = kKernelName;
    k.queued = le + kQueuedDelayNs;
    k.submitted = le + kSubmittedDelayNs;
    k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    k.sharedMemoryExecuted = 1024;
    k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
    k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    if (put_locked(&k, sizeof k)) g.stats.kernels++;
  } else if (dev_kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m.bytes = kTransferBytes;
    place_gpu_op(m, start, end, c);
    m.runtimeCorrelationId = c;
    m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    m.copyCount = 1;
    if (put_locked(&m, sizeof m)) g.stats.memcpys++;
  } else if (dev_kind == CUPTI_ACTIVITY_KIND_MEMSET) {
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = 0;
    m.bytes = kTransferBytes;
    place_gpu_op(m, start, end, c);
    m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    if (put_locked(&m, sizeof m)) g.stats.memsets++;
  }
}

// The leaf op whose entry `e` is still on top of its stack ends at t_pop.
void emit_leaf_locked(const ThreadState* ts, const Entry& e, uint64_t t_pop) {
  if (t_pop <= e.t_push) {
    g.stats.short_ops++;
    return;
  }
  const uint64_t w = t_pop - e.t_push;
  const uint64_t cap = w / 4;  // every call needs a slot of >= 4 ns
  if (cap == 0) {
    g.stats.short_ops++;
    return;
  }
  const uint64_t op = ++g.leaf_ops;
  g.stats.leaf_ops++;
  OpType type = OpType::kKernel;
  if (g.cfg.memcpy_every && op % g.cfg.memcpy_every == 0)
    type = OpType::kMemcpy;
  else if (g.cfg.memset_every && op % g.cfg.memset_every == 0)
    type = OpType::kMemset;
  uint64_t n = type == OpType::kKernel ? g.cfg.kernels_per_op : 1;
  if (n > cap) n = cap;
  // Slot j is [t_push + floor(w*j/n), t_push + floor(w*(j+1)/n)], computed
  // without overflow (n <= 1e6, so (w % n) * j < 1e12).
  const uint64_t q = w / n, r = w % n;
  for (uint64_t j = 0; j < n; ++j) {
    const uint64_t b0 = e.t_push + q * j + r * j / n;
    const uint64_t b1 = e.t_push + q * (j + 1) + r * (j + 1) / n;
    const uint64_t l = b1 - b0;  // >= floor(w / n) >= 4
    emit_call_locked(ts, type, b0 + l / 4, b1 - l / 4);
  }
}

// ---------------------------------------------------------------- stats

const char* const kJsonBool[] = {"false", "true"};

void write_stats() {
  if (!g_touched.load() || !g.cfg.stats_path) return;
  // The lock may be held by a thread that is stuck or gone at exit: try for 2 s.
  timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  const bool locked = pthread_mutex_timedlock(&g_mu, &until) == 0;
  const Stats s = g.stats;
  bool en[kActivityKinds];
  memcpy(en, g.enabled, sizeof en);
  const bool registered = g.req != nullptr;
  uint64_t rt_on = 0, drv_on = 0;
  for (int i = 0; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++i) rt_on += g.runtime_api[i] == 2;
  for (int i = 0; i < CUPTI_DRIVER_TRACE_CBID_SIZE; ++i) drv_on += g.driver_api[i] == 2;
  const uint64_t undelivered = (g.q.n - g.q_head) + (g.cur ? 1 : 0);
  if (locked) pthread_mutex_unlock(&g_mu);

  const pid_t pid = getpid();
  char path[4096];
  size_t o = 0;
  for (const char* p = g.cfg.stats_path; *p && o + 24 < sizeof path; ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      o += static_cast<size_t>(snprintf(path + o, sizeof path - o, "%d", static_cast<int>(pid)));
      ++p;
    } else {
      path[o++] = *p;
    }
  }
  path[o] = '\0';
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, static_cast<int>(pid));
  FILE* f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "fake_cupti: cannot write %s: %s\n", tmp, strerror(errno));
    return;
  }
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  fprintf(f, "{\"pid\":%d,\"pushes\":%llu,\"pops\":%llu,\"unbalanced_pops\":%llu,\"push_kinds\":[",
          static_cast<int>(pid), u(s.pushes), u(s.pops), u(s.unbalanced_pops));
  const char* sep = "";
  for (int k = 0; k < kExtKinds; ++k)
    if (s.push_kinds & (1u << k)) {
      fprintf(f, "%s%d", sep, k);
      sep = ",";
    }
  fprintf(f, "],\"enabled_at_exit\":[");
  sep = "";
  for (int k = 0; k < kActivityKinds; ++k)
    if (en[k]) {
      fprintf(f, "%s%d", sep, k);
      sep = ",";
    }
  fprintf(f,
          "],\"enables\":%llu,\"refused_enables\":%llu,\"flushes\":%llu,\"leaf_ops\":%llu,"
          "\"short_ops\":%llu,\"correlation_ids\":%llu,\"launches\":%llu,\"kernels\":%llu,"
          "\"memcpys\":%llu,\"memsets\":%llu,\"api_records\":%llu,\"extcorr_records\":%llu,"
          "\"dropped\":%llu,\"buffers_requested\":%llu,\"buffers_completed\":%llu,"
          "\"worker_deliveries\":%llu,\"flush_deliveries\":%llu,\"buffers_undelivered\":%llu,"
          "\"runtime_api_enabled\":%llu,\"driver_api_enabled\":%llu,"
          "\"callbacks_registered\":%s}\n",
          u(s.enables), u(s.refused_enables), u(s.flushes), u(s.leaf_ops), u(s.short_ops),
          u(s.correlation_ids), u(s.launches), u(s.kernels), u(s.memcpys), u(s.memsets),
          u(s.api_records), u(s.extcorr_records), u(s.dropped), u(s.buffers_requested),
          u(s.buffers_completed), u(s.worker_deliveries), u(s.flush_deliveries), u(undelivered),
          u(rt_on), u(drv_on), kJsonBool[registered]);
  const bool ok = fflush(f) == 0 && !ferror(f);
  if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
    fprintf(stderr, "fake_cupti: cannot write %s: %s\n", path, strerror(errno));
    unlink(tmp);
  }
}

// ------------------------------------------------------- process life

void exit_handler() {
  shutdown_worker();
  write_stats();
}

__attribute__((destructor)) void library_fini() {
  // After every atexit handler (or at dlclose): join again if needed and
  // rewrite the stats, so that an exit-time flush by the client still counts.
  shutdown_worker();
  write_stats();
}

void free_thread_state(void* p) {
  ThreadState* ts = static_cast<ThreadState*>(p);
  for (auto& s : ts->stacks) s.release();
  free(ts);
  t_state = nullptr;
}

void fork_prepare() { pthread_mutex_lock(&g_mu); }

void fork_parent() { pthread_mutex_unlock(&g_mu); }

void fork_child() {
  // Only this thread exists now. Keep the configuration, callbacks and
  // enables; forget every buffer and the worker.
  pthread_mutex_init(&g_mu, nullptr);
  pthread_cond_init(&g_work_cv, nullptr);
  pthread_cond_init(&g_done_cv, nullptr);
  pthread_cond_init(&g_req_cv, nullptr);
  g.requesting = false;
  g.cur = nullptr;
  g.cur_size = g.cur_used = g.cur_max = g.cur_n = 0;
  g.q.n = g.q_head = 0;
  g.enqueued = g.delivered = 0;
  g.delivering = false;
  g.worker_running = g.worker_stop = g.worker_shutdown = false;
  g.generation++;
  g.leaf_ops = 0;
  g.dropped_since = 0;
  g.pid = static_cast<uint32_t>(getpid());
  memset(&g.stats, 0, sizeof g.stats);
  if (t_state) {
    for (auto& s : t_state->stacks) s.n = 0;
  }
  t_in_complete = false;
  g_touched.store(false);
}

void init_once() {
  load_config();
  g.pid = static_cast<uint32_t>(getpid());
  g.next_corr = 1;
  g_key_ok = pthread_key_create(&g_key, free_thread_state) == 0;
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  atexit(exit_handler);
}

void touch() {
  pthread_once(&g_once, init_once);
  if (!g_touched.load(std::memory_order_relaxed)) g_touched.store(true);
}

ThreadState* thread_state() {
  if (t_state) return t_state;
  ThreadState* ts = static_cast<ThreadState*>(calloc(1, sizeof(ThreadState)));
  if (!ts) return nullptr;
  if (g_key_ok) pthread_setspecific(g_key, ts);
  t_state = ts;
  return ts;
}

bool valid_ext_kind(CUpti_ExternalCorrelationKind kind) {
  return static_cast<int>(kind) > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
         static_cast<int>(kind) < kExtKinds;
}

// ------------------------------------------------------ callback names

struct CbName {
  uint32_t cbid;
  const char* name;
};

#define FAKE_RT(x) {CUPTI_RUNTIME_TRACE_CBID_##x, #x}
const CbName kRuntimeNames[] = {
    FAKE_RT(cudaLaunchKernel_v7000),
    FAKE_RT(cudaLaunchKernelExC_v11060),
    FAKE_RT(cudaLaunchCooperativeKernel_v9000),
    FAKE_RT(cudaMemcpy_v3020),
    FAKE_RT(cudaMemcpyAsync_v3020),
    FAKE_RT(cudaMemcpy2DAsync_v3020),
    FAKE_RT(cudaMemcpyPeerAsync_v4000),
    FAKE_RT(cudaMemcpyFromSymbol_v3020),
    FAKE_RT(cudaMemset_v3020),
    FAKE_RT(cudaMemsetAsync_v3020),
    FAKE_RT(cudaMalloc_v3020),
    FAKE_RT(cudaFree_v3020),
    FAKE_RT(cudaMallocHost_v3020),
    FAKE_RT(cudaFreeHost_v3020),
    FAKE_RT(cudaHostAlloc_v3020),
    FAKE_RT(cudaMallocAsync_v11020),
    FAKE_RT(cudaFreeAsync_v11020),
    FAKE_RT(cudaStreamSynchronize_v3020),
    FAKE_RT(cudaStreamQuery_v3020),
    FAKE_RT(cudaStreamWaitEvent_v3020),
    FAKE_RT(cudaStreamCreateWithFlags_v5000),
    FAKE_RT(cudaStreamCreateWithPriority_v5050),
    FAKE_RT(cudaStreamIsCapturing_v10000),
    FAKE_RT(cudaStreamGetCaptureInfo_v10010),
    FAKE_RT(cudaDeviceSynchronize_v3020),
    FAKE_RT(cudaEventRecord_v3020),
    FAKE_RT(cudaEventSynchronize_v3020),
    FAKE_RT(cudaEventQuery_v3020),
    FAKE_RT(cudaEventCreateWithFlags_v3020),
    FAKE_RT(cudaEventDestroy_v3020),
    FAKE_RT(cudaGraphLaunch_v10000),
    FAKE_RT(cudaGetDevice_v3020),
    FAKE_RT(cudaSetDevice_v3020),
    FAKE_RT(cudaGetDeviceCount_v3020),
    FAKE_RT(cudaDeviceGetAttribute_v5000),
    FAKE_RT(cudaGetLastError_v3020),
    FAKE_RT(cudaPeekAtLastError_v3020),
    FAKE_RT(cudaFuncGetAttributes_v3020),
    FAKE_RT(cudaPointerGetAttributes_v4000),
};
#undef FAKE_RT

#define FAKE_DRV(x) {CUPTI_DRIVER_TRACE_CBID_##x, #x}
const CbName kDriverNames[] = {
    FAKE_DRV(cuLaunchKernel),
    FAKE_DRV(cuLaunchKernelEx),
    FAKE_DRV(cuLaunchCooperativeKernel),
    FAKE_DRV(cuMemcpyAsync),
    FAKE_DRV(cuMemcpyHtoDAsync_v2),
    FAKE_DRV(cuMemcpyDtoHAsync_v2),
    FAKE_DRV(cuMemcpyDtoDAsync_v2),
    FAKE_DRV(cuMemsetD8Async),
    FAKE_DRV(cuMemsetD32Async),
    FAKE_DRV(cuMemAlloc_v2),
    FAKE_DRV(cuMemFree_v2),
    FAKE_DRV(cuMemAllocAsync),
    FAKE_DRV(cuMemFreeAsync),
    FAKE_DRV(cuStreamSynchronize),
    FAKE_DRV(cuStreamWaitEvent),
    FAKE_DRV(cuCtxSynchronize),
    FAKE_DRV(cuEventRecord),
    FAKE_DRV(cuEventSynchronize),
    FAKE_DRV(cuGraphLaunch),
    FAKE_DRV(cuModuleGetFunction),
};
#undef FAKE_DRV

// ------------------------------------------------------ result strings

#define FAKE_RES(x) {x, #x}
struct ResName {
  CUptiResult r;
  const char* name;
};
const ResName kResultNames[] = {
    FAKE_RES(CUPTI_SUCCESS),
    FAKE_RES(CUPTI_ERROR_INVALID_PARAMETER),
    FAKE_RES(CUPTI_ERROR_INVALID_DEVICE),
    FAKE_RES(CUPTI_ERROR_INVALID_CONTEXT),
    FAKE_RES(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID),
    FAKE_RES(CUPTI_ERROR_INVALID_EVENT_ID),
    FAKE_RES(CUPTI_ERROR_INVALID_EVENT_NAME),
    FAKE_RES(CUPTI_ERROR_INVALID_OPERATION),
    FAKE_RES(CUPTI_ERROR_OUT_OF_MEMORY),
    FAKE_RES(CUPTI_ERROR_HARDWARE),
    FAKE_RES(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT),
    FAKE_RES(CUPTI_ERROR_API_NOT_IMPLEMENTED),
    FAKE_RES(CUPTI_ERROR_MAX_LIMIT_REACHED),
    FAKE_RES(CUPTI_ERROR_NOT_READY),
    FAKE_RES(CUPTI_ERROR_NOT_COMPATIBLE),
    FAKE_RES(CUPTI_ERROR_NOT_INITIALIZED),
    FAKE_RES(CUPTI_ERROR_INVALID_METRIC_ID),
    FAKE_RES(CUPTI_ERROR_INVALID_METRIC_NAME),
    FAKE_RES(CUPTI_ERROR_QUEUE_EMPTY),
    FAKE_RES(CUPTI_ERROR_INVALID_HANDLE),
    FAKE_RES(CUPTI_ERROR_INVALID_STREAM),
    FAKE_RES(CUPTI_ERROR_INVALID_KIND),
    FAKE_RES(CUPTI_ERROR_INVALID_EVENT_VALUE),
    FAKE_RES(CUPTI_ERROR_DISABLED),
    FAKE_RES(CUPTI_ERROR_INVALID_MODULE),
    FAKE_RES(CUPTI_ERROR_INVALID_METRIC_VALUE),
    FAKE_RES(CUPTI_ERROR_HARDWARE_BUSY),
    FAKE_RES(CUPTI_ERROR_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE),
    FAKE_RES(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES),
    FAKE_RES(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS),
    FAKE_RES(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE),
    FAKE_RES(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
    FAKE_RES(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED),
    FAKE_RES(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE),
    FAKE_RES(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES),
    FAKE_RES(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED),
    FAKE_RES(CUPTI_ERROR_INVALID_CHIP_NAME),
    FAKE_RES(CUPTI_ERROR_UNKNOWN),
};
#undef FAKE_RES

bool valid_kind(CUpti_ActivityKind kind) {
  return static_cast<int>(kind) > CUPTI_ACTIVITY_KIND_INVALID && static_cast<int>(kind) < kActivityKinds;
}

// Under the lock: RUNTIME or DRIVER switched on or off as a kind forgets the
// cbids switched one by one.
void forget_api_choices(CUpti_ActivityKind kind) {
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) memset(g.runtime_api, 0, sizeof g.runtime_api);
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) memset(g.driver_api, 0, sizeof g.driver_api);
}

// cuptiActivityEnableRuntimeApi and ...DriverApi: one cbid of `table`
// switched on (2) or off (1); 0 is never touched.
CUptiResult choose_api(uint8_t* table, CUpti_CallbackId cbid, CUpti_CallbackId invalid, CUpti_CallbackId size,
                       uint8_t enable) {
  touch();
  if (cbid == invalid || cbid >= size) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock l;
  table[cbid] = enable ? 2 : 1;
  return CUPTI_SUCCESS;
}

}  // namespace

// =================================================================== API

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  touch();
  if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  touch();
  if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
  for (const ResName& r : kResultNames)
    if (r.r == result) {
      *str = r.name;
      return CUPTI_SUCCESS;
    }
  *str = "<unknown>";  // as the real library answers
  return CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  touch();
  if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = now_ns();
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                                         const char** name) {
  touch();
  if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = nullptr;
  const CbName* table = nullptr;
  size_t n = 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    table = kRuntimeNames;
    n = sizeof kRuntimeNames / sizeof kRuntimeNames[0];
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    table = kDriverNames;
    n = sizeof kDriverNames / sizeof kDriverNames[0];
  }
  for (size_t i = 0; i < n; ++i)
    if (table[i].cbid == cbid) {
      *name = table[i].name;
      return CUPTI_SUCCESS;
    }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc funcBufferRequested,
    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  touch();
  if (!funcBufferRequested || !funcBufferCompleted) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock l;
  g.req = funcBufferRequested;
  g.comp = funcBufferCompleted;
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  touch();
  if (!valid_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  Lock l;
  if (g.cfg.refuse) {
    g.stats.refused_enables++;
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  g.enabled[kind] = true;
  forget_api_choices(kind);
  g.stats.enables++;
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  touch();
  if (!valid_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  Lock l;
  g.enabled[kind] = false;
  forget_api_choices(kind);
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid,
                                                                 uint8_t enable) {
  return choose_api(g.driver_api, cbid, CUPTI_DRIVER_TRACE_CBID_INVALID, CUPTI_DRIVER_TRACE_CBID_SIZE, enable);
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid,
                                                                  uint8_t enable) {
  return choose_api(g.runtime_api, cbid, CUPTI_RUNTIME_TRACE_CBID_INVALID, CUPTI_RUNTIME_TRACE_CBID_SIZE, enable);
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  touch();
  if (t_in_request || t_in_complete) return CUPTI_ERROR_INVALID_OPERATION;
  pthread_mutex_lock(&g_mu);
  if (!g.req) {
    pthread_mutex_unlock(&g_mu);
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  g.stats.flushes++;
  uint8_t* mine = g.cur;
  const size_t mine_size = g.cur_size, mine_valid = g.cur_used;
  g.cur = nullptr;
  const uint64_t target = g.enqueued;
  const uint64_t gen = g.generation;
  while (g.delivered < target) {
    if (!g.worker_running && !g.delivering && !queue_empty()) {
      if (!deliver_front_locked(false)) {  // forked inside the callback
        pthread_mutex_unlock(&g_mu);
        return CUPTI_SUCCESS;
      }
      continue;
    }
    pthread_cond_wait(&g_done_cv, &g_mu);
  }
  if (mine) {
    CUpti_BuffersCallbackCompleteFunc comp = g.comp;
    pthread_mutex_unlock(&g_mu);
    t_in_complete = true;
    comp(nullptr, 0, mine, mine_size, mine_valid);
    t_in_complete = false;
    pthread_mutex_lock(&g_mu);
    if (gen == g.generation) {
      g.stats.buffers_completed++;
      g.stats.flush_deliveries++;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer,
                                                               size_t validBufferSizeBytes,
                                                               CUpti_Activity** record) {
  touch();
  if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t off = 0;
  if (*record) {
    const uint8_t* r = reinterpret_cast<const uint8_t*>(*record);
    if (r < buffer || r >= buffer + validBufferSizeBytes) return CUPTI_ERROR_INVALID_KIND;
    uint32_t k;
    memcpy(&k, r, sizeof k);
    const size_t sz = record_size(k);
    if (!sz) return CUPTI_ERROR_INVALID_KIND;
    off = static_cast<size_t>(r - buffer) + sz;
  }
  if (off >= validBufferSizeBytes || validBufferSizeBytes - off < sizeof(uint32_t))
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  uint32_t k;
  memcpy(&k, buffer + off, sizeof k);
  const size_t sz = record_size(k);
  if (!sz) return CUPTI_ERROR_INVALID_KIND;
  if (validBufferSizeBytes - off < sz) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + off);
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context,
                                                                      uint32_t streamId,
                                                                      size_t* dropped) {
  touch();
  if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock l;
  *dropped = static_cast<size_t>(g.dropped_since);
  g.dropped_since = 0;
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI
cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  touch();
  const uint64_t t = now_ns();
  if (!valid_ext_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (t_in_request) return CUPTI_ERROR_INVALID_OPERATION;
  ThreadState* ts = thread_state();
  if (!ts) return CUPTI_ERROR_OUT_OF_MEMORY;
  Lock l;
  if (!ts->stacks[kind].push(Entry{id, t, ts->push_seq + 1})) return CUPTI_ERROR_OUT_OF_MEMORY;
  ts->push_seq++;
  g.stats.pushes++;
  g.stats.push_kinds |= 1u << kind;
  return CUPTI_SUCCESS;
}

FAKE_CUPTI_API CUptiResult CUPTIAPI
cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* lastId) {
  touch();
  const uint64_t t = now_ns();
  if (!valid_ext_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (t_in_request) return CUPTI_ERROR_INVALID_OPERATION;
  ThreadState* ts = t_state;
  Lock l;
  if (!ts || ts->stacks[kind].n == 0) {
    g.stats.unbalanced_pops++;
    return CUPTI_ERROR_QUEUE_EMPTY;
  }
  Vec<Entry>& s = ts->stacks[kind];
  const Entry e = s.p[s.n - 1];
  const uint64_t gen = g.generation;
  if (e.seq == ts->push_seq && any_enabled_locked()) emit_leaf_locked(ts, e, t);
  if (gen == g.generation) {  // else a fork child of the request callback: stacks are reset
    s.n--;
    g.stats.pops++;
  }
  if (lastId) *lastId = e.id;
  return CUPTI_SUCCESS;
}
