// Host spans recorded by the op-span callback, kept per thread so that the
// recording threads never contend: each thread appends to its own buffer
// (under its own spin lock, uncontended but at disarm, when the stepping
// thread takes them all).
//
// Memory. Nothing per span goes to malloc's heap: spans are compact records
// in fixed-size chunks whose pages come from mmap (page_allocator.h), and
// names are interned per thread (a few hundred distinct ones). Long-lived
// small and large blocks of ours in the heap, between the job's short-lived
// tensor buffers, fragmented it: peak RSS grew by about four times the
// spans' own size (scripts/bench/bench_memory.py). Now it grows by their size, so
// CHAKRA_MAX_MEMORY bounds it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bridge/buffer_lock.h"
#include "bridge/page_allocator.h"
#include "chakrashim/events.h"
#include "chakrashim/memory_budget.h"
#include "chakrashim/string_table.h"

namespace chakrashim::bridge {

// What a span stored and a span handed over share: copied as one.
struct SpanFields {
  std::int64_t tid = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t external_id = 0;
  std::uint64_t rf_id = 0;
  std::int64_t sequence_nr = -1;    // -1: none
  std::uint64_t fwd_thread_id = 0;  // 0: none
};

// One span as stored: what HostSpan holds, with the name interned.
struct CompactSpan : SpanFields {
  const std::string* name = nullptr;  // interned, lives as long as the store
  std::uint32_t extra = 0;            // 1 + index into the thread's extra args, 0: none
  HostCategory category = HostCategory::cpu_op;
};

using SpanChunk = std::vector<CompactSpan, PageAllocator<CompactSpan>>;
using ExtraArgs = std::vector<std::pair<std::string, std::string>>;

// One span as the op-span callback hands it over: nothing allocated, the
// name as torch gives it (interned by the store).
struct SpanRecord : SpanFields {
  const char* name = nullptr;
  const ExtraArgs* extra_args = nullptr;
  HostCategory category = HostCategory::cpu_op;
};

// A kept span between its op's start and end, as the op-span callback's
// context holds it (callbacks.cpp): registered with its thread's buffer at
// the start, so that the window's end, which may come while the op runs (a
// record_function around the whole iteration, issue #49), closes it at the
// edge with the spans inside it, instead of losing it.
struct OpenSpan {
  const char* name = nullptr;  // torch's, valid while the op runs
  HostCategory category = HostCategory::cpu_op;
  std::int64_t tid = 0;
  std::uint64_t external_id = 0;
  std::uint64_t rf_id = 0;
  std::int64_t sequence_nr = -1;
  std::uint64_t fwd_thread_id = 0;
  // Set by the starting thread right after registering, outside the lock
  // (the span's time must not hold our bookkeeping): 0 until then.
  std::atomic<std::int64_t> start_ns{0};
  bool closed = false;  // closed at an edge: its end adds nothing (under the buffer's lock)
};

// One thread's spans, taken out at disarm.
struct ThreadSpans {
  std::vector<SpanChunk> chunks;
  std::vector<ExtraArgs> extras;  // comm args of record_param_comms ops (rare)
  // Rebuilds the full record of one span (for the writer).
  HostSpan expand(const CompactSpan& s) const;
};

class SpanStore {
 public:
  class ThreadBuffer;
  static constexpr std::size_t kChunk = 8192;  // spans per chunk, ~640 KB

  // The window's memory budget (CHAKRA_MAX_MEMORY), charged per chunk,
  // per new name and per comm-args record. Set before any add.
  void set_budget(MemoryBudget* budget) { budget_ = budget; }
  // The calling thread's buffer (created on first use). The op-span callback
  // looks it up once per op, at the op's start.
  ThreadBuffer* local();
  // Appends to `buffer` (the buffer of the thread that started the op; an
  // async record may end on another thread); false (nothing kept) when the
  // budget refuses the memory it needs. With past_cap, the span is kept
  // whatever the budget says (MemoryBudget::charge_past_cap): for an op
  // that began before the window's cap was reached. Thread-safe.
  bool add(ThreadBuffer& buffer, const SpanRecord& span, bool past_cap = false);
  bool add(const SpanRecord& span) { return add(*local(), span); }
  // A kept op begins (OpenSpan): registered with `buffer` (its starting
  // thread's) until end(). Thread-safe.
  void open(ThreadBuffer& buffer, OpenSpan& span);
  // Its op ends: unregistered, and `record` added as add() does, unless an
  // edge closed it meanwhile (then nothing, and true). Thread-safe.
  bool end(ThreadBuffer& buffer, OpenSpan& span, const SpanRecord& record, bool past_cap = false);
  // Moves every thread's spans out, with each span still open closed at
  // `edge_ns` (the window's end) and kept whatever the budget says (its
  // children are). Thread-safe.
  std::vector<ThreadSpans> take_all(std::int64_t edge_ns = 0);
  // A thread that recorded ends: its buffer, spans and all, goes to the
  // next thread that records. Called at thread exit. Thread-safe.
  void release(std::shared_ptr<ThreadBuffer> buffer);
  // In a forked child: release() never takes the registry's mutex (another
  // thread of the parent may have held it at fork). A flag only.
  void forget_in_forked_child() { forked_.store(true, std::memory_order_relaxed); }
  // Buffers that recorded spans (ever): more than one if another thread
  // ever ran ops beside the first. Thread-safe.
  std::size_t threads() {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    return buffers_.size();
  }

  class ThreadBuffer {
    friend class SpanStore;
    BufferLock lock;
    ThreadSpans spans;
    // Node-based: the strings never move, so spans may point at them. Kept
    // across windows (names are few), never taken.
    StringSet names;
    // torch's name pointer -> its interned copy: an op's name is the same
    // pointer at every call, so most spans find theirs here without hashing
    // the text. The text is compared too: a name torch owned and freed may
    // come back at the same address as another name.
    struct Cached {
      const char* pointer = nullptr;
      const std::string* interned = nullptr;
    };
    static constexpr std::size_t kCache = 512;
    Cached cache[kCache];
    const std::string* intern(const char* name, std::uint64_t& new_bytes);
    // The kept spans begun and not ended (nesting depth, a few): each
    // points into its op's callback context, alive until its end.
    std::vector<OpenSpan*> open;
  };

 private:
  bool add_locked(ThreadBuffer& b, const SpanRecord& span, bool past_cap);

 public:

 private:
  std::mutex registry_mutex_;
  // Buffers outlive their threads: a thread that ended before disarm still
  // has its spans taken.
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  // Buffers of threads that ended, for the next new thread: a job that ran
  // each op on a thread of its own was charged a chunk (~640 KB) per
  // thread until disarm, and its window was cut for memory after a few
  // dozen ops (issue #34). Every span carries its thread's id, so one
  // buffer may hold the spans of several threads, one after another.
  std::vector<std::shared_ptr<ThreadBuffer>> free_;
  std::atomic<bool> forked_{false};
  MemoryBudget* budget_ = nullptr;
};

}  // namespace chakrashim::bridge
