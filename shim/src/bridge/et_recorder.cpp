#include "bridge/et_recorder.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>
#include <new>
#include <string_view>
#include <unordered_map>

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/util.h>

#include "bridge/buffer_lock.h"
#include "bridge/c10d_group.h"
#include "bridge/et_values.h"
#include "bridge/record_scopes.h"
#include "bridge/torch_version.h"

#include "chakrashim/immortal.h"
#include "chakrashim/string_table.h"
#include "writers/et_records.h"

namespace chakrashim::bridge {

namespace et = writers::et;

namespace {

// Small enough that a small CHAKRA_MAX_MEMORY is not taken by one chunk.
constexpr std::size_t kChunkBytes = 256u << 10;
constexpr std::size_t kPage = 4096;

// torch's ParamCommsDebugInfo keys (torch/csrc/profiler/util.h, defined
// there only with USE_DISTRIBUTED) and the ET attrs they become, in the
// order, and with the types, torch's getCommsNodeAttrs writes them.
struct CommAttr {
  const char* meta_key;
  const char* et_name;
  const char* type;
};
constexpr CommAttr kCommAttrs[] = {
    {"Collective name", "collective_name", "string"},
    {"dtype", "dtype", "string"},
    {"In msg nelems", "in_msg_nelems", "uint64"},
    {"Out msg nelems", "out_msg_nelems", "uint64"},
    {"In split size", "in_split_size", "string"},
    {"Out split size", "out_split_size", "string"},
    {"Global rank start", "global_rank_start", "uint64"},
    {"Global rank stride", "global_rank_stride", "uint64"},
    {"Process Group Name", "pg_name", "string"},
    {"Process Group Description", "pg_desc", "string"},
    {"Group size", "pg_size", "uint64"},
};

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string local_time_text() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%d %X", &tm);
  return std::string(buf, n);
}

// The callbacks. Plain functions: torch stores function pointers.
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  EtRecorder& r = EtRecorder::instance();
  if (r.enabled()) r.record_start(fn);
  return nullptr;
}

std::unique_ptr<at::ObserverContext> no_start(const at::RecordFunction&) { return nullptr; }

void (*g_after_end)(const at::RecordFunction&) = nullptr;

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  EtRecorder& r = EtRecorder::instance();
  if (r.enabled()) r.record_end(fn);
  if (g_after_end) g_after_end(fn);
}

}  // namespace

std::vector<writers::EtThreadStream> EtRecords::streams() const {
  std::vector<writers::EtThreadStream> out;
  for (const auto& t : threads) {
    writers::EtThreadStream s;
    s.strings = &t.strings;
    for (const auto& c : t.chunks) s.chunks.emplace_back(c.data(), c.size());
    out.push_back(std::move(s));
  }
  return out;
}

// --- one thread's buffer -----------------------------------------------------

struct EtRecorder::ThreadBuffer {
  BufferLock lock;
  EtThreadRecords records;
  std::vector<std::uint8_t> scratch;  // one record, built before it is committed
  // The caches below index records.strings: take() empties it and sets
  // this, under `lock`, so that the next record starts them over.
  bool caches_stale = false;

  // Interned strings: text -> index into records.strings.
  StringMap<std::uint32_t> index;
  // An op's name and schema by its (name, overload name) pointers, which
  // for a dispatcher op point into its registered FunctionSchema: looked
  // up once per operator. A slot array in front of the map: most ops find
  // theirs without hashing. The name text is compared too: a record named
  // by a string (user annotations) lives in memory that is reused.
  struct OpSlot {
    const char* name = nullptr;
    const char* overload = nullptr;
    std::uint32_t name_index = 0;
    std::uint32_t schema = 0;  // index + 1, 0: none
    bool c10d = false;         // a "c10d::" op: its process group is read
  };
  static constexpr std::size_t kSlots = 512;
  OpSlot slots[kSlots];
  struct PtrPairHash {
    std::size_t operator()(const std::pair<const char*, const char*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<const char*, const char*>, OpSlot, PtrPairHash> ops;
  // Small caches: a job has few dtypes, devices and tag kinds.
  std::vector<std::pair<const char*, std::uint32_t>> dtypes;
  const char* last_dtype_name = nullptr;  // the name's address: one per dtype, static
  std::uint32_t last_dtype = 0;
  std::vector<std::pair<std::int64_t, std::uint32_t>> devices;
  std::int64_t last_device_key = -1;  // none: a key is never negative
  std::uint32_t last_device = 0;
  std::uint32_t none_tag = et::kNoString;

  std::uint64_t new_bytes = 0;  // strings interned since the last charge

  // Each open c10d op's process group, for its end record (c10d_group.h).
  OpenGroups groups;

  void reset_caches() {
    caches_stale = false;
    index.clear();
    for (auto& s : slots) s = OpSlot{};
    ops.clear();
    dtypes.clear();
    last_dtype_name = nullptr;
    devices.clear();
    last_device_key = -1;
    none_tag = et::kNoString;
  }

  std::uint32_t intern(std::string_view text) {
    auto it = index.find(text);
    if (it != index.end()) return it->second;
    const auto i = static_cast<std::uint32_t>(records.strings.size());
    records.strings.emplace_back(text);
    index.emplace(records.strings.back(), i);
    new_bytes += 2 * text.size() + 96;
    return i;
  }

  const OpSlot& op(const at::RecordFunction& fn) {
    const char* name = fn.name();
    if (!name) name = "";
    // RecordFunction::overload_name() is torch 2.7's. Before it the name's
    // pointer alone tells overloads apart: each overload's registered
    // schema holds its own copy of the name.
#if CHAKRA_TORCH_AT_LEAST(2, 7)
    const char* overload = fn.overload_name();
#else
    const char* overload = nullptr;
#endif
    OpSlot& slot = slots[(reinterpret_cast<std::uintptr_t>(name) >> 4) % kSlots];
    if (slot.name == name && slot.overload == overload &&
        std::strcmp(records.strings[slot.name_index].c_str(), name) == 0)
      return slot;
    auto it = ops.find({name, overload});
    if (it != ops.end() && std::strcmp(records.strings[it->second.name_index].c_str(), name) == 0) {
      slot = it->second;
      return slot;
    }
    OpSlot fresh;
    fresh.name = name;
    fresh.overload = overload;
    fresh.name_index = intern(name);
    fresh.c10d = std::strncmp(name, "c10d::", 6) == 0;
    // Copies the schema: once per operator (and per string-named record,
    // which has none and costs nothing here).
    if (const auto schema = fn.operator_schema()) {
      fresh.schema = intern(c10::toString(*schema)) + 1;
      ops[{name, overload}] = fresh;
    }
    slot = fresh;
    return slot;
  }

  // TypeMeta::name() is a c10::string_view up to torch 2.6 and a
  // std::string_view from 2.7: both convert through data() and size().
  // Inline for the common case, a tensor of the last one's dtype.
  template <typename View>
  std::uint32_t dtype(const View& view) {
    if (view.data() == last_dtype_name) return last_dtype;
    return dtype_slow(std::string_view(view.data(), view.size()));
  }
  __attribute__((noinline)) std::uint32_t dtype_slow(std::string_view name) {
    std::uint32_t index = et::kNoString;
    for (const auto& [p, i] : dtypes)
      if (p == name.data()) index = i;
    if (index == et::kNoString) {
      index = intern(name);
      dtypes.emplace_back(name.data(), index);
    }
    last_dtype_name = name.data();
    last_dtype = index;
    return index;
  }

  // Inline for the common case, a tensor on the same device as the last.
  std::uint32_t device(const c10::Device& d) {
    const std::int64_t key = (static_cast<std::int64_t>(d.type()) << 16) | static_cast<std::uint16_t>(d.index());
    if (key == last_device_key) return last_device;
    return device_slow(d, key);
  }
  __attribute__((noinline)) std::uint32_t device_slow(const c10::Device& d, std::int64_t key) {
    std::uint32_t index = et::kNoString;
    for (const auto& [k, i] : devices)
      if (k == key) index = i;
    if (index == et::kNoString) {
      index = intern(d.str());
      devices.emplace_back(key, index);
    }
    last_device_key = key;
    last_device = index;
    return index;
  }
};


// --- EtRecorder --------------------------------------------------------------

EtRecorder& EtRecorder::instance() { return immortal<EtRecorder>(); }

// The calling thread's hold on its buffer; hands it back at thread exit.
struct EtRecorder::Lease {
  std::shared_ptr<ThreadBuffer> buffer;
  ~Lease() {
    if (buffer) EtRecorder::instance().release(std::move(buffer));
  }
};

EtRecorder::ThreadBuffer& EtRecorder::local() {
  thread_local Lease lease;
  if (!lease.buffer) {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    if (!free_.empty()) {
      lease.buffer = std::move(free_.back());
      free_.pop_back();
    } else {
      auto buffer = std::make_shared<ThreadBuffer>();
      // One record's worth, once, as room the encoder writes into: encoding
      // then never reallocates (a larger record grows it, and it stays).
      buffer->scratch.resize(16384);
      buffers_.push_back(buffer);
      lease.buffer = std::move(buffer);
    }
  }
  return *lease.buffer;
}

void EtRecorder::release(std::shared_ptr<ThreadBuffer> buffer) {
  // In a forked child the registry's mutex may have been held at fork: the
  // buffer is only dropped (buffers_ still holds it).
  if (dead_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(registry_mutex_);
  free_.push_back(std::move(buffer));
}

void EtRecorder::set_after_end(void (*after_end)(const at::RecordFunction&)) {
  g_after_end = after_end;
}

void EtRecorder::begin(MemoryBudget* budget) {
  budget_ = budget;
  header_.pid = static_cast<std::int64_t>(::getpid());
  header_.time = local_time_text();
  header_.start_ts = steady_ms();
}

void EtRecorder::add(MemoryBudget* budget) {
  if (added()) return;
  begin(budget);
  start_handle_ = at::addGlobalCallback(
      at::RecordFunctionCallback(&on_start).needsInputs(true).needsIds(true).scopes(traced_scopes()));
  at::disableCallback(start_handle_);
  added_.store(true, std::memory_order_release);
}

void EtRecorder::add_shared(MemoryBudget* budget) {
  if (added()) return;
  begin(budget);
  shared_.store(true, std::memory_order_release);
  added_.store(true, std::memory_order_release);
}

void EtRecorder::add_end_callback() {
  if (!added() || ends_ops()) return;
  end_handle_.store(at::addGlobalCallback(
      at::RecordFunctionCallback(&no_start, &on_end).needsOutputs(true).needsIds(true).scopes(
          traced_scopes())));
}

void EtRecorder::enable() {
  if (!added() || dead_.load() || enabled()) return;
  enabled_.store(true, std::memory_order_release);
  if (start_handle_ != at::INVALID_CALLBACK_HANDLE) at::reenableCallback(start_handle_);
}

void EtRecorder::disable() {
  if (!enabled()) return;
  enabled_.store(false, std::memory_order_release);
  if (start_handle_ != at::INVALID_CALLBACK_HANDLE) at::disableCallback(start_handle_);
  // An edge: the writer closes here what is open then (EtHeader::edges).
  // Every record taken after this store has a larger sequence number.
  header_.edges.push_back(seq_.fetch_add(1, std::memory_order_relaxed));
}

void EtRecorder::remove() {
  if (!added()) return;
  disable();
  if (start_handle_ != at::INVALID_CALLBACK_HANDLE) at::removeCallback(start_handle_);
  start_handle_ = at::INVALID_CALLBACK_HANDLE;
  added_.store(false, std::memory_order_release);
  shared_.store(false, std::memory_order_release);
  const at::CallbackHandle end = end_handle_.exchange(at::INVALID_CALLBACK_HANDLE);
  if (end != at::INVALID_CALLBACK_HANDLE) at::removeCallback(end);
  header_.finish_ts = steady_ms();
}

EtRecords EtRecorder::take() {
  EtRecords out;
  out.header = header_;
  header_.edges.clear();
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (const auto& b : buffers_) {
    // The strings and the caches that index them are cleared together,
    // under the buffer's lock. A process-wide generation bumped before
    // the buffers were locked let a thread that recorded in between start
    // its caches over into strings then taken, and index the emptied
    // vector in the next window (issue #34).
    std::lock_guard<BufferLock> inner(b->lock);
    if (!b->records.chunks.empty()) out.threads.push_back(std::move(b->records));
    b->records = {};
    b->caches_stale = true;
  }
  return out;
}

void EtRecorder::silence_in_forked_child() {
  // Flags only (async-signal-safe): both callbacks return at once from
  // now on. at::removeCallback here took torch's callback-registry mutex,
  // and a child forked while another parent thread held it hung forever.
  dead_.store(true, std::memory_order_relaxed);
  enabled_.store(false, std::memory_order_relaxed);
}

bool EtRecorder::commit(ThreadBuffer& b, std::size_t n) {
  auto& chunks = b.records.chunks;
  std::uint64_t charge = b.new_bytes;
  b.new_bytes = 0;
  const bool fresh = chunks.empty() || !chunks.back().fits(n);
  const std::size_t capacity = std::max(kChunkBytes, (n + kPage - 1) / kPage * kPage);
  if (fresh) charge += capacity;
  if (charge != 0 && budget_ && !budget_->try_charge(charge)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (fresh) chunks.emplace_back(capacity);
  chunks.back().append(b.scratch.data(), n);
  return true;
}

// The frame of both callbacks: the thread's buffer under its lock, one
// record kept whole, or nothing at all. The record is encoded in place, at
// the free end of the thread's last chunk, and kept by moving the chunk's
// end past it (a copy from a scratch cost about 75 instructions an op); one
// that does not fit there moves into the scratch as it grows, and is
// appended from it (to a fresh chunk where needed).
template <typename Encode>
void EtRecorder::encode_record(ThreadBuffer& b, Encode&& encode) {
  // Over CHAKRA_MAX_MEMORY: the window is being cut; nothing more is kept.
  if (budget_ && budget_->exhausted()) return;
  std::lock_guard<BufferLock> lock(b.lock);
  if (b.caches_stale) b.reset_caches();
  RecordChunk* chunk = b.records.chunks.empty() ? nullptr : &b.records.chunks.back();
  et::Encoder e(b.scratch, et::Encoder::InPlace{chunk ? chunk->tail() : nullptr, chunk ? chunk->room() : 0});
  try {
    encode(e, b);
    e.close();
  } catch (...) {
    // A value torch could not describe either (a sparse tensor's strides):
    // this op gets no node.
    return;
  }
  if (e.spilled()) {
    commit(b, e.size());
    return;
  }
  // In place (so `chunk` is not null: with no room the first field spills).
  // What it interned is charged; refused, the record is not kept.
  const std::uint64_t charge = b.new_bytes;
  b.new_bytes = 0;
  if (charge != 0 && budget_ && !budget_->try_charge(charge)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  chunk->advance(e.size());
}

void EtRecorder::record_start(const at::RecordFunction& fn, ThreadBuffer& buffer) {
  encode_record(buffer, [&](et::Encoder& e, ThreadBuffer& b) {
    const auto& op = b.op(fn);
    e.begin(et::RecordKind::start, seq_.fetch_add(1, std::memory_order_relaxed));
    const auto inputs = fn.inputs();
    const std::size_t n = fn.num_inputs();
    // torch's checkFunctionInputsForLogging: a boxed kernel's stack may hold
    // more than this op's inputs, never fewer.
    const bool logged = n <= inputs.size();
    std::uint8_t flags = logged ? et::kInputsLogged : 0;
    // Triton kernels (torch.compile) pass their backend, file and stream as
    // keyword inputs; torch's observer writes them. Only records named by a
    // string carry keyword inputs (torch's before() overloads that take
    // them; the dispatcher's, which name an operator, never do), and
    // kwinputs() returns a copy of the map: about 80 instructions an op.
    std::unordered_map<std::string, c10::IValue> kwinputs;
    if (op.schema == 0) kwinputs = fn.kwinputs();
    // Looked up only in a map with keys (a find makes a std::string of the key).
    const auto backend = kwinputs.empty() ? kwinputs.end() : kwinputs.find("kernel_backend");
    const bool kernel = logged && backend != kwinputs.end() && backend->second.isString();
    if (kernel) flags |= et::kKernelInfo;
    auto f = e.reserve(3 * 8 + 8 + 1 + 2 * 4 + 1 + 4);
    f.u64(fn.handle());
    f.u64(fn.threadId());
    f.u64(fn.forwardThreadId());
    f.i64(fn.seqNr());
    f.u8(static_cast<std::uint8_t>(fn.scope()));
    f.u32(op.name_index);
    f.u32(op.schema);
    f.u8(flags);
    if (logged) f.u32(static_cast<std::uint32_t>(n));
    e.commit(f);
    if (logged) {
      for (std::size_t i = inputs.size() - n; i < inputs.size(); ++i) et_values::put_value(e, b, inputs[i]);
      if (op.c10d) b.groups.note(fn.handle(), inputs.data() + (inputs.size() - n), n);
    }
    if (kernel) {
      const std::string& name = backend->second.toStringRef();
      e.u32(b.intern(name));
      std::uint32_t file = et::kNoString;
      std::int64_t stream = 0;
      const auto f = kwinputs.find("kernel_file");
      const auto s = kwinputs.find("stream");
      if (name == "triton" && f != kwinputs.end() && f->second.isString() && s != kwinputs.end() &&
          s->second.isInt()) {
        std::string path = f->second.toStringRef();
        if (const auto slash = path.find_last_of('/'); slash != std::string::npos)
          path = path.substr(slash + 1);
        file = b.intern(path);
        stream = s->second.toInt();
      }
      e.u32(file);
      e.i64(stream);
    }
  });
}

void EtRecorder::record_end(const at::RecordFunction& fn, ThreadBuffer& buffer) {
  encode_record(buffer, [&](et::Encoder& e, ThreadBuffer& b) {
    e.begin(et::RecordKind::end, seq_.fetch_add(1, std::memory_order_relaxed));
    const auto& outputs = fn.outputs();
    const std::size_t n = fn.num_outputs();
    const bool logged = n <= outputs.size();
    std::uint8_t flags = logged ? et::kOutputsLogged : 0;
    const bool comm = logged && fn.isNcclMeta();
    if (comm) flags |= et::kCommAttrs;
    // A c10d op's process group (c10d_group.h), as comm attrs.
    const auto group = b.groups.take(fn.handle());
    if (logged && !comm && !group.empty()) flags |= et::kCommAttrs;
    auto f = e.reserve(2 * 8 + 1 + 4);
    f.u64(fn.handle());
    f.u64(fn.threadId());
    f.u8(flags);
    if (logged) f.u32(static_cast<std::uint32_t>(n));
    e.commit(f);
    if (logged) {
      for (std::size_t i = outputs.size() - n; i < outputs.size(); ++i)
        et_values::put_value(e, b, outputs[i]);
    }
    if (logged && !comm && !group.empty()) {
      e.u32(static_cast<std::uint32_t>(group.size()));
      for (const auto& [name, value] : group) {
        e.u32(b.intern(name));
        e.u32(b.intern(std::string_view(name) == "pg_size" ? "uint64" : "string"));
        e.u32(b.intern(value));
      }
    }
    if (comm) {
      // torch's getCommsNodeAttrs: read from the ParamCommsDebugInfo still
      // set at this end callback.
      std::vector<std::array<std::uint32_t, 3>> attrs;
      if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PARAM_COMMS_INFO) == nullptr) {
        attrs.push_back({b.intern("debug"), b.intern("string"), b.intern("\"missing comms info\"")});
      } else {
        // SaveNcclMetaConfig is torch 2.6's; before it, the flag is truncate
        // alone (and every introspection is on).
#if CHAKRA_TORCH_AT_LEAST(2, 6)
        const auto meta = torch::profiler::impl::saveNcclMeta(
            fn, torch::profiler::impl::SaveNcclMetaConfig(false, true, false, true));
#else
        const auto meta = torch::profiler::impl::saveNcclMeta(fn, /*truncate=*/false);
#endif
        for (const auto& a : kCommAttrs) {
          const auto it = meta.find(a.meta_key);
          if (it != meta.end())
            attrs.push_back({b.intern(a.et_name), b.intern(a.type), b.intern(it->second)});
        }
      }
      e.u32(static_cast<std::uint32_t>(attrs.size()));
      for (const auto& a : attrs)
        for (auto v : a) e.u32(v);
    }
  });
}

}  // namespace chakrashim::bridge
