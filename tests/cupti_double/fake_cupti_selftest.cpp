// Self-test of the libcupti test double (libfake_cupti.so).
//
//   chakra_fake_cupti_selftest LIB [REAL_LIBCUPTI]
//
// dlopens LIB like the collector does and drives it as a collector would:
// buffer callbacks, enables, external-correlation push/pop on several
// threads, flushes. Each scenario runs in its own process (this program
// again, with its FAKE_CUPTI_* environment), because the double reads its
// knobs once and writes its stats file at exit; the parent then checks that
// file against what the scenario expected. With REAL_LIBCUPTI (the CUDA 13
// libcupti.so.13; skipped when absent), every delivered buffer is also walked
// with the real cuptiActivityGetNextRecord, which must see the same records
// at the same offsets, and the double's callback names and result strings are
// compared with the real library's (both work without a GPU).
#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* g_scenario = "main";
std::atomic<int> g_failures{0};

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s:%d [%s] CHECK failed: %s\n", __FILE__, __LINE__, g_scenario, #cond); \
      ++g_failures;                                                                          \
    }                                                                                        \
  } while (0)

#define CHECK_EQ(a, b)                                                                     \
  do {                                                                                     \
    const long long va_ = static_cast<long long>(a), vb_ = static_cast<long long>(b);      \
    if (va_ != vb_) {                                                                      \
      fprintf(stderr, "%s:%d [%s] CHECK_EQ failed: %s == %s (%lld vs %lld)\n", __FILE__,   \
              __LINE__, g_scenario, #a, #b, va_, vb_);                                     \
      ++g_failures;                                                                        \
    }                                                                                      \
  } while (0)

#define CHECK_STR(a, b)                                                                  \
  do {                                                                                   \
    const std::string sa_ = (a), sb_ = (b);                                              \
    if (sa_ != sb_) {                                                                    \
      fprintf(stderr, "%s:%d [%s] CHECK_STR failed: %s == %s (%s vs %s)\n", __FILE__,    \
              __LINE__, g_scenario, #a, #b, sa_.c_str(), sb_.c_str());                   \
      ++g_failures;                                                                      \
    }                                                                                    \
  } while (0)

// ------------------------------------------------------------ the APIs

struct Api {
  CUptiResult (*GetVersion)(uint32_t*);
  CUptiResult (*GetResultString)(CUptiResult, const char**);
  CUptiResult (*GetTimestamp)(uint64_t*);
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**);
  CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*Enable)(CUpti_ActivityKind);
  CUptiResult (*Disable)(CUpti_ActivityKind);
  CUptiResult (*EnableDriverApi)(CUpti_CallbackId, uint8_t);
  CUptiResult (*EnableRuntimeApi)(CUpti_CallbackId, uint8_t);
  CUptiResult (*FlushAll)(uint32_t);
  CUptiResult (*GetNextRecord)(uint8_t*, size_t, CUpti_Activity**);
  CUptiResult (*GetNumDroppedRecords)(CUcontext, uint32_t, size_t*);
  CUptiResult (*Push)(CUpti_ExternalCorrelationKind, uint64_t);
  CUptiResult (*Pop)(CUpti_ExternalCorrelationKind, uint64_t*);
};

Api A;
struct RealApi {
  CUptiResult (*GetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
} R;

template <typename F>
bool bind(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (!f) fprintf(stderr, "[%s] %s lacks %s\n", g_scenario, "library", name);
  return f != nullptr;
}

bool load_double(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "[%s] dlopen %s: %s\n", g_scenario, path, dlerror());
    return false;
  }
  return bind(h, "cuptiGetVersion", A.GetVersion) &&
         bind(h, "cuptiGetResultString", A.GetResultString) &&
         bind(h, "cuptiGetTimestamp", A.GetTimestamp) &&
         bind(h, "cuptiGetCallbackName", A.GetCallbackName) &&
         bind(h, "cuptiActivityRegisterCallbacks", A.RegisterCallbacks) &&
         bind(h, "cuptiActivityEnable", A.Enable) && bind(h, "cuptiActivityDisable", A.Disable) &&
         bind(h, "cuptiActivityEnableDriverApi", A.EnableDriverApi) &&
         bind(h, "cuptiActivityEnableRuntimeApi", A.EnableRuntimeApi) &&
         bind(h, "cuptiActivityFlushAll", A.FlushAll) &&
         bind(h, "cuptiActivityGetNextRecord", A.GetNextRecord) &&
         bind(h, "cuptiActivityGetNumDroppedRecords", A.GetNumDroppedRecords) &&
         bind(h, "cuptiActivityPushExternalCorrelationId", A.Push) &&
         bind(h, "cuptiActivityPopExternalCorrelationId", A.Pop);
}

bool load_real(const char* path) {
  if (!path || !*path || access(path, R_OK) != 0) return false;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "[%s] note: real libcupti %s does not load (%s); skipping its checks\n",
            g_scenario, path, dlerror());
    return false;
  }
  return bind(h, "cuptiActivityGetNextRecord", R.GetNextRecord) &&
         bind(h, "cuptiGetCallbackName", R.GetCallbackName) &&
         bind(h, "cuptiGetResultString", R.GetResultString);
}

uint64_t ts() {
  uint64_t t = 0;
  CHECK(A.GetTimestamp(&t) == CUPTI_SUCCESS);
  return t;
}

void spin_ns(uint64_t ns) {
  const uint64_t until = ts() + ns;
  while (ts() < until) {
  }
}

uint32_t tid32() { return static_cast<uint32_t>(static_cast<unsigned long>(pthread_self())); }

// ------------------------------------------------ a collector's buffers

enum class Give { kNormal, kNull, kSmall, kMisaligned };

struct Delivered {
  std::vector<uint64_t> data;  // a copy of the valid bytes, 8-byte aligned
  uint8_t* ptr;
  size_t size;
  size_t valid;
  pthread_t thread;
};

struct Harness {
  std::mutex mu;
  size_t buf_size = 1024;
  size_t max_records = 0;
  std::vector<Give> script;  // the first requests; kNormal after it
  uint64_t requests = 0;
  uint64_t completions = 0;
  std::map<uint8_t*, uint8_t*> outstanding;  // given pointer -> allocation
  std::vector<Delivered> delivered;
  std::set<uint8_t*> given_ever;
  std::atomic<uint64_t> dropped_seen{0};
  std::atomic<bool> callbacks_probed{false};
} H;

void CUPTIAPI on_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  std::lock_guard<std::mutex> l(H.mu);
  const Give g = H.requests < H.script.size() ? H.script[H.requests] : Give::kNormal;
  H.requests++;
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  if (g == Give::kNull) return;
  const size_t sz = g == Give::kSmall ? 16 : H.buf_size;
  void* mem = nullptr;
  if (posix_memalign(&mem, 64, sz + 8) != 0) return;
  uint8_t* p = static_cast<uint8_t*>(mem) + (g == Give::kMisaligned ? 4 : 0);
  H.outstanding[p] = static_cast<uint8_t*>(mem);
  H.given_ever.insert(p);
  *buffer = p;
  *size = sz;
  *max_records = g == Give::kNormal ? H.max_records : 0;
}

void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  CHECK(ctx == nullptr);
  CHECK_EQ(stream, 0);
  CHECK(valid <= size);
  if (!H.callbacks_probed.exchange(true)) {
    // Inside a completion callback: FlushAll would deadlock and is refused;
    // the calls Kineto makes there work.
    CHECK_EQ(A.FlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
    uint64_t t = 0;
    CHECK_EQ(A.GetTimestamp(&t), CUPTI_SUCCESS);
  }
  size_t dropped = 0;
  CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  H.dropped_seen += dropped;
  std::lock_guard<std::mutex> l(H.mu);
  H.completions++;
  auto it = H.outstanding.find(buffer);
  CHECK(it != H.outstanding.end());
  if (it == H.outstanding.end()) return;
  Delivered d;
  d.data.resize((valid + 7) / 8);
  if (valid) memcpy(d.data.data(), buffer, valid);
  d.ptr = buffer;
  d.size = size;
  d.valid = valid;
  d.thread = pthread_self();
  H.delivered.push_back(std::move(d));
  free(it->second);
  H.outstanding.erase(it);
}

// ------------------------------------------------------ record walking

struct Walked {
  std::vector<CUpti_ActivityAPI> api;
  std::vector<CUpti_ActivityExternalCorrelation> ext;
  std::vector<CUpti_ActivityKernel10> kernels;
  std::vector<CUpti_ActivityMemcpy6> memcpys;
  std::vector<CUpti_ActivityMemset4> memsets;
  size_t other = 0;
  size_t records = 0;
};

// Walks one buffer with the double (and the real library when loaded).
void walk(const Delivered& d, Walked& w, size_t* count = nullptr) {
  uint8_t* b = reinterpret_cast<uint8_t*>(const_cast<uint64_t*>(d.data.data()));
  if (d.valid == 0) {
    CUpti_Activity* r = nullptr;
    uint8_t dummy[8] = {0};
    CHECK_EQ(A.GetNextRecord(dummy, 0, &r), CUPTI_ERROR_MAX_LIMIT_REACHED);
    if (count) *count = 0;
    return;
  }
  std::vector<size_t> offsets;
  CUpti_Activity* r = nullptr;
  CUptiResult s;
  while ((s = A.GetNextRecord(b, d.valid, &r)) == CUPTI_SUCCESS) {
    offsets.push_back(static_cast<size_t>(reinterpret_cast<uint8_t*>(r) - b));
    w.records++;
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        w.api.push_back(*reinterpret_cast<CUpti_ActivityAPI*>(r));
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        w.ext.push_back(*reinterpret_cast<CUpti_ActivityExternalCorrelation*>(r));
        break;
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        w.kernels.push_back(*reinterpret_cast<CUpti_ActivityKernel10*>(r));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        w.memcpys.push_back(*reinterpret_cast<CUpti_ActivityMemcpy6*>(r));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        w.memsets.push_back(*reinterpret_cast<CUpti_ActivityMemset4*>(r));
        break;
      default:
        w.other++;
        break;
    }
  }
  CHECK_EQ(s, CUPTI_ERROR_MAX_LIMIT_REACHED);
  // Records fill the valid bytes exactly.
  if (!offsets.empty()) {
    CHECK_EQ(offsets.front(), 0);
    for (size_t o : offsets) CHECK_EQ(o % 8, 0);
  }
  if (count) *count = offsets.size();
  if (R.GetNextRecord) {
    std::vector<size_t> real;
    CUpti_Activity* rr = nullptr;
    CUptiResult rs;
    while ((rs = R.GetNextRecord(b, d.valid, &rr)) == CUPTI_SUCCESS)
      real.push_back(static_cast<size_t>(reinterpret_cast<uint8_t*>(rr) - b));
    CHECK_EQ(rs, CUPTI_ERROR_MAX_LIMIT_REACHED);
    CHECK(real == offsets);
  }
}

Walked walk_all(std::vector<Delivered>& ds) {
  Walked w;
  for (const Delivered& d : ds) walk(d, w);
  return w;
}

// ------------------------------------------------------ expectations

// The child writes "key json-text" lines; the parent compares them with the
// stats file the double writes at the child's exit.
std::vector<std::pair<std::string, std::string>> g_expect;

void expect(const std::string& key, long long v) { g_expect.emplace_back(key, std::to_string(v)); }
void expect_text(const std::string& key, const std::string& v) { g_expect.emplace_back(key, v); }

void write_expectations(const char* dir) {
  std::string path = std::string(dir) + "/" + g_scenario + ".expect";
  FILE* f = fopen(path.c_str(), "w");
  CHECK(f != nullptr);
  if (!f) return;
  for (auto& kv : g_expect) fprintf(f, "%s %s\n", kv.first.c_str(), kv.second.c_str());
  fclose(f);
}

std::string json_field(const std::string& doc, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  size_t p = doc.find(k);
  if (p == std::string::npos) return "<missing>";
  p += k.size();
  size_t e = p;
  if (doc[p] == '[')
    e = doc.find(']', p) + 1;
  else
    while (e < doc.size() && doc[e] != ',' && doc[e] != '}') ++e;
  return doc.substr(p, e - p);
}

std::string read_file(const std::string& path) {
  FILE* f = fopen(path.c_str(), "r");
  if (!f) return "";
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  fclose(f);
  return s;
}

std::string kinds_json(std::vector<int> ks) {
  std::sort(ks.begin(), ks.end());
  std::string s = "[";
  for (size_t i = 0; i < ks.size(); ++i) s += (i ? "," : "") + std::to_string(ks[i]);
  return s + "]";
}

// ------------------------------------------------------- leaf ops

struct LeafOp {
  uint32_t thread;
  uint64_t id;      // CUSTOM0 id
  uint64_t outer;   // CUSTOM1 id, 0 if none
  uint64_t before;  // timestamp before the push
  uint64_t after;   // timestamp after the pop
};

LeafOp leaf(uint64_t id, uint64_t outer, uint64_t spin) {
  LeafOp op{tid32(), id, outer, 0, 0};
  op.before = ts();
  CHECK_EQ(A.Push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id), CUPTI_SUCCESS);
  spin_ns(spin);
  uint64_t last = 0;
  CHECK_EQ(A.Pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last), CUPTI_SUCCESS);
  CHECK_EQ(last, id);
  op.after = ts();
  return op;
}

int enable_all(std::initializer_list<CUpti_ActivityKind> kinds) {
  int n = 0;
  for (auto k : kinds) {
    CHECK_EQ(A.Enable(k), CUPTI_SUCCESS);
    ++n;
  }
  return n;
}

// Checks every launch/transfer against the leaf op it came from: ids,
// timing, device record fields; correlation ids first_id, first_id + 1, ...
void check_calls(const Walked& w, const std::vector<LeafOp>& ops, bool want_outer_ext,
                 uint64_t expect_calls_per_kernel_op, uint32_t first_id = 1) {
  std::map<uint32_t, const CUpti_ActivityAPI*> api_by_c;
  for (const auto& a : w.api) {
    CHECK(api_by_c.emplace(a.correlationId, &a).second);  // unique correlation ids
    CHECK_EQ(a.processId, getpid());
    CHECK_EQ(a.returnValue, 0);
    CHECK(a.start < a.end);
  }
  std::map<uint32_t, std::vector<const CUpti_ActivityExternalCorrelation*>> ext_by_c;
  for (const auto& x : w.ext) ext_by_c[x.correlationId].push_back(&x);
  std::map<uint64_t, const LeafOp*> op_by_id;
  for (const auto& op : ops) op_by_id[op.id] = &op;
  std::map<uint64_t, std::vector<const CUpti_ActivityAPI*>> calls_by_op;
  for (const auto& a : w.api) {
    auto& xs = ext_by_c[a.correlationId];
    const CUpti_ActivityExternalCorrelation* x0 = nullptr;
    const CUpti_ActivityExternalCorrelation* x1 = nullptr;
    for (auto* x : xs) {
      if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
        CHECK(x0 == nullptr);
        x0 = x;
      } else if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) {
        CHECK(x1 == nullptr);
        x1 = x;
      } else {
        CHECK(!"unexpected external kind");
      }
    }
    CHECK(x0 != nullptr);
    if (!x0) continue;
    auto it = op_by_id.find(x0->externalId);
    CHECK(it != op_by_id.end());
    if (it == op_by_id.end()) continue;
    const LeafOp& op = *it->second;
    calls_by_op[op.id].push_back(&a);
    CHECK_EQ(a.threadId, op.thread);
    CHECK(op.before < a.start && a.end < op.after);  // strictly inside the op
    if (want_outer_ext && op.outer) {
      CHECK(x1 != nullptr);
      if (x1) CHECK_EQ(x1->externalId, op.outer);
    } else {
      CHECK(x1 == nullptr);
    }
  }
  // Launches of one op: disjoint, in order, right count.
  for (auto& kv : calls_by_op) {
    auto& v = kv.second;
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->start < b->start; });
    for (size_t i = 1; i < v.size(); ++i) CHECK(v[i - 1]->end < v[i]->start);
    if (v.front()->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
      CHECK_EQ(v.size(), expect_calls_per_kernel_op);
    else
      CHECK_EQ(v.size(), 1);
  }
  CHECK_EQ(calls_by_op.size(), ops.size());  // every leaf op launched something
  // Device records: one per call, timed after it.
  std::set<uint32_t> dev_c;
  for (const auto& k : w.kernels) {
    CHECK(dev_c.insert(k.correlationId).second);
    auto it = api_by_c.find(k.correlationId);
    CHECK(it != api_by_c.end());
    if (it == api_by_c.end()) continue;
    const CUpti_ActivityAPI& a = *it->second;
    CHECK_EQ(a.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    CHECK_EQ(k.kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CHECK_EQ(k.start, a.end + 2000);
    CHECK_EQ(k.end, k.start + 5000);
    CHECK_EQ(k.completed, k.end);
    CHECK_EQ(k.queued, a.end + 500);
    CHECK_EQ(k.submitted, a.end + 700);
    CHECK_EQ(k.deviceId, 0);
    CHECK_EQ(k.contextId, 1);
    CHECK_EQ(k.streamId, 7);
    CHECK(k.gridX == 4 && k.gridY == 1 && k.gridZ == 1);
    CHECK(k.blockX == 128 && k.blockY == 1 && k.blockZ == 1);
    CHECK_EQ(k.registersPerThread, 32);
    CHECK_EQ(k.staticSharedMemory, 1024);
    CHECK_EQ(k.dynamicSharedMemory, 0);
    CHECK(k.name && strcmp(k.name, "_Z9fake_gemmPKfS0_Pfi") == 0);
  }
  for (const auto& m : w.memcpys) {
    CHECK(dev_c.insert(m.correlationId).second);
    auto it = api_by_c.find(m.correlationId);
    CHECK(it != api_by_c.end());
    if (it == api_by_c.end()) continue;
    const CUpti_ActivityAPI& a = *it->second;
    CHECK_EQ(a.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
    CHECK_EQ(m.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    CHECK_EQ(m.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
    CHECK_EQ(m.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    CHECK_EQ(m.bytes, 4096);
    CHECK_EQ(m.start, a.end + 2000);
    CHECK_EQ(m.end, m.start + 5000);
    CHECK(m.deviceId == 0 && m.contextId == 1 && m.streamId == 7);
  }
  for (const auto& m : w.memsets) {
    CHECK(dev_c.insert(m.correlationId).second);
    auto it = api_by_c.find(m.correlationId);
    CHECK(it != api_by_c.end());
    if (it == api_by_c.end()) continue;
    const CUpti_ActivityAPI& a = *it->second;
    CHECK_EQ(a.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
    CHECK_EQ(m.bytes, 4096);
    CHECK_EQ(m.value, 0);
    CHECK_EQ(m.start, a.end + 2000);
    CHECK_EQ(m.end, m.start + 5000);
    CHECK(m.deviceId == 0 && m.contextId == 1 && m.streamId == 7);
  }
  CHECK_EQ(dev_c.size(), api_by_c.size());
  // Correlation ids without gaps (one process-wide counter).
  if (!api_by_c.empty()) {
    CHECK_EQ(api_by_c.begin()->first, first_id);
    CHECK_EQ(api_by_c.rbegin()->first, first_id + api_by_c.size() - 1);
  }
}

std::set<pthread_t> g_app_threads;

size_t worker_deliveries() {
  size_t n = 0;
  for (auto& d : H.delivered)
    if (!g_app_threads.count(d.thread)) ++n;
  return n;
}

// ========================================================= scenarios

// Two threads of nested ops, concurrent flushes, the cadence of memcpy and
// memset ops, the clock offset, the stats.
void scenario_basic() {
  const long long offset = -5000000000LL;  // FAKE_CUPTI_CLOCK_OFFSET_NS
  uint32_t v = 0;
  CHECK_EQ(A.GetVersion(&v), CUPTI_SUCCESS);
  CHECK_EQ(v, CUPTI_API_VERSION);
  CHECK_EQ(v, 130001);
  {
    timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    const long long real = rt.tv_sec * 1000000000LL + rt.tv_nsec;
    const long long t = static_cast<long long>(ts());
    CHECK(llabs(t - (real + offset)) < 500000000LL);
  }
  H.buf_size = 1024;  // 3 launches a buffer: most buffers are completed by the worker
  g_app_threads.insert(pthread_self());
  CHECK_EQ(A.RegisterCallbacks(on_request, on_complete), CUPTI_SUCCESS);
  int enables = enable_all({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                            CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD});
  CHECK_EQ(A.Disable(CUPTI_ACTIVITY_KIND_OVERHEAD), CUPTI_SUCCESS);

  constexpr int kIters = 150;
  std::mutex ops_mu;
  std::vector<LeafOp> ops;
  std::atomic<bool> done{false};
  std::atomic<int> flushes{0};
  auto body = [&](int t) {
    std::vector<LeafOp> mine;
    for (int i = 0; i < kIters; ++i) {
      const uint64_t outer = 1000000ull * (t + 1) + i;
      CHECK_EQ(A.Push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, outer), CUPTI_SUCCESS);
      mine.push_back(leaf(outer * 10 + 1, outer, 2000));
      mine.push_back(leaf(outer * 10 + 2, outer, 2000));
      uint64_t last = 0;
      CHECK_EQ(A.Pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last), CUPTI_SUCCESS);  // not a leaf
      CHECK_EQ(last, outer);
      if (i % 10 == 0) mine.push_back(leaf(outer * 10 + 3, 0, 2000));  // no outer op
    }
    std::lock_guard<std::mutex> l(ops_mu);
    ops.insert(ops.end(), mine.begin(), mine.end());
  };
  std::thread t1(body, 0), t2(body, 1);
  g_app_threads.insert(t1.native_handle());
  g_app_threads.insert(t2.native_handle());
  std::thread flusher([&] {
    while (!done) {
      CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
      ++flushes;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  g_app_threads.insert(flusher.native_handle());
  t1.join();
  t2.join();
  done = true;
  flusher.join();
  ops.push_back(leaf(5, 0, 2000));  // so that the last flush has a buffer of its own
  CHECK_EQ(A.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  ++flushes;
  // FlushAll returned: every buffer the double was given is back.
  {
    std::lock_guard<std::mutex> l(H.mu);
    CHECK(H.outstanding.empty());
    CHECK_EQ(H.requests, H.completions);
  }
  CHECK(worker_deliveries() > 0);  // the double's own thread delivered some
  CHECK(pthread_equal(H.delivered.back().thread, pthread_self()));  // the flush's own, here

  Walked w = walk_all(H.delivered);
  CHECK_EQ(w.other, 0);  // no SYNCHRONIZATION or OVERHEAD records
  const uint64_t leaves = ops.size();
  uint64_t memcpys = 0, memsets = 0;
  for (uint64_t k = 1; k <= leaves; ++k) {
    if (k % 3 == 0)
      ++memcpys;
    else if (k % 4 == 0)
      ++memsets;
  }
  const uint64_t kernels = leaves - memcpys - memsets;
  CHECK_EQ(w.kernels.size(), kernels);
  CHECK_EQ(w.memcpys.size(), memcpys);
  CHECK_EQ(w.memsets.size(), memsets);
  CHECK_EQ(w.api.size(), leaves);
  size_t with_outer = 0;
  for (auto& op : ops) with_outer += op.outer != 0;
  CHECK_EQ(w.ext.size(), leaves + with_outer);
  check_calls(w, ops, true, 1);

  size_t dropped = 0;
  CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  CHECK_EQ(dropped + H.dropped_seen, 0);

  // Misuse of the stack.
  uint64_t last = 42;
  CHECK_EQ(A.Pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last), CUPTI_ERROR_QUEUE_EMPTY);
  CHECK_EQ(last, 42);
  CHECK_EQ(A.Pop(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, &last), CUPTI_ERROR_INVALID_PARAMETER);
  CHECK_EQ(A.Push(CUPTI_EXTERNAL_CORRELATION_KIND_SIZE, 1), CUPTI_ERROR_INVALID_PARAMETER);

  // Nothing enabled: the stack works, nothing is emitted.
  for (auto k : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                 CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                 CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION})
    CHECK_EQ(A.Disable(k), CUPTI_SUCCESS);
  const size_t before = H.delivered.size();
  for (int i = 0; i < 5; ++i) leaf(900 + i, 0, 1000);
  CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
  ++flushes;
  CHECK_EQ(H.delivered.size(), before);  // no current buffer: nothing to complete
  enables += enable_all({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});

  const uint64_t pushes = ops.size() + 2 * kIters + 5;  // + the CUSTOM1 outers, the five leaves
  expect("pushes", pushes);
  expect("pops", pushes);
  expect("unbalanced_pops", 1);
  expect_text("push_kinds", "[3,4]");
  expect_text("enabled_at_exit", kinds_json({CUPTI_ACTIVITY_KIND_RUNTIME,
                                             CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}));
  expect("enables", enables);
  expect("flushes", flushes.load());
  expect("leaf_ops", leaves);
  expect("launches", kernels);
  expect("kernels", kernels);
  expect("memcpys", memcpys);
  expect("memsets", memsets);
  expect("api_records", leaves);
  expect("extcorr_records", w.ext.size());
  expect("correlation_ids", leaves);
  expect("dropped", 0);
  expect("buffers_requested", H.requests);
  expect("buffers_completed", H.completions);
  expect("worker_deliveries", worker_deliveries());
  expect("buffers_undelivered", 0);
  expect_text("callbacks_registered", "true");
}

// Dropped records: no callbacks, NULL, a too small and a misaligned buffer;
// maxNumRecords; full buffers still queued at exit are delivered by the
// worker before the process ends.
void scenario_dropped() {
  size_t d = 0;
  // Enabled before callbacks are registered: records are dropped.
  CHECK_EQ(A.FlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  leaf(1, 0, 1000);  // API record dropped
  CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, nullptr), CUPTI_ERROR_INVALID_PARAMETER);

  H.script = {Give::kNull, Give::kNull, Give::kNull, Give::kSmall, Give::kMisaligned};
  H.buf_size = 4096;
  H.max_records = 2;
  CHECK_EQ(A.RegisterCallbacks(nullptr, on_complete), CUPTI_ERROR_INVALID_PARAMETER);
  CHECK_EQ(A.RegisterCallbacks(on_request, on_complete), CUPTI_SUCCESS);
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  leaf(2, 0, 1000);  // API: request 1 NULL; kernel: request 2 NULL
  leaf(3, 0, 1000);  // API: request 3 NULL; kernel: request 4 too small (returned empty)
  leaf(4, 0, 1000);  // API: request 5 misaligned (returned empty); kernel: request 6, written
  CHECK_EQ(H.requests, 6);
  // The two unusable buffers come back through the worker, whose callback
  // reads (and so resets) the dropped count too: wait for both.
  for (int i = 0; i < 5000; ++i) {
    {
      std::lock_guard<std::mutex> l(H.mu);
      if (H.completions == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK_EQ(H.completions, 2);
  CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, &d), CUPTI_SUCCESS);
  CHECK_EQ(d + H.dropped_seen.exchange(0), 6);  // 1 without callbacks + 5
  CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, &d), CUPTI_SUCCESS);
  CHECK_EQ(d, 0);  // reset by the read
  leaf(5, 0, 1000);  // API: 2nd record of buffer 6 (max 2); kernel: request 7
  CHECK_EQ(H.requests, 7);
  CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
  {
    std::lock_guard<std::mutex> l(H.mu);
    CHECK(H.outstanding.empty());
    CHECK_EQ(H.completions, 4);
    std::map<size_t, size_t> by_valid;  // the two unusable ones come back with valid 0
    size_t empty = 0;
    for (auto& dl : H.delivered) {
      if (dl.valid == 0) {
        ++empty;
        continue;
      }
      Walked w;
      size_t n = 0;
      walk(dl, w, &n);
      by_valid[n]++;
    }
    CHECK_EQ(empty, 2);
    CHECK_EQ(by_valid[2], 1);  // kernel of op 4 + API of op 5: full by maxNumRecords
    CHECK_EQ(by_valid[1], 1);  // kernel of op 5, flushed
    Walked all = walk_all(H.delivered);
    CHECK_EQ(all.api.size(), 1);
    CHECK_EQ(all.kernels.size(), 2);
    CHECK_EQ(all.ext.size(), 0);  // EXTERNAL_CORRELATION not enabled
    CHECK_EQ(all.api[0].correlationId, 5);  // ids count calls, dropped or not
  }
  CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, &d), CUPTI_SUCCESS);
  CHECK_EQ(d + H.dropped_seen, 0);

  // Three more ops, no flush: two full buffers go to the worker, the third is
  // still being filled at exit. The exit handler lets the worker deliver the
  // full ones; the partial one is never completed.
  leaf(6, 0, 1000);
  leaf(7, 0, 1000);
  leaf(8, 0, 1000);
  expect("dropped", 6);
  expect("buffers_requested", 10);
  expect("buffers_completed", 6);
  expect("buffers_undelivered", 1);
  expect("launches", 4);  // API records written: ops 5..8
  expect("kernels", 5);   // ops 4..8
  expect("correlation_ids", 8);
}

// The refusal of a second profiler.
void scenario_refuse() {
  CHECK_EQ(A.RegisterCallbacks(on_request, on_complete), CUPTI_SUCCESS);
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
           CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  const char* s = nullptr;
  CHECK_EQ(A.GetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &s), CUPTI_SUCCESS);
  CHECK(s && strcmp(s, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") == 0);
  for (int i = 0; i < 4; ++i) leaf(i + 1, 0, 1000);
  CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
  CHECK_EQ(H.requests, 0);
  CHECK_EQ(H.completions, 0);
  expect("enables", 0);
  expect("refused_enables", 2);
  expect_text("enabled_at_exit", "[]");
  expect("pushes", 4);
  expect("leaf_ops", 0);
  expect("buffers_requested", 0);
}

// fork(): the child has empty stacks and buffers and never sees the
// parent's buffers; a child that calls nothing writes no stats.
void scenario_fork(const char* dir) {
  // The worker may be inside on_complete, holding H.mu, when we fork: hold it
  // across the fork. Registered before the double's handlers (its first
  // entry point registers them), so taken after its lock, as the request
  // callback does.
  pthread_atfork([] { H.mu.lock(); }, [] { H.mu.unlock(); }, [] { H.mu.unlock(); });
  H.buf_size = 1024;
  CHECK_EQ(A.RegisterCallbacks(on_request, on_complete), CUPTI_SUCCESS);
  enable_all({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
              CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  CHECK_EQ(A.Push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 77), CUPTI_SUCCESS);
  for (int i = 0; i < 7; ++i) leaf(i + 1, 0, 1000);  // 2 full buffers (worker), 1 current
  // Fork with the worker alive but idle: a thread inside malloc at fork time
  // can deadlock the child's sanitizer runtime (ASan/LSan), not the double.
  for (int i = 0; i < 5000; ++i) {
    {
      std::lock_guard<std::mutex> l(H.mu);
      if (H.completions == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK_EQ(H.completions, 2);
  std::set<uint8_t*> parent_given;
  {
    std::lock_guard<std::mutex> l(H.mu);
    parent_given = H.given_ever;
    CHECK(!H.outstanding.empty());
  }
  fflush(nullptr);
  const pid_t quiet = fork();
  if (quiet == 0) exit(0);  // calls nothing: writes no stats file
  const pid_t child = fork();
  if (child == 0) {
    g_scenario = "fork-child";
    g_failures = 0;
    {
      std::lock_guard<std::mutex> l(H.mu);  // the harness's own copy: start clean
      H.delivered.clear();
      H.outstanding.clear();
      H.requests = H.completions = 0;
    }
    uint64_t last = 0;
    CHECK_EQ(A.Pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last), CUPTI_ERROR_QUEUE_EMPTY);
    size_t d = 99;
    CHECK_EQ(A.GetNumDroppedRecords(nullptr, 0, &d), CUPTI_SUCCESS);
    CHECK_EQ(d, 0);
    LeafOp op = leaf(500, 0, 1000);
    CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
    {
      std::lock_guard<std::mutex> l(H.mu);
      CHECK_EQ(H.requests, 1);
      CHECK_EQ(H.completions, 1);
      for (auto& dl : H.delivered) CHECK(!parent_given.count(dl.ptr));
      Walked w = walk_all(H.delivered);
      CHECK_EQ(w.api.size(), 1);
      CHECK_EQ(w.kernels.size(), 1);
      CHECK_EQ(w.ext.size(), 1);  // CUSTOM0 only: the CUSTOM2 push stayed in the parent
      check_calls(w, {op}, false, 1, 8);  // the counter goes on from the parent's
    }
    exit(g_failures ? 1 : 0);
  }
  int st = 0;
  CHECK_EQ(waitpid(quiet, &st, 0), quiet);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK_EQ(waitpid(child, &st, 0), child);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  struct stat sb;
  CHECK(stat((std::string(dir) + "/fork-" + std::to_string(quiet) + ".json").c_str(), &sb) != 0);
  const std::string cs = read_file(std::string(dir) + "/fork-" + std::to_string(child) + ".json");
  CHECK(!cs.empty());
  CHECK_STR(json_field(cs, "pid"), std::to_string(child));
  CHECK_STR(json_field(cs, "pushes"), "1");
  CHECK_STR(json_field(cs, "pops"), "1");
  CHECK_STR(json_field(cs, "unbalanced_pops"), "1");
  CHECK_STR(json_field(cs, "kernels"), "1");
  CHECK_STR(json_field(cs, "buffers_requested"), "1");
  CHECK_STR(json_field(cs, "buffers_completed"), "1");
  CHECK_STR(json_field(cs, "correlation_ids"), "1");
  CHECK_STR(json_field(cs, "enabled_at_exit"),
           kinds_json({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                       CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}));

  // The parent carries on with its own stack and buffers.
  uint64_t last = 0;
  CHECK_EQ(A.Pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last), CUPTI_SUCCESS);
  CHECK_EQ(last, 77);
  CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
  std::lock_guard<std::mutex> l(H.mu);
  CHECK(H.outstanding.empty());
  Walked w = walk_all(H.delivered);
  CHECK_EQ(w.api.size(), 7);
  CHECK_EQ(w.kernels.size(), 7);
  CHECK_EQ(w.ext.size(), 14);  // CUSTOM0 and CUSTOM2 for each
  std::set<uint32_t> ids;
  for (auto& a : w.api) ids.insert(a.correlationId);
  CHECK_EQ(ids.size(), 7);
  CHECK_EQ(*ids.rbegin(), 7);
  expect("buffers_completed", H.completions);
  expect("kernels", 7);
  expect("pushes", 8);
}

// Many launches per op from four threads, with a flushing thread: every
// correlation id once, no record lost.
void scenario_flood() {
  constexpr int kThreads = 4, kOps = 60, kPerOp = 50;
  H.buf_size = 8192;
  g_app_threads.insert(pthread_self());
  CHECK_EQ(A.RegisterCallbacks(on_request, on_complete), CUPTI_SUCCESS);
  enable_all({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
              CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  std::mutex ops_mu;
  std::vector<LeafOp> ops;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<LeafOp> mine;
      for (int i = 0; i < kOps; ++i) mine.push_back(leaf(1000000ull * (t + 1) + i, 0, 3000));
      std::lock_guard<std::mutex> l(ops_mu);
      ops.insert(ops.end(), mine.begin(), mine.end());
    });
  for (auto& t : threads) g_app_threads.insert(t.native_handle());
  std::thread flusher([&] {
    while (!done) {
      CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  g_app_threads.insert(flusher.native_handle());
  for (auto& t : threads) t.join();
  done = true;
  flusher.join();
  CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
  std::lock_guard<std::mutex> l(H.mu);
  CHECK(H.outstanding.empty());
  Walked w = walk_all(H.delivered);
  const size_t calls = static_cast<size_t>(kThreads) * kOps * kPerOp;
  CHECK_EQ(w.api.size(), calls);
  CHECK_EQ(w.kernels.size(), calls);
  CHECK_EQ(w.ext.size(), calls);
  check_calls(w, ops, false, kPerOp);
  CHECK(worker_deliveries() > 0);
  expect("launches", calls);
  expect("kernels", calls);
  expect("dropped", 0);
  expect("buffers_requested", H.requests);
  expect("buffers_completed", H.completions);
}

CUptiResult g_in_request_flush = CUPTI_SUCCESS, g_in_request_push = CUPTI_SUCCESS;
CUptiResult g_in_request_dropped = CUPTI_ERROR_UNKNOWN;
void CUPTIAPI on_request_reentrant(uint8_t** buffer, size_t* size, size_t* max_records) {
  g_in_request_flush = A.FlushAll(0);
  g_in_request_push = A.Push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1);
  size_t d = 0;
  g_in_request_dropped = A.GetNumDroppedRecords(nullptr, 0, &d);  // no lock held: works
  on_request(buffer, size, max_records);
}

// Driver API records, per-cbid API settings, the small entry points and the
// record walk on malformed buffers, against the real library where loaded.
void scenario_api() {
  CHECK_EQ(A.GetVersion(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  CHECK_EQ(A.GetTimestamp(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  const char* s = nullptr;
  CHECK_EQ(A.GetResultString(CUPTI_SUCCESS, &s), CUPTI_SUCCESS);
  CHECK(s && strcmp(s, "CUPTI_SUCCESS") == 0);
  CHECK_EQ(A.GetResultString(static_cast<CUptiResult>(12345), &s), CUPTI_ERROR_INVALID_PARAMETER);
  CHECK_EQ(A.GetResultString(CUPTI_SUCCESS, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  struct Name {
    CUpti_CallbackDomain d;
    uint32_t cbid;
    const char* name;
  };
  for (const Name& n : {Name{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                             "cudaLaunchKernel_v7000"},
                        Name{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                             "cudaMemcpyAsync_v3020"},
                        Name{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                             "cudaMemsetAsync_v3020"},
                        Name{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                             "cuLaunchKernel"},
                        Name{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                             "cuLaunchKernelEx"}}) {
    const char* got = nullptr;
    CHECK_EQ(A.GetCallbackName(n.d, n.cbid, &got), CUPTI_SUCCESS);
    CHECK(got && strcmp(got, n.name) == 0);
  }
  const char* got = "x";
  CHECK_EQ(A.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, 999999, &got), CUPTI_ERROR_INVALID_PARAMETER);
  CHECK(got == nullptr);
  CHECK_EQ(A.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 1, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  if (R.GetCallbackName) {
    // Every name the double knows is the real library's name.
    size_t known = 0;
    for (auto d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      const uint32_t size = d == CUPTI_CB_DOMAIN_RUNTIME_API
                                ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
      for (uint32_t c = 1; c < size; ++c) {
        const char* mine = nullptr;
        if (A.GetCallbackName(d, c, &mine) != CUPTI_SUCCESS) continue;
        ++known;
        const char* real = nullptr;
        CHECK_EQ(R.GetCallbackName(d, c, &real), CUPTI_SUCCESS);
        CHECK(real && mine && strcmp(real, mine) == 0);
      }
    }
    CHECK(known >= 5);
  }
  if (R.GetResultString) {
    for (int c = 0; c < 1000; ++c) {
      const char* mine = nullptr;
      const char* real = nullptr;
      if (A.GetResultString(static_cast<CUptiResult>(c), &mine) != CUPTI_SUCCESS) continue;
      if (R.GetResultString(static_cast<CUptiResult>(c), &real) != CUPTI_SUCCESS) continue;
      CHECK(strcmp(mine, real) == 0);
    }
  }
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_INVALID), CUPTI_ERROR_INVALID_KIND);
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
  CHECK_EQ(A.Disable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
  CHECK_EQ(A.EnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_SIZE, 1), CUPTI_ERROR_INVALID_PARAMETER);
  CHECK_EQ(A.EnableDriverApi(CUPTI_DRIVER_TRACE_CBID_INVALID, 1), CUPTI_ERROR_INVALID_PARAMETER);

  // Record walk on crafted buffers: the double answers as the real one does.
  {
    alignas(8) uint8_t b[512] = {0};
    auto put_kind = [&](size_t off, uint32_t k) { memcpy(b + off, &k, 4); };
    auto run = [&](auto gnr, size_t valid, int steps, std::vector<long>& out) {
      CUpti_Activity* r = nullptr;
      for (int i = 0; i < steps; ++i) {
        CUptiResult st = gnr(b, valid, &r);
        out.push_back(st);
        out.push_back(r ? static_cast<long>(reinterpret_cast<uint8_t*>(r) - b) : -1);
      }
    };
    put_kind(0, CUPTI_ACTIVITY_KIND_RUNTIME);
    put_kind(40, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    put_kind(256, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    put_kind(280, 0);  // past this, an invalid kind
    std::vector<std::pair<size_t, std::vector<long>>> expected = {
        {0, {CUPTI_ERROR_MAX_LIMIT_REACHED, -1}},
        {39, {CUPTI_ERROR_MAX_LIMIT_REACHED, -1}},
        {40, {CUPTI_SUCCESS, 0, CUPTI_ERROR_MAX_LIMIT_REACHED, 0}},
        {100, {CUPTI_SUCCESS, 0, CUPTI_ERROR_MAX_LIMIT_REACHED, 0}},
        {256, {CUPTI_SUCCESS, 0, CUPTI_SUCCESS, 40, CUPTI_ERROR_MAX_LIMIT_REACHED, 40}},
        {280, {CUPTI_SUCCESS, 0, CUPTI_SUCCESS, 40, CUPTI_SUCCESS, 256, CUPTI_ERROR_MAX_LIMIT_REACHED, 256}},
        {512, {CUPTI_SUCCESS, 0, CUPTI_SUCCESS, 40, CUPTI_SUCCESS, 256, CUPTI_ERROR_INVALID_KIND, 256}},
    };
    for (auto& e : expected) {
      const int steps = static_cast<int>(e.second.size() / 2);
      std::vector<long> mine;
      run(A.GetNextRecord, e.first, steps, mine);
      CHECK(mine == e.second);
      if (R.GetNextRecord) {
        std::vector<long> real;
        run(R.GetNextRecord, e.first, steps, real);
        CHECK(real == e.second);
      }
    }
    CUpti_Activity* r = nullptr;
    CHECK_EQ(A.GetNextRecord(nullptr, 8, &r), CUPTI_ERROR_INVALID_PARAMETER);
    CHECK_EQ(A.GetNextRecord(b, 8, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
    put_kind(0, 0);
    CHECK_EQ(A.GetNextRecord(b, 64, &r), CUPTI_ERROR_INVALID_KIND);
  }

  // Driver API only, KERNEL rather than CONCURRENT_KERNEL.
  H.buf_size = 1 << 16;
  CHECK_EQ(A.RegisterCallbacks(on_request, on_complete), CUPTI_SUCCESS);
  enable_all({CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_KERNEL,
              CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  auto one_op = [&](uint64_t id) {
    const size_t before = H.delivered.size();
    LeafOp op = leaf(id, 0, 1000);
    CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
    std::vector<Delivered> fresh(H.delivered.begin() + before, H.delivered.end());
    Walked w = walk_all(fresh);
    for (auto& a : w.api) CHECK(op.before < a.start && a.end < op.after);
    return w;
  };
  Walked w = one_op(1);
  CHECK_EQ(w.api.size(), 1);
  CHECK_EQ(w.api[0].kind, CUPTI_ACTIVITY_KIND_DRIVER);
  CHECK_EQ(w.api[0].cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  CHECK_EQ(w.kernels.size(), 1);
  CHECK_EQ(w.kernels[0].kind, CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK_EQ(w.ext.size(), 1);
  // Runtime API on: runtime record only (never both).
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  w = one_op(2);
  CHECK(w.api.size() == 1 && w.api[0].kind == CUPTI_ACTIVITY_KIND_RUNTIME);
  // cudaLaunchKernel switched off: the driver record again.
  CHECK_EQ(A.EnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0), CUPTI_SUCCESS);
  w = one_op(3);
  CHECK(w.api.size() == 1 && w.api[0].kind == CUPTI_ACTIVITY_KIND_DRIVER);
  // No API tracing at all: the kernel alone, and no external correlation.
  CHECK_EQ(A.Disable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
  w = one_op(4);
  CHECK_EQ(w.api.size(), 0);
  CHECK_EQ(w.ext.size(), 0);
  CHECK_EQ(w.kernels.size(), 1);
  // One driver API by cbid, without the DRIVER kind.
  CHECK_EQ(A.EnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1), CUPTI_SUCCESS);
  w = one_op(5);
  CHECK(w.api.size() == 1 && w.api[0].cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  // Enabling the RUNTIME kind again overrides the per-cbid setting.
  CHECK_EQ(A.Enable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  w = one_op(6);
  CHECK(w.api.size() == 1 && w.api[0].kind == CUPTI_ACTIVITY_KIND_RUNTIME);

  // Inside the request callback: push, pop and flush are refused (they could
  // wait for this very request); the rest works.
  // (The last flush left no current buffer: the next record requests one.)
  CHECK_EQ(A.RegisterCallbacks(on_request_reentrant, on_complete), CUPTI_SUCCESS);
  leaf(7, 0, 1000);
  CHECK_EQ(g_in_request_flush, CUPTI_ERROR_INVALID_OPERATION);
  CHECK_EQ(g_in_request_push, CUPTI_ERROR_INVALID_OPERATION);
  CHECK_EQ(g_in_request_dropped, CUPTI_SUCCESS);
  CHECK_EQ(A.FlushAll(0), CUPTI_SUCCESS);
  expect("driver_api_enabled", 1);
  expect("runtime_api_enabled", 0);
}

// ========================================================= driver

int run_scenario(const char* scenario, const char* lib, const char* real, const char* dir) {
  g_scenario = scenario;  // argv storage: lives as long as the process
  const std::string name = scenario;
  if (!load_double(lib)) return 2;
  if (real) load_real(real);
  if (name == "basic")
    scenario_basic();
  else if (name == "dropped")
    scenario_dropped();
  else if (name == "refuse")
    scenario_refuse();
  else if (name == "fork")
    scenario_fork(dir);
  else if (name == "flood")
    scenario_flood();
  else if (name == "api")
    scenario_api();
  else if (name == "notouch")
    ;  // loads the double and calls nothing
  else
    return 2;
  write_expectations(dir);
  return g_failures ? 1 : 0;
}

struct Scenario {
  const char* name;
  std::vector<std::pair<const char*, const char*>> env;
  bool writes_stats;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && strcmp(argv[1], "--scenario") == 0) {
    // --scenario NAME DIR LIB [REAL]
    return run_scenario(argv[2], argv[4], argc >= 6 ? argv[5] : nullptr, argv[3]);
  }
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBFAKE_CUPTI [REAL_LIBCUPTI]\n", argv[0]);
    return 2;
  }
  const char* lib = argv[1];
  const char* real = argc >= 3 ? argv[2] : nullptr;
  if (real && access(real, R_OK) != 0) {
    fprintf(stderr, "note: %s absent: the comparison with the real libcupti is skipped\n", real);
    real = nullptr;
  } else if (!real) {
    fprintf(stderr, "note: no real libcupti given: the comparison with it is skipped\n");
  }
  char dir_tmpl[] = "/tmp/fake_cupti_selftest.XXXXXX";
  const char* dir = mkdtemp(dir_tmpl);
  if (!dir) {
    perror("mkdtemp");
    return 2;
  }
  const std::vector<Scenario> scenarios = {
      {"basic", {{"FAKE_CUPTI_MEMCPY_EVERY", "3"}, {"FAKE_CUPTI_MEMSET_EVERY", "4"},
                 {"FAKE_CUPTI_CLOCK_OFFSET_NS", "-5000000000"}}, true},
      {"dropped", {{"FAKE_CUPTI_MEMCPY_EVERY", "0"}}, true},
      {"refuse", {{"FAKE_CUPTI_REFUSE", "1"}}, true},
      {"fork", {{"FAKE_CUPTI_MEMCPY_EVERY", "0"}}, true},
      {"flood", {{"FAKE_CUPTI_MEMCPY_EVERY", "0"}, {"FAKE_CUPTI_KERNELS_PER_OP", "50"}}, true},
      {"api", {{"FAKE_CUPTI_MEMCPY_EVERY", "0"}}, true},
      {"notouch", {}, false},
  };
  int failed = 0;
  for (const Scenario& sc : scenarios) {
    fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      for (const char* k : {"FAKE_CUPTI_CLOCK_OFFSET_NS", "FAKE_CUPTI_REFUSE", "FAKE_CUPTI_MEMCPY_EVERY",
                            "FAKE_CUPTI_MEMSET_EVERY", "FAKE_CUPTI_KERNELS_PER_OP", "FAKE_CUPTI_STATS"})
        unsetenv(k);
      for (auto& kv : sc.env) setenv(kv.first, kv.second, 1);
      const std::string stats = std::string(dir) + "/" + sc.name + "-%p.json";
      setenv("FAKE_CUPTI_STATS", stats.c_str(), 1);
      std::vector<const char*> args = {"/proc/self/exe", "--scenario", sc.name, dir, lib};
      if (real) args.push_back(real);
      args.push_back(nullptr);
      execv("/proc/self/exe", const_cast<char* const*>(args.data()));
      perror("execv");
      _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok) fprintf(stderr, "[%s] exited with status %d\n", sc.name, st);
    const std::string stats_path = std::string(dir) + "/" + sc.name + "-" + std::to_string(pid) + ".json";
    const std::string doc = read_file(stats_path);
    if (!sc.writes_stats) {
      if (!doc.empty()) {
        fprintf(stderr, "[%s] wrote %s though it called no entry point\n", sc.name, stats_path.c_str());
        ok = false;
      }
    } else if (doc.empty()) {
      fprintf(stderr, "[%s] no stats file %s\n", sc.name, stats_path.c_str());
      ok = false;
    } else {
      if (json_field(doc, "pid") != std::to_string(pid)) {
        fprintf(stderr, "[%s] stats pid %s\n", sc.name, json_field(doc, "pid").c_str());
        ok = false;
      }
      const std::string ex = read_file(std::string(dir) + "/" + sc.name + ".expect");
      size_t p = 0;
      while (p < ex.size()) {
        size_t nl = ex.find('\n', p);
        const std::string line = ex.substr(p, nl - p);
        p = nl == std::string::npos ? ex.size() : nl + 1;
        const size_t sp = line.find(' ');
        if (sp == std::string::npos) continue;
        const std::string key = line.substr(0, sp), want = line.substr(sp + 1);
        const std::string have = json_field(doc, key);
        if (have != want) {
          fprintf(stderr, "[%s] stats %s: %s, expected %s\n", sc.name, key.c_str(), have.c_str(),
                  want.c_str());
          ok = false;
        }
      }
    }
    fprintf(stderr, "%s %s\n", ok ? "PASS" : "FAIL", sc.name);
    failed += !ok;
  }
  if (!failed) {
    std::string cmd = std::string("rm -rf '") + dir + "'";
    if (system(cmd.c_str()) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
  } else {
    fprintf(stderr, "files kept in %s\n", dir);
  }
  return failed ? 1 : 0;
}
