#include "bridge/callbacks.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include <torch/csrc/profiler/util.h>

#include "bridge/capture.h"
#include "bridge/et_recorder.h"
#include "bridge/span_store.h"
#include "chakrashim/collector.h"

namespace chakrashim::bridge {

namespace {

bool starts_with(const char* name, const std::string& prefix) {
  return name && std::strncmp(name, prefix.c_str(), prefix.size()) == 0;
}

// Nesting of step markers on this thread: a subclass's step() calling
// super().step(), or a wrapper optimizer, counts once (docs/design.md section 3).
thread_local int t_marker_depth = 0;
// This thread's outermost markers, numbered as they open, and the one inside
// which torch.optim's post hook counted a step (hook_counted_step_here).
thread_local std::uint64_t t_marker_serial = 0;
thread_local std::uint64_t t_hook_counted_marker = 0;

std::unique_ptr<at::ObserverContext> step_start(const at::RecordFunction& fn) {
  Capture& capture = Capture::instance();
  if (capture.dead()) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    capture.note_backward();
    return nullptr;
  }
  const char* name = fn.name();
  if (starts_with(name, capture.marker())) {
    if (t_marker_depth++ == 0) {
      ++t_marker_serial;
      capture.marker_opened();
    }
  } else {
    capture.count_user_record(name);
  }
  return nullptr;
}

void step_end(const at::RecordFunction& fn, at::ObserverContext*) {
  Capture& capture = Capture::instance();
  if (capture.dead()) return;
  // A marker that opened before we attached has no start here: ignore it.
  if (t_marker_depth == 0 || fn.scope() != at::RecordScope::USER_SCOPE ||
      !starts_with(fn.name(), capture.marker()))
    return;
  if (--t_marker_depth == 0) {
    capture.marker_closed();
    // The hooks went in, and this callback out, after this marker took its
    // callbacks: its post hook counted its step already (issue #53).
    if (t_hook_counted_marker == t_marker_serial) return;
    capture.on_step_end(fn);
  }
}

// What span_start hands to span_end. Allocated per op, so from a free list
// of this thread's (no malloc on the op path once warm): torch deletes the
// context through its virtual destructor, which ends in our operator delete
// on whichever thread ends the record (async records end elsewhere; the
// block then joins that thread's list).
struct SpanContext final : at::ObserverContext {
  static void operator delete(void* p) noexcept;

  std::int64_t start_ns = 0;
  std::uint64_t tid = 0;  // where it started: an async record may end elsewhere
  std::uint64_t external_id = 0;
  SpanStore::ThreadBuffer* buffer = nullptr;  // the starting thread's spans
  mutable OpenSpan open;  // registered with `buffer` while a kept op runs (span_store.h)
  bool keep = false;
  bool pushed = false;  // our external id is on CUPTI's stack for this op
  // Async records (gloo's) start on one thread, and end and are destroyed
  // on others: torch hands the record over under its own synchronization,
  // inside code TSan does not see; gloo's runloop thread may even run
  // span_end while the job's thread destroys the record later (CI's TSan,
  // 2026-12-03: "data race on vptr", our constructor on pt_gloo_runloop
  // against ~ObserverContext on the main thread, with no span_end there).
  // So each hand-over is ours too: a release at the end of span_start and
  // of span_end, an acquire at the start of span_end and in the destructor.
  // The context is then safe to end and destroy on any thread whatever
  // torch does. Plain moves on x86; issue #39.
  mutable std::atomic<bool> started{false};

  ~SpanContext() override { (void)started.load(std::memory_order_acquire); }
};

// What the op callbacks keep per thread, in one thread_local: in a
// dlopen'ed library each distinct thread_local costs a call to
// __tls_get_addr, so each callback reaches this state once and hands it on
// (to the span's context, to the native ET recorder). Trivial to construct
// and destroy, so that reaching it takes no guard (a thread_local with a
// destructor costs a second __tls_get_addr at every access, for its
// initialization flag): its free blocks are freed at thread exit by
// SpanThreadExit, made when its list first gets a block.
struct SpanThread {
  struct Node {
    Node* next;
  };
  // Free SpanContext blocks. Bounded: ops nest only so deep.
  static constexpr int kMaxFree = 256;
  Node* free_head = nullptr;
  int free_count = 0;
  std::uint64_t tid = 0;                      // 0: not looked up yet
  SpanStore::ThreadBuffer* buffer = nullptr;  // looked up at the first kept op
  // This thread's buffer with the native ET recorder (EtRecorder::local),
  // looked up at its first record. The recorder keeps every buffer for the
  // process's life, so the pointer stays valid; a record made in a
  // thread_local destructor after the recorder's lease went back lands in
  // a buffer another thread may have leased since, under that buffer's
  // lock: still whole, and the records carry their own thread's id.
  EtRecorder::ThreadBuffer* et = nullptr;
  bool exit_hooked = false;  // SpanThreadExit exists for this thread
};
static_assert(std::is_trivially_destructible_v<SpanThread>);
constinit thread_local SpanThread t_span;

// Frees the thread's free SpanContext blocks as it ends; a block freed on
// it later (in another thread_local's destructor) goes back to the heap.
struct SpanThreadExit {
  ~SpanThreadExit() {
    SpanThread& t = t_span;
    while (t.free_head) {
      SpanThread::Node* n = t.free_head;
      t.free_head = n->next;
      ::operator delete(n);
    }
    t.free_count = SpanThread::kMaxFree;
  }
};

void hook_thread_exit(SpanThread& t) {
  thread_local SpanThreadExit at_exit;
  (void)at_exit;
  t.exit_hooked = true;
}

// This thread's SpanThread, its address looked up once. GCC treats the
// address of a thread_local in a dlopen'ed library (a __tls_get_addr call)
// as cheap to compute again, and did so at every use of a reference to it
// (six calls an op); the empty asm hides where the pointer came from, so
// the compiler keeps it in a register instead.
inline SpanThread& this_thread_state() {
  SpanThread* p = &t_span;
  asm("" : "+r"(p));
  return *p;
}

void SpanContext::operator delete(void* p) noexcept {
  if (!p) return;
  SpanThread& t = this_thread_state();
  if (t.free_count < SpanThread::kMaxFree) {
    if (!t.exit_hooked) hook_thread_exit(t);
    auto* n = static_cast<SpanThread::Node*>(p);
    n->next = t.free_head;
    t.free_head = n;
    ++t.free_count;
    return;
  }
  ::operator delete(p);
}

// Makes a SpanContext with the thread's state at hand (no second
// thread-local lookup): a block from the thread's free list, which its
// operator delete (whichever thread torch destroys it on) refills.
std::unique_ptr<SpanContext> new_context(SpanThread& t) {
  static_assert(sizeof(SpanContext) >= sizeof(SpanThread::Node));
  void* p;
  if (t.free_head) {
    SpanThread::Node* n = t.free_head;
    t.free_head = n->next;
    --t.free_count;
    p = n;
  } else {
    p = ::operator new(sizeof(SpanContext));
  }
  return std::unique_ptr<SpanContext>(::new (p) SpanContext());
}

EtRecorder::ThreadBuffer& et_buffer(SpanThread& t, EtRecorder& recorder) {
  if (!t.et) t.et = &recorder.local();
  return *t.et;
}

std::unique_ptr<at::ObserverContext> span_start_on(const at::RecordFunction& fn, SpanThread& t) {
  Capture& capture = Capture::instance();
  // First: a forked child (dead) must never finalize the parent's window.
  if (capture.dead()) return nullptr;
  // Async records (gloo:*, nccl:*) are kept too: the ET has nodes for them,
  // and the rf_id join needs their spans. They are drawn on the thread that
  // started them.
  auto ctx = new_context(t);
  if (t.tid == 0) t.tid = os_tid();
  ctx->keep = capture.keeping();
  ctx->tid = t.tid;
  if (ctx->keep) {
    if (!t.buffer) t.buffer = capture.span_buffer();
    ctx->buffer = t.buffer;
    ctx->external_id = capture.next_external_id();
    // Registered before its time is read, so that the registration is not
    // in the op's span: the window's end may close it while it runs.
    OpenSpan& o = ctx->open;
    o.name = fn.name();
    o.category = fn.scope() == at::RecordScope::USER_SCOPE ? HostCategory::user_annotation : HostCategory::cpu_op;
    o.tid = static_cast<std::int64_t>(ctx->tid);
    o.external_id = ctx->external_id;
    o.rf_id = fn.handle();
    o.sequence_nr = fn.seqNr() >= 0 ? fn.seqNr() : -1;
    o.fwd_thread_id = fn.forwardThreadId();
    capture.open_span(*ctx->buffer, o);
  }
  // A signal or a cut, acted on by the stepping thread; not inside the
  // capture's own critical section (a record that a torch call of ours
  // ran), where acting would take its lock again. After this op's span is
  // open: torch's ET callback, which ran before ours, recorded its start,
  // and the window ending now closes it in both files (a point at the edge).
  if ((SignalRelay::pending() || capture.cut_requested()) && !Capture::this_thread_holds_lock()) {
    if (SignalRelay::pending()) capture.on_signal_pending();
    if (capture.cut_requested()) capture.on_cut_requested();
  }
  // The start before the push and (in span_end) the pop before the end: the
  // op's span then encloses every launch CUPTI attributes to it.
  ctx->start_ns = now_ns();
  if (ctx->keep) {
    ctx->open.start_ns.store(ctx->start_ns, std::memory_order_relaxed);
    // GPU work launched inside this op carries its External id. Not for
    // async records: they end on another thread, and CUPTI's stack is per
    // thread (docs/design.md section 4.5).
    auto& collector = collector::Collector::instance();
    if (!fn.isAsync() && collector.active()) {
      collector.note_thread(static_cast<std::int64_t>(ctx->tid));
      ctx->pushed = collector.push(ctx->external_id);
    }
  }
  ctx->started.store(true, std::memory_order_release);
  return ctx;
}

std::unique_ptr<at::ObserverContext> span_start(const at::RecordFunction& fn) {
  return span_start_on(fn, this_thread_state());
}

void span_end(const at::RecordFunction& fn, at::ObserverContext* ctx_ptr) {
  Capture& capture = Capture::instance();
  if (capture.dead()) return;
  const auto* ctx = static_cast<const SpanContext*>(ctx_ptr);
  if (ctx) (void)ctx->started.load(std::memory_order_acquire);  // see SpanContext
  // Released again at the end (see SpanContext): the destroying thread may
  // be another one still.
  struct ReleaseAtEnd {
    const SpanContext* ctx;
    ~ReleaseAtEnd() {
      if (ctx) ctx->started.store(true, std::memory_order_release);
    }
  } release_at_end{ctx};
  if (ctx && ctx->pushed) collector::Collector::instance().pop();
  const std::int64_t end = now_ns();
  if (ctx && ctx->keep) {
    SpanRecord span;
    span.category = fn.scope() == at::RecordScope::USER_SCOPE ? HostCategory::user_annotation
                                                              : HostCategory::cpu_op;
    span.name = fn.name();
    span.tid = static_cast<std::int64_t>(ctx->tid);
    span.start_ns = ctx->start_ns;
    span.end_ns = end;
    span.external_id = ctx->external_id;
    span.rf_id = fn.handle();
    span.sequence_nr = fn.seqNr() >= 0 ? fn.seqNr() : -1;
    span.fwd_thread_id = fn.forwardThreadId();
    ExtraArgs comm;
    if (fn.isNcclMeta()) {
      // record_param_comms: the comm args Kineto writes (collective name,
      // message sizes, group, dtype, ...), read from torch's thread-local
      // ParamCommsDebugInfo, which is still set at this end callback.
      try {
        for (auto& [name, value] : torch::profiler::impl::saveNcclMeta(fn))
          comm.emplace_back(name, value);
      } catch (...) {
      }
      span.extra_args = &comm;
    }
    capture.end_span(*ctx->buffer, ctx->open, span);
  }
  if (ctx_ptr) capture.on_op_end(fn, end);
}

// The op-span callback with the native ET recorder's work in it (issue #52):
// one RecordFunction callback an op instead of three (spans, the recorder's
// start with inputs, its end with outputs), which saves torch's dispatch of
// two callbacks on every op. The order keeps the span free of the
// recorder's copying, as the three callbacks' order did: the inputs are
// recorded before the span's start time is read, the outputs after its end
// time; then the deferred window boundary, which the recorder's end ran.
std::unique_ptr<at::ObserverContext> op_start_with_et(const at::RecordFunction& fn) {
  SpanThread& t = this_thread_state();
  EtRecorder& recorder = EtRecorder::instance();
  if (recorder.enabled()) recorder.record_start(fn, et_buffer(t, recorder));
  return span_start_on(fn, t);
}

void op_end_with_et(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  span_end(fn, ctx);
  EtRecorder& recorder = EtRecorder::instance();
  // The ending thread's buffer, as ever: an async record may end on
  // another thread than it started on.
  if (recorder.enabled()) recorder.record_end(fn, et_buffer(this_thread_state(), recorder));
  Capture::instance().on_recorder_op_end(fn);
}

}  // namespace

// Until the first autograd backward function runs (a sign that the job
// trains, for the exit warning of a job without optimizer steps): removes
// itself at the first one.
std::unique_ptr<at::ObserverContext> backward_seen(const at::RecordFunction&) {
  Capture::instance().note_backward();
  return nullptr;
}

void hook_counted_step_here() { t_hook_counted_marker = t_marker_depth > 0 ? t_marker_serial : 0; }

at::CallbackHandle register_backward_watch() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(&backward_seen).scopes({at::RecordScope::BACKWARD_FUNCTION}));
}

at::CallbackHandle register_step_callback() {
  // BACKWARD_FUNCTION too: until the optimizer hooks take over, a job that
  // trains without torch.optim is told at exit how to set a step marker.
  return at::addGlobalCallback(at::RecordFunctionCallback(&step_start, &step_end)
                                   .scopes({at::RecordScope::USER_SCOPE,
                                            at::RecordScope::BACKWARD_FUNCTION}));
}

at::CallbackHandle register_op_span_callback() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(&span_start, &span_end).needsIds(true).scopes(traced_scopes()));
}

at::CallbackHandle register_op_callback_with_et() {
  return at::addGlobalCallback(at::RecordFunctionCallback(&op_start_with_et, &op_end_with_et)
                                   .needsInputs(true)
                                   .needsOutputs(true)
                                   .needsIds(true)
                                   .scopes(traced_scopes()));
}

}  // namespace chakrashim::bridge
