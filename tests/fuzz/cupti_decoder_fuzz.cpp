// The CUPTI record decoder and what follows it, on arbitrary buffers:
// BufferDecoder (walk, decode, names) -> join_device_capture -> the Kineto
// writer. The input is a CUPTI activity buffer; it is walked the way CUPTI
// 13 walks one (each record sized by its kind, 8-byte aligned), since the
// real libcupti is not ours to fuzz. Kernel name pointers are the one thing
// CUPTI guarantees and the bytes cannot: they are pointed at strings taken
// from the input. Whatever the bytes, no crash, every kept event has
// start <= end, and the written trace is valid JSON.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cupti_activity.h>
#include <nlohmann/json.hpp>

#include "buffer_decoder.h"
#include "chakrashim/collector.h"
#include "files/byte_sink.h"
#include "fuzz_support.h"
#include "writers/kineto_trace_writer.h"

using namespace chakrashim;

namespace {

std::uint32_t kind_of(const void* record) {
  std::uint32_t k;  // not the enum: arbitrary bytes are no valid enum value
  std::memcpy(&k, record, sizeof k);
  return k;
}

std::size_t record_size(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

// cuptiActivityGetNextRecord's contract, for CUDA 13's layouts.
CUptiResult next_record(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  std::size_t at = 0;
  if (*record) {
    const auto* r = reinterpret_cast<uint8_t*>(*record);
    at = static_cast<std::size_t>(r - buffer) + record_size(kind_of(r));
    at = (at + 7) & ~std::size_t{7};
  }
  if (at + sizeof(CUpti_ActivityKind) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  const std::size_t size = record_size(kind_of(buffer + at));
  if (size == 0 || at + size > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + at);
  return CUPTI_SUCCESS;
}

std::vector<std::string>* g_names = nullptr;

CUptiResult callback_name(CUpti_CallbackDomain, uint32_t cbid, const char** name) {
  if (!g_names || g_names->empty() || cbid % 5 == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = (*g_names)[cbid % g_names->size()].c_str();
  return CUPTI_SUCCESS;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The tail after the last 0xff byte gives names; the rest is the buffer.
  std::vector<std::string> names{"cudaLaunchKernel_v7000", "_Z3fooi", "x\"\\\n\xc3"};
  std::size_t cut = size;
  while (cut > 0 && data[cut - 1] != 0xff) --cut;
  if (cut > 0) {
    std::string tail(reinterpret_cast<const char*>(data + cut), size - cut);
    for (std::size_t a = 0; a <= tail.size();) {
      const auto b = tail.find('\0', a);
      names.push_back(tail.substr(a, b == std::string::npos ? std::string::npos : b - a));
      if (b == std::string::npos) break;
      a = b + 1;
    }
  }
  const std::size_t n = cut > 0 ? cut - 1 : size;
  std::vector<std::uint64_t> aligned((n + 7) / 8 + 1, 0);
  auto* buffer = reinterpret_cast<std::uint8_t*>(aligned.data());
  std::memcpy(buffer, data, n);
  // Valid name pointers, as CUPTI's are.
  CUpti_Activity* rec = nullptr;
  std::size_t i = 0;
  while (next_record(buffer, n, &rec) == CUPTI_SUCCESS) {
    const std::uint32_t kind = kind_of(rec);
    if (kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      reinterpret_cast<CUpti_ActivityKernel10*>(rec)->name = names[i++ % names.size()].c_str();
  }
  g_names = &names;
  // A budget of one charge block, or none at all: both edges of the cap.
  MemoryBudget budget(size % 2 ? collector::BufferDecoder::kChargeBlock : 0);
  collector::BufferDecoder decoder(
      collector::RecordDecoder(130001, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2), &next_record,
      &callback_name, static_cast<std::int64_t>(size) * 1000 - 500000, &budget);
  decoder.decode(buffer, n);
  DeviceCapture cap = std::move(decoder.capture());
  for (const auto& e : cap.events) {
    CHAKRA_FUZZ_REQUIRE(e.start_ns <= e.end_ns);
    CHAKRA_FUZZ_REQUIRE(e.name < cap.names.size());
  }
  collector::join_device_capture(cap, {{INT64_MIN / 2, INT64_MAX / 2}, {0, 1000}});
  files::StringSink sink;
  writers::KinetoTraceWriter w(sink, writers::base_time_ns(cap.events.empty() ? 0 : cap.events[0].start_ns));
  w.begin(writers::TraceHeader{});
  for (const auto& e : cap.events) {
    w.device_event(e, cap.names[e.name], 1);
    if (e.flow) w.flow(e, 1);
  }
  CHAKRA_FUZZ_REQUIRE(w.end(writers::TraceTrailer{}));
  CHAKRA_FUZZ_REQUIRE(nlohmann::json::accept(sink.text()));
  g_names = nullptr;
  return 0;
}
