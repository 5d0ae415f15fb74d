#include "bridge/callbacks.h"

#include <cstring>
#include <memory>

#include <torch/csrc/profiler/util.h>

#include "bridge/capture.h"
#include "chakrashim/collector.h"

namespace chakrashim::bridge {

namespace {

bool starts_with(const char* name, const std::string& prefix) {
  return name && std::strncmp(name, prefix.c_str(), prefix.size()) == 0;
}

// Nesting of step markers on this thread: a subclass's step() calling
// super().step(), or a wrapper optimizer, counts once (DESIGN.md section 3).
thread_local int t_marker_depth = 0;

std::unique_ptr<at::ObserverContext> step_start(const at::RecordFunction& fn) {
  Capture& capture = Capture::instance();
  if (capture.dead()) return nullptr;
  const char* name = fn.name();
  if (starts_with(name, capture.marker())) {
    ++t_marker_depth;
  } else {
    capture.count_user_record(name);
  }
  return nullptr;
}

void step_end(const at::RecordFunction& fn, at::ObserverContext*) {
  Capture& capture = Capture::instance();
  if (capture.dead()) return;
  // A marker that opened before we attached has no start here: ignore it.
  if (t_marker_depth == 0 || !starts_with(fn.name(), capture.marker())) return;
  if (--t_marker_depth == 0) capture.on_step_end(fn);
}

struct SpanContext final : at::ObserverContext {
  std::int64_t start_ns = 0;
  std::uint64_t tid = 0;  // where it started: an async record may end elsewhere
  std::uint64_t external_id = 0;
  bool keep = false;
  bool pushed = false;  // our external id is on CUPTI's stack for this op
};

std::unique_ptr<at::ObserverContext> span_start(const at::RecordFunction& fn) {
  Capture& capture = Capture::instance();
  if (SignalRelay::pending() != 0) capture.on_signal_pending();
  if (capture.cut_requested()) capture.on_cut_requested();
  // Async records (gloo:*, nccl:*) are kept too: the ET has nodes for them,
  // and the rf_id join needs their spans. They are drawn on the thread that
  // started them.
  if (capture.dead()) return nullptr;
  auto ctx = std::make_unique<SpanContext>();
  ctx->keep = capture.keeping();
  ctx->tid = os_tid();
  // The start before the push and (in span_end) the pop before the end: the
  // op's span then encloses every launch CUPTI attributes to it.
  ctx->start_ns = now_ns();
  if (ctx->keep) {
    ctx->external_id = capture.next_external_id();
    // GPU work launched inside this op carries its External id. Not for
    // async records: they end on another thread, and CUPTI's stack is per
    // thread (DESIGN.md section 4.5).
    auto& collector = collector::Collector::instance();
    if (!fn.isAsync() && collector.active()) {
      collector.note_thread(static_cast<std::int64_t>(ctx->tid));
      ctx->pushed = collector.push(ctx->external_id);
    }
  }
  return ctx;
}

void span_end(const at::RecordFunction& fn, at::ObserverContext* ctx_ptr) {
  Capture& capture = Capture::instance();
  if (capture.dead()) return;
  const auto* ctx = static_cast<const SpanContext*>(ctx_ptr);
  if (ctx && ctx->pushed) collector::Collector::instance().pop();
  const std::int64_t end = now_ns();
  if (ctx && ctx->keep) {
    HostSpan span;
    span.category = fn.scope() == at::RecordScope::USER_SCOPE ? HostCategory::user_annotation
                                                              : HostCategory::cpu_op;
    span.name = fn.name();
    span.tid = static_cast<std::int64_t>(ctx->tid);
    span.start_ns = ctx->start_ns;
    span.end_ns = end;
    span.external_id = ctx->external_id;
    span.rf_id = fn.handle();
    if (fn.seqNr() >= 0) span.sequence_nr = fn.seqNr();
    if (fn.forwardThreadId() != 0) span.fwd_thread_id = fn.forwardThreadId();
    if (fn.isNcclMeta()) {
      // record_param_comms: the comm args Kineto writes (collective name,
      // message sizes, group, dtype, ...), read from torch's thread-local
      // ParamCommsDebugInfo, which is still set at this end callback.
      try {
        for (auto& [name, value] : torch::profiler::impl::saveNcclMeta(fn))
          span.extra_args.emplace_back(name, value);
      } catch (...) {
      }
    }
    capture.add_span(std::move(span));
  }
  if (ctx_ptr) capture.on_op_end(fn, end);
}

}  // namespace

at::CallbackHandle register_step_callback() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(&step_start, &step_end).scopes({at::RecordScope::USER_SCOPE}));
}

at::CallbackHandle register_op_span_callback() {
  return at::addGlobalCallback(at::RecordFunctionCallback(&span_start, &span_end).needsIds(true));
}

}  // namespace chakrashim::bridge
