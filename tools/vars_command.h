// `chakrashim vars`: every CHAKRA_* variable the preloaded library reads,
// from config_vars.h (README.md's table is its --markdown output).
#pragma once

namespace chakrashim::tools::vars_command {

// argv[0] is "vars"; returns the exit status (0 or 2).
int run_vars_command(int argc, char** argv);

}  // namespace chakrashim::tools::vars_command
