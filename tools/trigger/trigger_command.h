// `chakrashim trigger TRACE_DIR`: arguments and output only; the job's
// control folder is read by control_folder.h, the window chosen by
// trigger_plan.h, the trigger written by trigger_file.h and waited for by
// window_wait.h.
#pragma once

namespace chakrashim::tools::trigger {

// argv[0] is "trigger"; returns the exit status (0, 1 or 2).
int run_trigger_command(int argc, char** argv);

}  // namespace chakrashim::tools::trigger
