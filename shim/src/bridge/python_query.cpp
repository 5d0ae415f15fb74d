#include "bridge/python_query.h"

#include <dlfcn.h>

#include "bridge/bridge_log.h"

namespace chakrashim::bridge {

namespace {

// Looked up once; a process without Python has none of them.
struct PythonApi {
  using Obj = void*;
  int (*gil_ensure)() = nullptr;                              // PyGILState_Ensure
  void (*gil_release)(int) = nullptr;                         // PyGILState_Release
  int (*is_initialized)() = nullptr;                          // Py_IsInitialized
  Obj (*dict_new)() = nullptr;                                // PyDict_New
  Obj (*run_string)(const char*, int, Obj, Obj) = nullptr;    // PyRun_String
  Obj (*dict_get)(Obj, const char*) = nullptr;                // PyDict_GetItemString
  const char* (*as_utf8)(Obj) = nullptr;                      // PyUnicode_AsUTF8
  void (*dec_ref)(Obj) = nullptr;                             // Py_DecRef
  void (*err_clear)() = nullptr;                              // PyErr_Clear
  Obj (*err_occurred)() = nullptr;                            // PyErr_Occurred

  PythonApi() {
    auto get = [](const char* name) { return ::dlsym(RTLD_DEFAULT, name); };
    gil_ensure = reinterpret_cast<int (*)()>(get("PyGILState_Ensure"));
    gil_release = reinterpret_cast<void (*)(int)>(get("PyGILState_Release"));
    is_initialized = reinterpret_cast<int (*)()>(get("Py_IsInitialized"));
    dict_new = reinterpret_cast<Obj (*)()>(get("PyDict_New"));
    run_string = reinterpret_cast<Obj (*)(const char*, int, Obj, Obj)>(get("PyRun_String"));
    dict_get = reinterpret_cast<Obj (*)(Obj, const char*)>(get("PyDict_GetItemString"));
    as_utf8 = reinterpret_cast<const char* (*)(Obj)>(get("PyUnicode_AsUTF8"));
    dec_ref = reinterpret_cast<void (*)(Obj)>(get("Py_DecRef"));
    err_clear = reinterpret_cast<void (*)()>(get("PyErr_Clear"));
    err_occurred = reinterpret_cast<Obj (*)()>(get("PyErr_Occurred"));
  }
  bool usable() const {
    return gil_ensure && gil_release && is_initialized && dict_new && run_string && dict_get && as_utf8 &&
           dec_ref && err_clear && err_occurred;
  }
};

constexpr int kPyFileInput = 257;  // Py_file_input, stable across CPython 3

// Runs without importing anything new: only a torch.distributed that the
// job already imported is asked.
constexpr const char* kQuery = R"PY(
import sys as _sys
result = ""
_d = _sys.modules.get("torch.distributed")
if _d is not None and _d.is_available() and _d.is_initialized():
    import json as _json
    _info = {"backend": str(_d.get_backend()), "rank": _d.get_rank(),
             "world_size": _d.get_world_size()}
    _c10d = _sys.modules.get("torch.distributed.distributed_c10d")
    _cfg = getattr(getattr(_c10d, "_world", None), "pg_config_info", None)
    if _cfg is not None:
        _info["pg_count"] = len(_cfg)
        _info["pg_config"] = _cfg
    result = _json.dumps(_info, default=str)
)PY";

}  // namespace

std::optional<std::string> distributed_info_json() {
  static const PythonApi api;
  if (!api.usable() || !api.is_initialized()) return std::nullopt;
  // The stepping thread is inside a torch op, which released the GIL: take
  // it back for the query, as pybind does for a callback into Python.
  const int gil = api.gil_ensure();
  void* globals = api.dict_new();
  if (!globals) {
    api.gil_release(gil);
    return std::nullopt;
  }
  std::optional<std::string> out;
  if (void* r = api.run_string(kQuery, kPyFileInput, globals, globals)) {
    api.dec_ref(r);
    void* value = api.dict_get(globals, "result");  // borrowed
    const char* text = value ? api.as_utf8(value) : nullptr;
    if (text && *text) out = std::string(text);
  }
  // Whatever went wrong stays ours: the job never sees a Python error.
  if (api.err_occurred()) {
    log_debug("the torch.distributed query raised; ignored");
    api.err_clear();
  }
  api.dec_ref(globals);
  api.gil_release(gil);
  return out;
}

}  // namespace chakrashim::bridge
