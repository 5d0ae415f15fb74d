#pragma once

namespace chakrashim::tools::link {

// `chakrashim link ...`; argv[0] is "link". Returns the exit status.
int run_link_command(int argc, char** argv);

}  // namespace chakrashim::tools::link
