#include "cupti_library.h"

#include <dlfcn.h>
#include <link.h>

#include "record_decoder.h"

namespace chakrashim::collector {

namespace {

template <typename F>
bool bind(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(handle, name));
  return out != nullptr;
}

// The file a handle came from, for the log line.
std::string handle_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return fallback;
}

}  // namespace

std::unique_ptr<CuptiLibrary> CuptiLibrary::open(const LocateInput& where, std::string& error) {
  std::string last_error = "no libcupti found";
  for (const auto& c : cupti_candidates(where)) {
    // RTLD_LOCAL: our copy must not interpose anyone's symbols. We are on
    // the stepping thread at arm, never inside another dlopen.
    void* h = ::dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL | (c.noload ? RTLD_NOLOAD : 0));
    if (!h) {
      if (!c.noload && (c.path.find('/') != std::string::npos || where.override_path)) {
        if (const char* e = ::dlerror()) last_error = e;
      }
      continue;
    }
    std::unique_ptr<CuptiLibrary> lib(new CuptiLibrary());
    lib->handle_ = h;
    lib->path_ = handle_path(h, c.path);
    CuptiApi& a = lib->api_;
    const bool ok =
        bind(h, "cuptiGetVersion", a.GetVersion) &&
        bind(h, "cuptiGetResultString", a.GetResultString) &&
        bind(h, "cuptiGetTimestamp", a.GetTimestamp) &&
        bind(h, "cuptiGetCallbackName", a.GetCallbackName) &&
        bind(h, "cuptiActivityRegisterCallbacks", a.ActivityRegisterCallbacks) &&
        bind(h, "cuptiActivityEnable", a.ActivityEnable) &&
        bind(h, "cuptiActivityDisable", a.ActivityDisable) &&
        bind(h, "cuptiActivityFlushAll", a.ActivityFlushAll) &&
        bind(h, "cuptiActivityGetNextRecord", a.ActivityGetNextRecord) &&
        bind(h, "cuptiActivityGetNumDroppedRecords", a.ActivityGetNumDroppedRecords) &&
        bind(h, "cuptiActivityPushExternalCorrelationId", a.ActivityPushExternalCorrelationId) &&
        bind(h, "cuptiActivityPopExternalCorrelationId", a.ActivityPopExternalCorrelationId);
    bind(h, "cuptiActivityEnableDriverApi", a.ActivityEnableDriverApi);  // CUDA >= 12.x
    if (!ok) {
      last_error = lib->path_ + " lacks a CUPTI entry point";
      ::dlclose(h);
      if (where.override_path) break;
      continue;
    }
    if (a.GetVersion(&lib->version_) != CUPTI_SUCCESS ||
        !RecordDecoder::supported(lib->version_)) {
      last_error = lib->path_ + " is CUPTI API version " + std::to_string(lib->version_) +
                   "; chakrashim decodes CUDA 12.0 (18) and later";
      ::dlclose(h);
      if (where.override_path) break;
      continue;
    }
    return lib;
  }
  error = last_error;
  return nullptr;
}

CuptiLibrary::~CuptiLibrary() {
  // Never dlclose: torch's copy is shared, and CUPTI keeps threads and
  // callbacks that may outlive us.
}

std::string CuptiLibrary::result_string(CUptiResult r) const {
  const char* s = nullptr;
  if (api_.GetResultString && api_.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

}  // namespace chakrashim::collector
