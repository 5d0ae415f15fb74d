// `chakrashim check DIR|FILES...`: arguments and output only; the work is in
// check_runner.h.
#pragma once

namespace chakrashim::tools::check {

// argv[0] is "check"; returns the exit status (0, 1 or 2).
int run_check_command(int argc, char** argv);

}  // namespace chakrashim::tools::check
