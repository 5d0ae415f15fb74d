// Is this process a capture target? Pure: Config, Identity and ProcessInfo
// in, a decision with its reason out (docs/design.md sections 3 and 4.0).
#pragma once

#include <string>

#include "config/config.h"
#include "config/identity.h"

namespace chakrashim::target {

struct ProcessInfo {
  std::string exe_basename;  // e.g. "python3.11"
};

struct TargetDecision {
  bool target = false;
  std::string reason;  // why not, for a debug line; empty when a target
};

//   ranks "0-3", rank 5 -> not a target: "rank 5 is not in CHAKRA_RANKS=0-3"
//   filter "^python", exe "bash" -> not a target
TargetDecision decide_target(const config::Config& config, const Identity& identity,
                             const ProcessInfo& process);

}  // namespace chakrashim::target
