#include "preload/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace chakrashim::log {

namespace {
// Process-wide by nature: the level and rank are set once from the
// configuration and read by every thread that logs. Atomics, so a late
// reader never sees a torn value.
std::atomic<int> g_level{static_cast<int>(config::LogLevel::info)};
std::atomic<std::int64_t> g_rank{-1};  // -1: not known yet

const char* level_word(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::error: return "error: ";
    case config::LogLevel::warn: return "warning: ";
    case config::LogLevel::info: return "";
    case config::LogLevel::debug: return "debug: ";
  }
  return "";
}
}  // namespace

void set_level(config::LogLevel level) { g_level.store(static_cast<int>(level)); }
void set_rank(std::uint64_t rank) { g_rank.store(static_cast<std::int64_t>(rank)); }

bool enabled(config::LogLevel level) { return static_cast<int>(level) <= g_level.load(); }

void line(config::LogLevel level, std::string_view message) {
  if (!enabled(level)) return;
  char buf[1024];
  const std::int64_t rank = g_rank.load();
  int n = rank >= 0 ? std::snprintf(buf, sizeof buf, "[chakrashim rank %lld] %s",
                                    static_cast<long long>(rank), level_word(level))
                    : std::snprintf(buf, sizeof buf, "[chakrashim] %s", level_word(level));
  if (n < 0) return;
  std::size_t len = static_cast<std::size_t>(n);
  // One line, always, and nothing the terminal would act on: a name found
  // in a shared folder (a trigger file's) may hold escape sequences, shown
  // here as \xNN.
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    const bool control = u < 0x20 || u == 0x7f;
    const bool blank = c == '\n' || c == '\r' || c == '\t';
    const std::size_t need = control && !blank ? 4 : 1;
    if (len + need > sizeof buf - 1) break;
    if (!control) {
      buf[len++] = c;
    } else if (blank) {
      buf[len++] = ' ';
    } else {
      buf[len++] = '\\';
      buf[len++] = 'x';
      buf[len++] = kHex[u >> 4];
      buf[len++] = kHex[u & 0xf];
    }
  }
  buf[len++] = '\n';
  const int saved = errno;  // logging must not disturb the job's errno
  const char* p = buf;
  while (len > 0) {
    const ssize_t w = ::write(STDERR_FILENO, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    p += w;
    len -= static_cast<std::size_t>(w);
  }
  errno = saved;
}

}  // namespace chakrashim::log
