// The `chakrashim` command. Subcommands print their own --help; exit codes
// are 0 (clean), 1 (findings) and 2 (usage errors).
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "check/check_command.h"
#ifdef CHAKRASHIM_WITH_CONVERT
#include "convert/convert_command.h"
#include "simulate/simulate_command.h"
#endif
#include "link/link_command.h"
#include "config_command.h"
#include "report/report_command.h"
#include "trigger/trigger_command.h"
#include "vars_command.h"
#include "common/usage.h"
#include "config/nearest_name.h"

namespace {

namespace tools = chakrashim::tools;

// A subcommand's entry: argv[0] is its name; returns the exit status.
using Entry = int (*)(int argc, char** argv);

struct Subcommand {
  std::string_view name;
  std::string_view synopsis;  // its arguments in the usage text
  std::string_view summary;   // one line
  Entry run;                  // nullptr: not in this build, for the reason `absent`
  std::string_view absent = {};
};

// Every subcommand, in the order the usage text lists them. The usage text,
// the dispatch and "did you mean" all read this table.
const Subcommand kSubcommands[] = {
    {"check", "DIR|FILE...", "check a capture against what Chakra and HTA need (docs/check.md)",
     tools::check::run_check_command},
    {"link", "DIR", "merge each rank's ET and device trace into Chakra's ET+ (docs/link.md)",
     tools::link::run_link_command},
    {"convert", "DIR|ET+", "write Chakra's protobuf ET, PREFIX.R.et, for ASTRA-sim (docs/convert.md)",
#ifdef CHAKRASHIM_WITH_CONVERT
     tools::convert::run_convert_command},
#else
     nullptr,
     "this build has no protobuf (install libprotobuf-dev and protobuf-compiler, as scripts/setup.sh does, and "
     "rebuild)"},
#endif
    {"simulate", "DIR", "run a capture in ASTRA-sim; per rank, simulated time against the captured window (docs/simulate.md)",
#ifdef CHAKRASHIM_WITH_CONVERT
     tools::simulate::run_simulate_command},
#else
     nullptr,
     "this build has no protobuf, so no convert to simulate from (install libprotobuf-dev and protobuf-compiler, as "
     "scripts/setup.sh does, and rebuild)"},
#endif
    {"report", "DIR|FILE...", "step times, top ops, GPU busy and overlap, rank skew (docs/report.md)",
     tools::report::run_report_command},
    {"trigger", "TRACE_DIR", "ask a running CHAKRA_ON_DEMAND=1 job to capture steps now (docs/on-demand.md)",
     tools::trigger::run_trigger_command},
    {"vars", "[--markdown]", "list every CHAKRA_* variable with its grammar and default",
     tools::vars_command::run_vars_command},
    {"config", "[--print]", "validate this environment's CHAKRA_* variables as the library will",
     tools::config_command::run_config_command},
};

void print_usage() {
  std::fputs("usage: chakrashim <command> [options]\n"
             "\n"
             "Chakra traces from unmodified PyTorch jobs. Capture with\n"
             "  CHAKRA_PROFILE=1 CHAKRA_TRACE_DIR=DIR LD_PRELOAD=<prefix>/lib/libchakrashim.so python train.py\n"
             "\n"
             "commands:\n",
             stdout);
  for (const Subcommand& c : kSubcommands) {
    const std::string left = std::string(c.name) + " " + std::string(c.synopsis);
    std::printf("  %-20s%.*s\n", left.c_str(), static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::fputs("\n"
             "options:\n"
             "  -h, --help          this text\n"
             "  --version           the version\n",
             stdout);
}

std::vector<std::string_view> names() {
  std::vector<std::string_view> out;
  for (const Subcommand& c : kSubcommands) out.push_back(c.name);
  return out;
}

// "check, link, ... or config"
std::string name_list() {
  const auto all = names();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + std::string(all[i]);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return tools::usage_error("", "give a command: " + name_list());
  const std::string_view command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    print_usage();
    return 0;
  }
  if (command == "--version") {
    std::printf("chakrashim %s\n", CHAKRASHIM_VERSION);
    return 0;
  }
  for (const Subcommand& c : kSubcommands) {
    if (c.name != command) continue;
    if (c.run) return c.run(argc - 1, argv + 1);
    std::fprintf(stderr, "chakrashim %.*s: %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.absent.size()), c.absent.data());
    return 2;
  }
  std::string why = "unknown command '" + std::string(command) + "'";
  if (const auto best = chakrashim::config::nearest_name(command, names()))
    why += " (did you mean " + std::string(*best) + "?)";
  return tools::usage_error("", why);
}
