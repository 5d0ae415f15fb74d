// Helpers shared by the libFuzzer targets. A property that fails is a bug
// like a crash, so it traps: libFuzzer then saves the input as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

namespace chakrashim::fuzz {

#define CHAKRA_FUZZ_REQUIRE(cond)                                           \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", #cond,     \
                   __FILE__, __LINE__);                                     \
      __builtin_trap();                                                     \
    }                                                                       \
  } while (0)

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A folder of this process for targets whose code under test opens paths
// (it reads files by name, as the command does). Removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "chakra-fuzz-XXXXXX").string();
    const char* made = ::mkdtemp(tmpl.data());
    if (!made) __builtin_trap();
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(scratch_dir(), ec); });
    return std::filesystem::path(made);
  }();
  return dir;
}

inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
  return path;
}

// Splits "A<sep>B" at the first separator line; B is empty without one. The
// two-file targets (an ET and a device trace) read their inputs this way, so
// the seeds stay readable JSON.
inline std::pair<std::string_view, std::string_view> split_pair(std::string_view text) {
  constexpr std::string_view kSep = "\n====\n";
  const auto at = text.find(kSep);
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + kSep.size())};
}

}  // namespace chakrashim::fuzz
