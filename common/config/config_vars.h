// The one table of every CHAKRA_* variable: name, grammar, default and a
// one-line description. config.cpp parses by it, `chakrashim vars` prints it,
// and a test checks that README.md carries exactly this table.
#pragma once

#include <array>
#include <string_view>

namespace chakrashim::config {

struct VarSpec {
  std::string_view name;
  std::string_view grammar;   // what is accepted, as shown in error lines
  std::string_view fallback;  // the default, as documented
  std::string_view doc;
};

inline constexpr std::array<VarSpec, 30> kConfigVars{{
    {"CHAKRA_PROFILE", "boolean: 1/0, true/false, on/off, yes/no (any case)", "unset (inert)",
     "turns capture on; unset or false leaves the library inert"},
    {"CHAKRA_START_STEP", "decimal digits (0-based global step)", "2",
     "first global optimizer step captured"},
    {"CHAKRA_END_STEP", "decimal digits, at least CHAKRA_START_STEP", "= start",
     "last global step captured, inclusive"},
    {"CHAKRA_WARMUP_STEPS", "decimal digits, fewer than the window's length (END - START + 1)", "0",
     "steps at the start of each cycle that run collection but keep nothing"},
    {"CHAKRA_ACTIVE_STEPS", "decimal digits, at least 1", "1",
     "steps kept in each cycle; cycles repeat until the end step"},
    {"CHAKRA_REPEAT_EVERY", "decimal digits, more than the window's length (END - START + 1)",
     "none (one window)",
     "repeat the window every N steps from the start step: each window in TRACE_DIR/step-S/"},
    {"CHAKRA_REPEAT_UNTIL", "decimal digits (needs CHAKRA_REPEAT_EVERY)", "the end of the job",
     "no repeated window goes past this step"},
    {"CHAKRA_ON_DEMAND", "boolean (not with CHAKRA_START_STEP, END_STEP or REPEAT_*)", "0",
     "capture nothing until `chakrashim trigger` or CHAKRA_TRIGGER_SIGNAL asks: each window in TRACE_DIR/step-S/"},
    {"CHAKRA_TRIGGER_SIGNAL", "USR1, USR2 (SIGUSR1, SIGUSR2) or none, any case; needs CHAKRA_ON_DEMAND=1",
     "none", "a signal that captures the next CHAKRA_TRIGGER_STEPS steps (one-process jobs)"},
    {"CHAKRA_TRIGGER_STEPS", "decimal digits, 1 to 100000", "5",
     "steps that CHAKRA_TRIGGER_SIGNAL captures"},
    {"CHAKRA_TRACE_DIR", "a directory path (created if missing)", "required",
     "root of the output: JOB_chakra/ and JOB_kineto/ go below it"},
    {"CHAKRA_RANKS", "rank list: 0 or 0,3 or 4-7 or 0,4-7", "all",
     "which ranks capture"},
    {"CHAKRA_RANK", "decimal digits", "from the launcher",
     "overrides the rank found in the launcher's variables"},
    {"CHAKRA_JOB_ID", "1-128 characters of A-Z a-z 0-9 . _ + -", "SLURM_JOB_ID, else 0",
     "the JOB in JOB_chakra/ and JOB_kineto/"},
    {"CHAKRA_RUN_ID", "1-256 characters of A-Z a-z 0-9 . _ + - : , @", "set by chakra-run",
     "names the launch where srun or mpirun do not (they name it themselves): every rank of one launch must have the same; check refuses a capture mixing two"},
    {"CHAKRA_OVERWRITE", "boolean", "0",
     "replace an earlier run's files instead of writing new sibling folders"},
    {"CHAKRA_HOST_TRACE", "boolean", "1", "capture the Execution Trace"},
    {"CHAKRA_ET_RECORDER", "native or torch (any case)", "native",
     "what records the Execution Trace: chakrashim's own recorder, or torch's observer"},
    {"CHAKRA_DEVICE_TRACE", "boolean", "1", "capture the Kineto-format device trace (report, link and convert need it: 0 leaves the ET alone)"},
    {"CHAKRA_MODULE_SCOPES", "boolean", "0",
     "inside the window, name each torch.nn.Module call as a scope \"nn.Module: Net.layers.0\" (docs/report.md)"},
    {"CHAKRA_STEP_MARKER", "non-empty text", "Optimizer.step#",
     "name prefix of the record whose end ends a step"},
    {"CHAKRA_LOG_LEVEL", "error, warn, info or debug", "info on the lowest rank that captures, warn on the others",
     "how much goes to stderr; when set, every rank takes it as given (one capture line per job by default, not one per rank)"},
    {"CHAKRA_PROCESS_FILTER", "POSIX extended regex", "none (all)",
     "processes whose executable's basename does not match stay inert"},
    {"CHAKRA_GZIP", "boolean", "0",
     "write the device trace as rank-R.json.gz; the ET stays plain rank-R.json, as Chakra's tools read it"},
    {"CHAKRA_MAX_MEMORY", "byte size: digits with optional K, M or G", "1G",
     "host memory for one window's events"},
    {"CHAKRA_EXIT_TIMEOUT", "decimal digits (seconds), at most 3600", "20",
     "how long exit may wait for the writers"},
    {"CHAKRA_FLUSH_SIGNAL", "USR1, USR2 (SIGUSR1, SIGUSR2) or none, any case", "none",
     "a signal that finishes the window now and lets the job go on"},
    {"CHAKRA_CUPTI_LIB", "a file path", "search",
     "the libcupti to load instead of searching for one"},
    {"CHAKRA_CUPTI_BUFFERS", "byte size: digits with optional K, M or G, at least 128K", "64M",
     "host memory for CUPTI's activity buffers; records beyond it are dropped and counted"},
    {"CHAKRA_CUPTI_EXTRA", "none, or a comma list of sync and overhead", "none",
     "extra CUPTI activity kinds: cuda_sync events, CUPTI's own overhead"},
}};

}  // namespace chakrashim::config
