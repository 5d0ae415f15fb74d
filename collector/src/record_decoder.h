// CUPTI activity records -> DeviceEvent (chakrashim/events.h). Pure: no
// CUPTI call, no allocation but the caller's, so it is unit-tested on
// buffers the tests build and walk with the real cuptiActivityGetNextRecord.
//
// Record layouts follow the loaded CUPTI: a kernel record is
// CUpti_ActivityKernel10 from CUDA 13 (CUPTI API version >= 130000) and
// CUpti_ActivityKernel9 from CUDA 12 (API versions 18..12xxxx). Every other
// kind we read keeps the fields we use at the same offsets in both, which
// record_decoder.cpp proves at compile time. CUPTI itself sizes the records
// when it walks a buffer.
#pragma once

#include <cstdint>
#include <string_view>

#include "chakrashim/events.h"



namespace chakrashim::collector {

// The CUPTI API versions we decode: CUDA 12.0 (18) and later.
inline constexpr std::uint32_t kMinCuptiApiVersion = 18;
inline constexpr std::uint32_t kCuda13CuptiApiVersion = 130000;

enum class DecodeOutcome : std::uint8_t {
  event,        // `out` holds an event
  correlation,  // `corr_*` hold an external-correlation record
  invalid,      // a zero or inverted timestamp: dropped, to be counted
  skipped,      // a kind (or external kind) we do not keep
};

struct Decoded {
  DecodeOutcome outcome = DecodeOutcome::skipped;
  DeviceEvent event;
  // EXTERNAL_CORRELATION: CUPTI correlation id -> our external id.
  std::uint32_t corr_correlation = 0;
  std::uint64_t corr_external = 0;
  // kernel: CUPTI's name pointer (valid while the buffer is), to intern.
  const char* kernel_name = nullptr;
};

class RecordDecoder {
 public:
  // `api_version`: cuptiGetVersion of the loaded library. `external_kind`:
  // the CUpti_ExternalCorrelationKind we push (other kinds are skipped).
  RecordDecoder(std::uint32_t api_version, std::uint32_t external_kind)
      : cuda13_(api_version >= kCuda13CuptiApiVersion), external_kind_(external_kind) {}

  static bool supported(std::uint32_t api_version) { return api_version >= kMinCuptiApiVersion; }

  // `record`: a CUpti_Activity* from cuptiActivityGetNextRecord (void here:
  // CUPTI declares it as an anonymous struct, which cannot be forward
  // declared).
  Decoded decode(const void* record) const;

 private:
  bool cuda13_;
  std::uint32_t external_kind_;
};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names
// carry version suffixes that Chakra's launch list does not (docs/trace-format.md).
std::string_view strip_version_suffix(std::string_view name);

}  // namespace chakrashim::collector
