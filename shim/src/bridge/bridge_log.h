// Logging from the bridge goes through the core's C interface, so that every
// line has the core's prefix and single-write behaviour, and so that no fmt
// or spdlog of ours meets the copy torch bundles.
#pragma once

#include <string>

#include "chakrashim/bridge_abi.h"

namespace chakrashim::bridge {

// Set once at attach, before any callback can run.
void set_core_api(const chakrashim_core_api* core);
void log(int level, const std::string& line);
inline void log_error(const std::string& l) { log(CHAKRASHIM_LOG_ERROR, l); }
inline void log_warn(const std::string& l) { log(CHAKRASHIM_LOG_WARN, l); }
inline void log_info(const std::string& l) { log(CHAKRASHIM_LOG_INFO, l); }
inline void log_debug(const std::string& l) { log(CHAKRASHIM_LOG_DEBUG, l); }

}  // namespace chakrashim::bridge
