// A value copy of the environment variables chakrashim reads: every CHAKRA_*
// variable plus the launchers' rank, size and job variables. It is filled
// once per process from the entries the preload stub copied at load
// (preload/preload_stub.c, the only reader of the environment) or by tests,
// and handed to the pure parsers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chakrashim::config {

class EnvSnapshot {
 public:
  EnvSnapshot() = default;
  EnvSnapshot(std::initializer_list<std::pair<std::string, std::string>> vars)
      : vars_(vars) {}

  // True for the names this snapshot keeps: "CHAKRA_*" and the launcher
  // variables of docs/design.md section 4.1.
  static bool wanted(std::string_view name);

  // Keeps the wanted ones of "NAME=value" entries (others, and entries
  // without '=', are skipped). Where a name comes twice (an environment
  // built by hand for execve can hold it twice), the first wins: glibc's
  // getenv and Python's os.environ both read the first, so the job and we
  // agree (a shell such as dash reads the last).
  static EnvSnapshot from_entries(const char* const* entries, std::size_t count);

  // Sets a value; a later set of the same name replaces the earlier one.
  void set(std::string_view name, std::string_view value);
  std::optional<std::string_view> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& all() const { return vars_; }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

}  // namespace chakrashim::config
