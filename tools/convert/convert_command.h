#pragma once

namespace chakrashim::tools::convert {

// `chakrashim convert ...`: argv[0] is "convert". Returns the exit status.
int run_convert_command(int argc, char** argv);

}  // namespace chakrashim::tools::convert
