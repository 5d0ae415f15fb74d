// The core's logger: one line per call on stderr (never stdout), prefixed
// "[chakrashim rank R]". Each line goes out in a single write(2), so lines
// from threads and processes never interleave, no lock is held that a
// forked child could inherit, and nothing is registered in spdlog's global
// registry (which belongs to the job). Never throws.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

#include "config/config.h"

namespace chakrashim::log {

void set_level(config::LogLevel level);
void set_rank(std::uint64_t rank);
bool enabled(config::LogLevel level);
void line(config::LogLevel level, std::string_view message);

template <typename... Args>
void write(config::LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (!enabled(level)) return;
  try {
    line(level, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
    // A formatting or allocation failure loses this line, nothing else.
  }
}

template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... a) { write(config::LogLevel::error, f, std::forward<Args>(a)...); }
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) { write(config::LogLevel::warn, f, std::forward<Args>(a)...); }
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... a) { write(config::LogLevel::info, f, std::forward<Args>(a)...); }
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) { write(config::LogLevel::debug, f, std::forward<Args>(a)...); }

}  // namespace chakrashim::log
