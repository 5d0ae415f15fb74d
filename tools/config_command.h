// `chakrashim config`: the configuration the preloaded library would take
// from this environment, parsed by the very same code. scripts/chakra-run
// uses it to validate its options before launching anything.
#pragma once

namespace chakrashim::tools::config_command {

// argv[0] is "config". Exit codes: 0 valid, 2 invalid (one line per bad
// variable on stderr) or a usage error.
int run_config_command(int argc, char** argv);

}  // namespace chakrashim::tools::config_command
