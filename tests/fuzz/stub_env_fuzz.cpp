// The preload stub's environment copy (preload_stub.c, through
// stub_env_probe.c) on any environment: fuzz bytes, one "NAME=value" entry
// per line (a NUL ends a line too, as it ends a C string), become environ.
// What must hold, since the core reads nothing but this copy:
//   - the copy is exactly the entries whose name starts with "CHAKRA" or is
//     a launcher variable, in environ's order, byte for byte, in memory of
//     the stub's own (the fixed arena, or one heap block when too large);
//   - the configuration the core builds from the copy is the one it would
//     build from the whole environment (EnvSnapshot::from_entries);
//   - the CHAKRA_PROFILE test finds it exactly where an entry sets it.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "config/env_snapshot.h"
#include "config/launcher_vars.h"
#include "fuzz_support.h"
#include "stub_env_probe.h"

using chakrashim::config::EnvSnapshot;

namespace {

bool stub_keeps(std::string_view entry) {
  const auto eq = entry.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  const std::string_view name = entry.substr(0, eq);
  if (name.substr(0, 6) == "CHAKRA") return true;
  for (const char* v : chakrashim_launcher_vars)
    if (name == v) return true;
  return false;
}

bool inside(const char* p, const char* base, std::size_t size) {
  return p >= base && p < base + size;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = chakrashim::fuzz::as_text(data, size);
  std::vector<std::string> entries;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n' || text[i] == '\0') {
      if (i > from || i < text.size()) entries.emplace_back(text.substr(from, i - from));
      from = i + 1;
    }
  }
  std::vector<char*> env;
  for (auto& e : entries) env.push_back(e.data());
  env.push_back(nullptr);

  chakra_fuzz_stub_copy_result r{};
  if (!chakra_fuzz_stub_copy(env.data(), &r)) return 0;  // out of memory: inert, nothing to judge

  std::vector<const char*> expected;
  bool profile = false;
  for (const auto& e : entries) {
    if (stub_keeps(e)) expected.push_back(e.c_str());
    if (e.rfind("CHAKRA_PROFILE=", 0) == 0) profile = true;
  }
  CHAKRA_FUZZ_REQUIRE(r.profile_present == (profile ? 1 : 0));
  CHAKRA_FUZZ_REQUIRE(r.count == expected.size());
  const bool fits = r.heap_block == nullptr;
  for (std::size_t i = 0; i < r.count; ++i) {
    CHAKRA_FUZZ_REQUIRE(std::strcmp(r.vars[i], expected[i]) == 0);
    CHAKRA_FUZZ_REQUIRE(r.vars[i] != expected[i]);  // a copy, not the job's memory
    // The whole entry, its NUL too, inside the arena (a spill would land in
    // the stub's next field, where ASan does not look).
    if (fits) {
      CHAKRA_FUZZ_REQUIRE(inside(r.vars[i], r.arena, r.arena_size));
      CHAKRA_FUZZ_REQUIRE(inside(r.vars[i] + std::strlen(r.vars[i]), r.arena, r.arena_size));
    }
  }
  if (fits) CHAKRA_FUZZ_REQUIRE(r.count <= r.fixed_slots);

  // The core's view: what it keeps from the copy is what it would keep from
  // the whole environment.
  const EnvSnapshot from_copy = EnvSnapshot::from_entries(r.vars, r.count);
  const EnvSnapshot from_all = EnvSnapshot::from_entries(env.data(), entries.size());
  CHAKRA_FUZZ_REQUIRE(from_copy.all() == from_all.all());

  std::free(r.heap_block);
  return 0;
}
