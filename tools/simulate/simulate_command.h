// `chakrashim simulate DIR`: a capture (or convert's .et files) through
// ASTRA-sim, each rank's simulated time beside the window it captured.
#pragma once

namespace chakrashim::tools::simulate {

int run_simulate_command(int argc, char** argv);

}  // namespace chakrashim::tools::simulate
