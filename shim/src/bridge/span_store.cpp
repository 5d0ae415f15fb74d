#include "bridge/span_store.h"

namespace chakrashim::bridge {

HostSpan ThreadSpans::expand(const CompactSpan& s) const {
  HostSpan h;
  h.category = s.category;
  h.name = s.name ? *s.name : std::string();
  h.tid = s.tid;
  h.start_ns = s.start_ns;
  h.end_ns = s.end_ns;
  h.external_id = s.external_id;
  h.rf_id = s.rf_id;
  if (s.sequence_nr >= 0) h.sequence_nr = s.sequence_nr;
  if (s.fwd_thread_id != 0) h.fwd_thread_id = s.fwd_thread_id;
  if (s.extra != 0 && s.extra <= extras.size()) h.extra_args = extras[s.extra - 1];
  return h;
}

SpanStore::ThreadBuffer& SpanStore::local() {
  // One SpanStore exists per process (Capture owns it), so a thread_local
  // pointer to this thread's buffer is enough.
  thread_local std::shared_ptr<ThreadBuffer> buffer;
  if (!buffer) {
    buffer = std::make_shared<ThreadBuffer>();
    std::lock_guard<std::mutex> lock(registry_mutex_);
    buffers_.push_back(buffer);
  }
  return *buffer;
}

void SpanStore::add(const HostSpan& span) {
  ThreadBuffer& b = local();
  std::uint64_t bytes = 0;
  std::lock_guard<std::mutex> lock(b.mutex);
  auto [name, fresh] = b.names.insert(span.name);
  if (fresh) bytes += name->capacity() + 64;
  auto& chunks = b.spans.chunks;
  if (chunks.empty() || chunks.back().size() == kChunk) {
    chunks.emplace_back().reserve(kChunk);
    bytes += kChunk * sizeof(CompactSpan);
  }
  CompactSpan c;
  c.name = &*name;
  c.tid = span.tid;
  c.start_ns = span.start_ns;
  c.end_ns = span.end_ns;
  c.external_id = span.external_id;
  c.rf_id = span.rf_id;
  c.sequence_nr = span.sequence_nr.value_or(-1);
  c.fwd_thread_id = span.fwd_thread_id.value_or(0);
  c.category = span.category;
  if (!span.extra_args.empty()) {
    b.spans.extras.push_back(span.extra_args);
    c.extra = static_cast<std::uint32_t>(b.spans.extras.size());
    for (const auto& [k, v] : span.extra_args) bytes += k.capacity() + v.capacity() + 64;
  }
  chunks.back().push_back(c);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

std::vector<ThreadSpans> SpanStore::take_all() {
  std::vector<ThreadSpans> all;
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (const auto& b : buffers_) {
    std::lock_guard<std::mutex> inner(b->mutex);
    if (!b->spans.chunks.empty()) all.push_back(std::move(b->spans));
    b->spans = {};
  }
  bytes_.store(0);
  return all;
}

}  // namespace chakrashim::bridge
