// The whole configuration path of the preload on any environment: fuzz
// bytes -> EnvSnapshot (one NAME=VALUE per line, as environ holds them) ->
// parse_config -> resolve_identity -> decide_target. What must hold: a
// disabled or invalid environment yields no Config; a Config obeys the
// documented bounds.
#include <cstdint>
#include <string>

#include "config/config.h"
#include "config/env_snapshot.h"
#include "fuzz_support.h"
#include "config/identity.h"
#include "target/target_decision.h"

using namespace chakrashim;
using chakrashim::fuzz::as_text;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = as_text(data, size);
  config::EnvSnapshot env;
  std::string exe = "python3";
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      exe = std::string(line);  // a line without '=' names the executable
      continue;
    }
    const std::string_view name = line.substr(0, eq);
    if (config::EnvSnapshot::wanted(name)) env.set(name, line.substr(eq + 1));
  }

  const config::ParseResult parsed = config::parse_config(env);
  if (!parsed.enabled || !parsed.errors.empty()) {
    CHAKRA_FUZZ_REQUIRE(!parsed.config.has_value());
    return 0;
  }
  CHAKRA_FUZZ_REQUIRE(parsed.config.has_value());
  const config::Config& c = *parsed.config;
  CHAKRA_FUZZ_REQUIRE(c.start_step <= c.end_step);
  CHAKRA_FUZZ_REQUIRE(c.active_steps >= 1);
  CHAKRA_FUZZ_REQUIRE(!c.trace_dir.empty());
  CHAKRA_FUZZ_REQUIRE(c.exit_timeout_s <= 3600);

  const target::Identity id = target::resolve_identity(env, c);
  CHAKRA_FUZZ_REQUIRE(!id.job_id.empty());
  const target::TargetDecision d = target::decide_target(c, id, target::ProcessInfo{exe});
  CHAKRA_FUZZ_REQUIRE(d.target == d.reason.empty());
  if (c.ranks && d.target) CHAKRA_FUZZ_REQUIRE(c.ranks->contains(id.rank));
  return 0;
}
