// The core's logger: one line per call on stderr (never stdout), prefixed
// "[chakrashim rank R]". Each line goes out in a single write(2), so lines
// from threads and processes never interleave, no lock is held that a
// forked child could inherit, and nothing is registered in spdlog's global
// registry (which belongs to the job). Never throws, never allocates.
// Callers build the message with std::string; there is no formatting library
// in the preloaded core (see shim/CMakeLists.txt on its size).
#pragma once

#include <cstdint>
#include <string_view>

#include "config/config.h"

namespace chakrashim::log {

void set_level(config::LogLevel level);
void set_rank(std::uint64_t rank);
bool enabled(config::LogLevel level);
// Writes one line (newlines in `message` become spaces; cut at 1 KiB).
void line(config::LogLevel level, std::string_view message);

inline void error(std::string_view m) { line(config::LogLevel::error, m); }
inline void warn(std::string_view m) { line(config::LogLevel::warn, m); }
inline void info(std::string_view m) { line(config::LogLevel::info, m); }
inline void debug(std::string_view m) { line(config::LogLevel::debug, m); }

}  // namespace chakrashim::log
