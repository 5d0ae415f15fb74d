// EnvSnapshot -> Config, or one-line errors naming the variable, the value
// and what is accepted (docs/design.md section 3). Pure: no I/O, no globals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/env_snapshot.h"
#include "config/value_grammar.h"

namespace chakrashim::config {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

struct Config {
  std::uint64_t start_step = 2;
  std::uint64_t end_step = 2;
  std::uint64_t warmup_steps = 0;
  std::uint64_t active_steps = 1;
  // CHAKRA_REPEAT_EVERY (0: one window) and CHAKRA_REPEAT_UNTIL.
  std::uint64_t repeat_every = 0;
  std::optional<std::uint64_t> repeat_until;
  // CHAKRA_ON_DEMAND: windows only when triggered (docs/on-demand.md).
  bool on_demand = false;
  int trigger_signal = 0;  // 0 = none, else SIGUSR1 or SIGUSR2
  std::uint64_t trigger_steps = 5;
  std::string trace_dir;
  std::optional<RankSet> ranks;
  std::optional<std::string> ranks_text;  // as given, for the trace metadata
  std::optional<std::uint64_t> rank_override;
  std::optional<std::string> job_id_override;
  std::optional<std::string> run_id_override;  // CHAKRA_RUN_ID
  bool overwrite = false;
  bool host_trace = true;
  // CHAKRA_ET_RECORDER: chakrashim's own ET recorder (the default) or
  // torch's ExecutionTraceObserver (docs/et-recorder.md).
  bool et_native = true;
  bool device_trace = true;
  // CHAKRA_MODULE_SCOPES: torch.nn.Module calls as record_function scopes
  // inside the window (shim/src/bridge/module_scopes.h).
  bool module_scopes = false;
  std::string step_marker = "Optimizer.step#";
  LogLevel log_level = LogLevel::info;
  std::optional<std::string> process_filter;
  bool gzip = false;
  std::uint64_t max_memory = 1ULL << 30;
  std::uint64_t exit_timeout_s = 20;
  int flush_signal = 0;  // 0 = none, else SIGUSR1 or SIGUSR2
  std::optional<std::string> cupti_lib;
  std::uint64_t cupti_buffers = 64ULL << 20;
  bool cupti_sync = false;
  bool cupti_overhead = false;
  // Not ours, read from the same snapshot: CUDA_HOME (else CUDA_PATH), where
  // libcupti is looked for; and whether torch's
  // ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_{RANGE,DATA} is set
  // (then torch's observer records the ET: it reads tensors' contents).
  std::optional<std::string> cuda_home;
  bool et_integral_tensors = false;
};

struct ParseResult {
  // False when CHAKRA_PROFILE is unset or false: the library stays inert and
  // says nothing, whatever the other variables hold.
  bool enabled = false;
  // Set when enabled and every variable is valid.
  std::optional<Config> config;
  // One line per bad variable; non-empty means inert.
  std::vector<std::string> errors;
  // Lines worth printing that do not stop capture (unknown CHAKRA_ names).
  std::vector<std::string> warnings;
};

ParseResult parse_config(const EnvSnapshot& env);

// Set (to 1) by chakra-run once it has printed the configuration's warnings
// at launch: the preloaded library then keeps them to itself, so that a
// torchrun job shows each warning once, not once per process.
inline constexpr std::string_view kConfigShownVar = "CHAKRASHIM_CONFIG_SHOWN";

}  // namespace chakrashim::config
