// Running ASTRA-sim's analytical backend for `chakrashim simulate`: where
// its binary is, the configuration files it needs besides the workload, and
// one run in a folder of its own, bounded in time, its output kept in a file
// there. The OS side only; what the output means is sim_compare.h's.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace chakrashim::tools::simulate {

// The names ASTRA-sim's analytical build gives its binary, looked up on PATH
// in this order.
inline constexpr const char* kAstraSimNames[] = {"AstraSim_Analytical_Congestion_Unaware",
                                                  "AstraSim_Analytical_Congestion_Aware"};

// `given` (--astra-sim), else $ASTRA_SIM_BIN, else the first of
// kAstraSimNames on PATH; an executable regular file. Empty with `why` (one
// line naming what was tried) when none is.
std::string find_astra_sim(const std::string& given, std::string& why);

// ASTRA-sim's examples/system/native_collectives/Ring_4chunks.json (astra-sim
// 518bd51), the system configuration network_fit.h's model was checked with.
std::string ring_system_json();
std::string remote_memory_json();
// A ring of `npus` at 50 GB/s and 500 ns: docs/simulate.md's default.
std::string ring_network_yml(std::uint64_t npus);

struct AstraRun {
  bool started = false;
  std::string error;     // why it did not start, or could not be waited for
  std::string output;    // stdout and stderr together, as written
  int exit_status = -1;  // -1: killed by a signal or not started
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
};

// Runs `argv` in `folder` (its stdout and stderr to folder/astra-sim.log,
// stdin from /dev/null), killing it past `timeout`. Never throws.
AstraRun run_in_folder(const std::vector<std::string>& argv, const std::string& folder,
                       std::chrono::seconds timeout);

// A new private folder (mode 0700) for one run: under $TMPDIR or /tmp.
// Empty with `error` when it cannot be made.
std::string make_run_folder(std::string& error);

}  // namespace chakrashim::tools::simulate
