// libcupti, dlopen'ed at run time (never linked: a job without CUDA must
// not need it, and we reuse torch's copy when it is loaded). A table of the
// entry points the collector calls; nothing here calls cuptiSubscribe,
// which would blind a later torch.profiler (docs/design.md section 4.5).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cupti_activity.h>

#include "cupti_locate.h"

namespace chakrashim::collector {

struct CuptiApi {
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;  // optional
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
};

class CuptiLibrary {
 public:
  // Tries the candidates in order; nullptr with the reason in `error` (one
  // line) when none loads or one lacks an entry point.
  static std::unique_ptr<CuptiLibrary> open(const LocateInput& where, std::string& error);
  ~CuptiLibrary();
  CuptiLibrary(const CuptiLibrary&) = delete;
  CuptiLibrary& operator=(const CuptiLibrary&) = delete;

  const CuptiApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  std::string result_string(CUptiResult r) const;

 private:
  CuptiLibrary() = default;
  void* handle_ = nullptr;
  CuptiApi api_;
  std::string path_;
  std::uint32_t version_ = 0;
};

}  // namespace chakrashim::collector
