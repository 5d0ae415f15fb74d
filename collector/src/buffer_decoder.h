// One window's CUPTI buffers -> DeviceCapture: walks each buffer with the
// loaded CUPTI's cuptiActivityGetNextRecord, decodes the records
// (record_decoder.h), moves them onto the host clock, interns their display
// names and keeps the external-correlation records. Runs on the collector's
// decode thread only; the benchmark drives it directly.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <cupti_activity.h>

#include "chakrashim/events.h"
#include "chakrashim/memory_budget.h"
#include "record_decoder.h"

namespace chakrashim::collector {

class BufferDecoder {
 public:
  using NextRecordFn = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);
  // cuptiGetCallbackName, for launch names; nullptr gives "cuda_runtime_cbid_N".
  using CallbackNameFn = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);

  // `budget`: the window's one memory budget (CHAKRA_MAX_MEMORY), charged
  // a block at a time as events and correlation records accumulate; what
  // it refuses is dropped and counted. nullptr: no bound (benchmarks).
  // `clock_offset_ns` is added to every CUPTI time.
  BufferDecoder(RecordDecoder decoder, NextRecordFn next, CallbackNameFn names,
                std::int64_t clock_offset_ns, MemoryBudget* budget);

  // Bytes charged at a time: about a thousand events.
  static constexpr std::size_t kChargeBlock = 64 * 1024;

  void decode(std::uint8_t* buffer, std::size_t valid_bytes);
  DeviceCapture& capture() { return capture_; }

 private:
  std::uint32_t intern(std::string name);
  template <typename Make>
  std::uint32_t keyed(std::uint64_t key, Make make);

  RecordDecoder decoder_;
  NextRecordFn next_;
  CallbackNameFn names_;
  std::int64_t offset_;
  // Room for one more record of `size` bytes in a store holding `count`
  // records, charged `charged` bytes so far; false when the budget refuses.
  bool room(std::size_t count, std::size_t size, std::size_t& charged);

  MemoryBudget* budget_;
  std::size_t events_charged_ = 0;        // bytes
  std::size_t correlations_charged_ = 0;  // bytes
  DeviceCapture capture_;
  std::unordered_map<const char*, std::uint32_t> kernel_name_by_ptr_;
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::unordered_map<std::uint64_t, std::uint32_t> keyed_name_;  // (kind, key) -> name
};

}  // namespace chakrashim::collector
