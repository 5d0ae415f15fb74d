#include "bridge/bridge_log.h"

#include <atomic>

namespace chakrashim::bridge {

namespace {
// The core's table outlives the bridge (the core never unloads); an atomic
// because callbacks on any thread may log.
std::atomic<const chakrashim_core_api*> g_core{nullptr};
}  // namespace

void set_core_api(const chakrashim_core_api* core) { g_core.store(core); }

void log(int level, const std::string& line) {
  const chakrashim_core_api* core = g_core.load();
  if (core && core->log) core->log(level, line.c_str());
}

}  // namespace chakrashim::bridge
