// `chakrashim report`: arguments and output only; the work is in
// report_runner.h and the renderers.
#pragma once

namespace chakrashim::tools::report {

// argv[0] is "report". Returns the exit status.
int run_report_command(int argc, char** argv);

}  // namespace chakrashim::tools::report
