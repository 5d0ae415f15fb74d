#include "bridge/span_store.h"

namespace chakrashim::bridge {

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

void SpanStore::add(HostSpan&& span) {
  bytes_.fetch_add(sizeof(HostSpan) + span.name.capacity(), std::memory_order_relaxed);
  ThreadBuffer& b = local();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.spans.push_back(std::move(span));
}

std::vector<HostSpan> SpanStore::take_all() {
  std::vector<HostSpan> all;
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (const auto& b : buffers_) {
    std::lock_guard<std::mutex> inner(b->mutex);
    if (all.empty()) {
      all = std::move(b->spans);
    } else {
      all.insert(all.end(), std::make_move_iterator(b->spans.begin()),
                 std::make_move_iterator(b->spans.end()));
    }
    b->spans = {};
  }
  bytes_.store(0);
  return all;
}

}  // namespace chakrashim::bridge
