// Questions to the job's Python, asked from the stepping thread between
// Python-driven ops. It takes the GIL (the op it runs in released it), so the
// caller must hold none of our locks that a Python thread could wait on, and
// must not call it at exit (Python is finalized) or from a signal watcher.
// Python's C API is reached through dlsym, so the bridge needs no Python
// headers or DT_NEEDED on libpython, like the core.
#pragma once

#include <optional>
#include <string>

namespace chakrashim::bridge {

// torch.distributed's state as JSON: {"backend", "rank", "world_size",
// "pg_count", "pg_config"} (pg_* when torch exposes them), or nullopt when
// torch.distributed is not initialized or Python is not there. Never raises into the job: a Python error is
// cleared and gives nullopt.
std::optional<std::string> distributed_info_json();

}  // namespace chakrashim::bridge
