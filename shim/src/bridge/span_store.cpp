#include "bridge/span_store.h"

#include <algorithm>
#include <cstring>
#include <memory>

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

namespace {

// The calling thread's hold on its buffer; hands it back at thread exit.
struct Lease {
  SpanStore* store = nullptr;
  std::shared_ptr<SpanStore::ThreadBuffer> buffer;
  ~Lease() {
    if (buffer) store->release(std::move(buffer));
  }
};

}  // namespace

SpanStore::ThreadBuffer* SpanStore::local() {
  // One SpanStore exists per process (Capture owns it), so a thread_local
  // pointer to this thread's buffer is enough. The registry shares it, so
  // that a thread that ended before disarm still has its spans taken.
  thread_local Lease lease;
  if (!lease.buffer) {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    lease.store = this;
    if (!free_.empty()) {
      lease.buffer = std::move(free_.back());
      free_.pop_back();
    } else {
      lease.buffer = std::make_shared<ThreadBuffer>();
      buffers_.push_back(lease.buffer);
    }
  }
  return lease.buffer.get();
}

void SpanStore::release(std::shared_ptr<ThreadBuffer> buffer) {
  // In a forked child the registry's mutex may have been held at fork.
  if (forked_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(registry_mutex_);
  free_.push_back(std::move(buffer));
}

const std::string* SpanStore::ThreadBuffer::intern(const char* name, std::uint64_t& new_bytes) {
  if (!name) name = "";
  // torch copies every name but an operator's into the RecordFunction, so
  // the same address may hold another name later: the text is compared.
  Cached& slot = cache[(reinterpret_cast<std::uintptr_t>(name) >> 4) % kCache];
  if (slot.pointer == name && std::strcmp(slot.interned->c_str(), name) == 0) return slot.interned;
  auto it = names.find(std::string_view(name));  // only on a miss: no copy
  if (it == names.end()) {
    it = names.emplace(name).first;
    new_bytes += it->capacity() + 64;
  }
  slot = {name, &*it};
  return &*it;
}

bool SpanStore::add(ThreadBuffer& b, const SpanRecord& span, bool past_cap) {
  std::lock_guard<BufferLock> lock(b.lock);
  return add_locked(b, span, past_cap);
}

void SpanStore::open(ThreadBuffer& b, OpenSpan& span) {
  std::lock_guard<BufferLock> lock(b.lock);
  b.open.push_back(&span);
}

bool SpanStore::end(ThreadBuffer& b, OpenSpan& span, const SpanRecord& record, bool past_cap) {
  std::lock_guard<BufferLock> lock(b.lock);
  // Ops end innermost first on a thread: searched from the back.
  for (std::size_t i = b.open.size(); i-- > 0;)
    if (b.open[i] == &span) {
      b.open.erase(b.open.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  if (span.closed) return true;
  return add_locked(b, record, past_cap);
}

bool SpanStore::add_locked(ThreadBuffer& b, const SpanRecord& span, bool past_cap) {
  auto& chunks = b.spans.chunks;
  // What this span needs beyond its record, charged before anything moves.
  std::uint64_t bytes = 0;
  const bool new_chunk = chunks.empty() || chunks.back().size() == kChunk;
  if (new_chunk) bytes += kChunk * sizeof(CompactSpan);
  if (span.extra_args)
    for (const auto& [k, v] : *span.extra_args) bytes += k.capacity() + v.capacity() + 64;
  std::uint64_t name_bytes = 0;
  const std::string* name = b.intern(span.name, name_bytes);
  // A new name is kept whatever the budget says (names are few and live
  // across windows); it is charged with the rest.
  bytes += name_bytes;
  if (bytes != 0 && budget_) {
    if (past_cap) budget_->charge_past_cap(bytes);
    else if (!budget_->try_charge(bytes)) return false;
  }
  if (new_chunk) chunks.emplace_back().reserve(kChunk);
  CompactSpan c;
  static_cast<SpanFields&>(c) = span;
  c.name = name;
  c.category = span.category;
  if (span.extra_args && !span.extra_args->empty()) {
    b.spans.extras.push_back(*span.extra_args);
    c.extra = static_cast<std::uint32_t>(b.spans.extras.size());
  }
  chunks.back().push_back(c);
  return true;
}

std::vector<ThreadSpans> SpanStore::take_all(std::int64_t edge_ns) {
  std::vector<ThreadSpans> all;
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (const auto& b : buffers_) {
    std::lock_guard<BufferLock> inner(b->lock);
    // Ops open across the edge end there (their op still runs, so its name
    // is alive: its end waits for this lock). One that began after the edge
    // (another thread's, while the window closed), or whose start time is
    // not set yet, is kept as a point at its start: the ET recorder, which
    // stops a moment later, closes it too, and every ET node finds its span.
    for (OpenSpan* o : b->open) {
      o->closed = true;
      if (edge_ns == 0) continue;
      std::int64_t start = o->start_ns.load(std::memory_order_relaxed);
      if (start == 0) start = edge_ns;
      SpanRecord r;
      r.tid = o->tid;
      r.start_ns = start;
      r.end_ns = std::max(edge_ns, start);
      r.external_id = o->external_id;
      r.rf_id = o->rf_id;
      r.sequence_nr = o->sequence_nr;
      r.fwd_thread_id = o->fwd_thread_id;
      r.name = o->name;
      r.category = o->category;
      add_locked(*b, r, /*past_cap=*/true);
    }
    b->open.clear();
    if (!b->spans.chunks.empty()) all.push_back(std::move(b->spans));
    b->spans = {};
  }
  return all;
}

}  // namespace chakrashim::bridge
