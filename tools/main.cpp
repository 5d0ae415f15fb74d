// The `chakrashim` command. Subcommands print their own --help; exit codes
// are 0 (clean), 1 (findings) and 2 (usage errors).
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "check/check_command.h"
#ifdef CHAKRASHIM_WITH_CONVERT
#include "convert/convert_command.h"
#endif
#include "link/link_command.h"
#include "config_command.h"
#include "report/report_command.h"
#include "trigger/trigger_command.h"
#include "common/usage.h"
#include "config/config_vars.h"
#include "config/nearest_name.h"

namespace {

constexpr const char* kUsage =
    "usage: chakrashim <command> [options]\n"
    "\n"
    "Chakra traces from unmodified PyTorch jobs. Capture with\n"
    "  CHAKRA_PROFILE=1 CHAKRA_TRACE_DIR=DIR LD_PRELOAD=<prefix>/lib/libchakrashim.so python train.py\n"
    "\n"
    "commands:\n"
    "  check DIR|FILE...   check a capture against what Chakra and HTA need (docs/check.md)\n"
    "  link DIR            merge each rank's ET and device trace into Chakra's ET+ (docs/link.md)\n"
    "  convert DIR|ET+     write Chakra's protobuf ET, PREFIX.R.et, for ASTRA-sim (docs/convert.md)\n"
    "  report DIR|FILE...  step times, top ops, GPU busy and overlap, rank skew (docs/report.md)\n"
    "  trigger TRACE_DIR   ask a running CHAKRA_ON_DEMAND=1 job to capture steps now (docs/trigger.md)\n"
    "  vars [--markdown]   list every CHAKRA_* variable with its grammar and default\n"
    "  config [--print]    validate this environment's CHAKRA_* variables as the library will\n"
    "\n"
    "options:\n"
    "  -h, --help          this text\n"
    "  --version           the version\n";

constexpr const char* kVarsUsage =
    "usage: chakrashim vars [--markdown]\n"
    "\n"
    "Lists every CHAKRA_* variable the preloaded library reads: its grammar,\n"
    "default and meaning. --markdown prints the table README.md carries.\n";

void print_markdown() {
  std::printf("| variable | accepted values | default | meaning |\n");
  std::printf("|---|---|---|---|\n");
  for (const auto& v : chakrashim::config::kConfigVars) {
    std::printf("| `%.*s` | %.*s | %.*s | %.*s |\n", static_cast<int>(v.name.size()),
                v.name.data(), static_cast<int>(v.grammar.size()), v.grammar.data(),
                static_cast<int>(v.fallback.size()), v.fallback.data(),
                static_cast<int>(v.doc.size()), v.doc.data());
  }
}

void print_plain() {
  for (const auto& v : chakrashim::config::kConfigVars) {
    std::printf("%.*s\n    %.*s\n    accepted: %.*s\n    default: %.*s\n",
                static_cast<int>(v.name.size()), v.name.data(), static_cast<int>(v.doc.size()),
                v.doc.data(), static_cast<int>(v.grammar.size()), v.grammar.data(),
                static_cast<int>(v.fallback.size()), v.fallback.data());
  }
}

int run_vars(int argc, char** argv) {
  bool markdown = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kVarsUsage, stdout);
      return 0;
    }
    if (arg == "--markdown") {
      markdown = true;
      continue;
    }
    return chakrashim::tools::usage_error("vars", chakrashim::tools::unknown_option(arg, {"--markdown", "--help"}));
  }
  markdown ? print_markdown() : print_plain();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return chakrashim::tools::usage_error("", "give a command: check, link, report, trigger, vars or config");
  const std::string_view command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("chakrashim %s\n", CHAKRASHIM_VERSION);
    return 0;
  }
  if (command == "vars") return run_vars(argc, argv);
  if (command == "config") return chakrashim::tools::config_command::run_config_command(argc - 1, argv + 1);
  if (command == "check") return chakrashim::tools::check::run_check_command(argc - 1, argv + 1);
  if (command == "link") return chakrashim::tools::link::run_link_command(argc - 1, argv + 1);
  if (command == "convert") {
#ifdef CHAKRASHIM_WITH_CONVERT
    return chakrashim::tools::convert::run_convert_command(argc - 1, argv + 1);
#else
    std::fputs("chakrashim convert: this build has no protobuf (install libprotobuf-dev and "
               "protobuf-compiler, as scripts/setup.sh does, and rebuild)\n", stderr);
    return 2;
#endif
  }
  if (command == "report") return chakrashim::tools::report::run_report_command(argc - 1, argv + 1);
  if (command == "trigger") return chakrashim::tools::trigger::run_trigger_command(argc - 1, argv + 1);
  std::string why = "unknown command '" + std::string(command) + "'";
  if (const auto best = chakrashim::config::nearest_name(command, {"check", "link", "convert", "report", "trigger", "vars", "config"}))
    why += " (did you mean " + std::string(*best) + "?)";
  return chakrashim::tools::usage_error("", why);
}
