// chakrashim's own Execution Trace recorder (CHAKRA_ET_RECORDER=native;
// docs/et-recorder.md): the same ET as torch's ExecutionTraceObserver, at a
// small part of its cost on the training thread.
//
// On the training thread, each op's start and end copy only what must be
// read while the op runs (name, ids, scope, schema by operator, and every
// input's and output's identity, dtype, shape, strides and scalars) into
// compact binary records (writers/et_records.h), in per-thread chunks of
// mmap'd pages charged to the window's MemoryBudget. After the window the
// writer thread turns them into torch's JSON (writers/et_json_writer.h).
//
// Two RecordFunction callbacks, so that our op spans leave the recorder's
// work out: `start` is registered before the op-span callback (its work
// ends before the span's start time is taken), `end` after it (its work
// begins after the span's end time). End callbacks run in registration
// order, so the window's deferred boundary (capture.h) must run after our
// end too, or the step's own Optimizer.step node would be lost: the end
// callback calls Capture::on_recorder_op_end once it has recorded.
//
// Threads: the callbacks touch only the calling thread's buffer (its lock
// is uncontended but for take()), one process-wide atomic sequence number,
// and atomics of this object.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/record_function.h>

#include "bridge/record_chunk.h"
#include "chakrashim/memory_budget.h"
#include "writers/et_json_writer.h"

namespace chakrashim::bridge {

// One thread's records, as taken at the window's end.
struct EtThreadRecords {
  std::vector<std::string> strings;
  std::vector<RecordChunk> chunks;
};

// Everything the writer needs for the ET file.
struct EtRecords {
  std::vector<EtThreadRecords> threads;
  writers::EtHeader header;
  // The writer's view of the threads (pointers into `threads`).
  std::vector<writers::EtThreadStream> streams() const;
};

class EtRecorder {
 public:
  static EtRecorder& instance();

  // What the end callback calls after its own work, for every op (the
  // capture's deferred window boundary).
  static void set_after_end(void (*after_end)(const at::RecordFunction&));
  // Registers the start callback, disabled; before the op-span callback.
  // `budget` is charged for every chunk and string.
  void add(MemoryBudget* budget);
  // Registers the end callback; after the op-span callback.
  void add_end_callback();
  // Instead of add() and add_end_callback(): no callback of its own; the
  // op-span callback calls record_start() before the span's start and
  // record_end() after its end (callbacks.h, register_op_callback_with_et):
  // one RecordFunction callback an op instead of three (issue #52).
  void add_shared(MemoryBudget* budget);
  void enable();
  void disable();
  // Disables and unregisters both callbacks; the records stay for take().
  void remove();
  bool added() const { return added_.load(std::memory_order_acquire); }
  // Acquire: what add() set (the budget) is seen by a recording thread.
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  // Whether an op's end reaches the recorder after its span's end (its own
  // end callback, or the shared one): the boundary is run from there.
  bool ends_ops() const {
    return shared_.load(std::memory_order_acquire) || end_handle_.load() != at::INVALID_CALLBACK_HANDLE;
  }
  // Moves every thread's records out, with the header (after remove()).
  EtRecords take();
  // In a forked child: never record again, never touch a buffer (another
  // thread of the parent may have held its lock at fork), never touch
  // torch's callback table (its mutex, likewise). Flags only.
  void silence_in_forked_child();
  // Records the budget refused (the window was cut for memory).
  std::uint64_t records_refused() const { return refused_.load(); }

  // --- the callbacks' work (et_recorder.cpp) ---
  // One thread's records and caches (opaque outside et_recorder.cpp).
  struct ThreadBuffer;
  // The calling thread's buffer. A thread_local lookup: a caller that keeps
  // its own per-thread state may keep the reference there (callbacks.cpp);
  // the buffer lives as long as the process.
  ThreadBuffer& local();
  void record_start(const at::RecordFunction& fn) { record_start(fn, local()); }
  void record_end(const at::RecordFunction& fn) { record_end(fn, local()); }
  // `b`: this thread's buffer, from local().
  void record_start(const at::RecordFunction& fn, ThreadBuffer& b);
  void record_end(const at::RecordFunction& fn, ThreadBuffer& b);

 private:
  struct Lease;
  // add()'s and add_shared()'s common part: the budget and the header.
  void begin(MemoryBudget* budget);
  // A recording thread ends: its buffer, records and all, goes to the next
  // thread that records (Lease's destructor).
  void release(std::shared_ptr<ThreadBuffer> buffer);
  // Appends the thread's scratch record (its first `n` bytes); false if
  // the budget refused.
  bool commit(ThreadBuffer& b, std::size_t n);
  // Runs encode(Encoder&, ThreadBuffer&) for one record into `b` and
  // commits it.
  template <typename Encode>
  void encode_record(ThreadBuffer& b, Encode&& encode);

  std::atomic<bool> enabled_{false};
  std::atomic<bool> dead_{false};
  std::atomic<bool> added_{false};
  std::atomic<bool> shared_{false};  // add_shared: the op-span callback records
  std::atomic<std::uint64_t> seq_{1};
  std::atomic<std::uint64_t> refused_{0};
  MemoryBudget* budget_ = nullptr;
  at::CallbackHandle start_handle_ = at::INVALID_CALLBACK_HANDLE;
  std::atomic<at::CallbackHandle> end_handle_{at::INVALID_CALLBACK_HANDLE};
  std::mutex registry_mutex_;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  // Buffers of threads that ended, for the next new thread: a job that
  // runs each op on a thread of its own was charged a 256 KiB chunk per
  // thread, never released, and its 16 MiB window was cut after 215 ops.
  // Each op's records carry their thread's id, so one buffer may hold the
  // records of several threads, one after another.
  std::vector<std::shared_ptr<ThreadBuffer>> free_;
  writers::EtHeader header_;
};

}  // namespace chakrashim::bridge
