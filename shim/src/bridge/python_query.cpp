#include "bridge/python_query.h"

#include "bridge/bridge_log.h"
#include "bridge/python_api.h"

namespace chakrashim::bridge {

namespace {

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

bool this_thread_holds_gil() {
  const PythonApi& api = python();
  return api.gil_check && api.is_initialized && api.is_initialized() && api.gil_check() != 0;
}

std::optional<std::string> distributed_info_json() {
  const PythonApi& api = python();
  if (!api.usable() || !api.is_initialized()) return std::nullopt;
  // A thread that asks for the GIL while Python finalizes is ended or
  // parked by CPython: never ask then.
  if (api.is_finalizing && api.is_finalizing()) return std::nullopt;
  const int gil = api.gil_ensure();
  // Compiled once (compiling took most of the query's time, with the GIL
  // held); kept for the life of the process. Only this thread uses it.
  static void* code = api.compile(kQuery, "<chakrashim distributed query>", PythonApi::kFileInput);
  void* globals = code ? api.dict_new() : nullptr;
  std::optional<std::string> out;
  if (globals) {
    if (void* r = api.eval_code(code, globals, globals)) {
      api.dec_ref(r);
      void* value = api.dict_get(globals, "result");  // borrowed
      const char* text = value ? api.as_utf8(value) : nullptr;
      if (text && *text) out = std::string(text);
    }
    api.dec_ref(globals);
  }
  // On our own thread, an error can only be the query's own: clear it.
  if (api.err_occurred()) {
    log_debug("the torch.distributed query raised; ignored");
    api.err_clear();
  }
  api.gil_release(gil);
  return out;
}

}  // namespace chakrashim::bridge
