// Questions to the job's Python. Only ever asked from a thread of ours (the
// DistributedWatch thread), never from a thread that runs the job's Python:
// CPython runs signal handlers only on the main thread, so a job's handler
// (or an exception it raises) can never run inside our query and be lost,
// and the training thread never waits for the GIL inside an op of ours.
// Python's C API is reached through dlsym, so the bridge needs no Python
// headers or DT_NEEDED on libpython, like the core.
#pragma once

#include <optional>
#include <string>

namespace chakrashim::bridge {

// torch.distributed's state as JSON: {"backend", "rank", "world_size",
// "pg_count", "pg_config"} (pg_* when torch exposes them), or nullopt when
// torch.distributed is not initialized, Python is not there or is being
// finalized. Takes the GIL; the caller holds no lock of ours. A Python error
// raised by the query itself is ours and is cleared.
std::optional<std::string> distributed_info_json();

// Does the calling thread hold the GIL (PyGILState_Check)? False without
// Python.
bool this_thread_holds_gil();

}  // namespace chakrashim::bridge
