#include "target/target_decision.h"

#include <regex.h>

namespace chakrashim::target {

namespace {

bool matches(const std::string& pattern, const std::string& text) {
  regex_t re;
  // config.cpp compiled this pattern already; a failure here means no match.
  if (regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;
  const bool hit = regexec(&re, text.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return hit;
}

}  // namespace

TargetDecision decide_target(const config::Config& config, const Identity& identity,
                             const ProcessInfo& process) {
  if (config.ranks && !config.ranks->contains(identity.rank)) {
    return {false, "rank " + std::to_string(identity.rank) + " is not in CHAKRA_RANKS=" +
                       config.ranks_text.value_or("")};
  }
  if (config.process_filter && !matches(*config.process_filter, process.exe_basename)) {
    return {false, "executable '" + process.exe_basename +
                       "' does not match CHAKRA_PROCESS_FILTER=" + *config.process_filter};
  }
  return {true, {}};
}

}  // namespace chakrashim::target
