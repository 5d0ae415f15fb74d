#include "vars_command.h"

#include <cstdio>

#include "common/options.h"
#include "config/config_vars.h"

namespace chakrashim::tools::vars_command {

namespace {

constexpr const char* kUsage =
    "usage: chakrashim vars [--markdown]\n"
    "\n"
    "Lists every CHAKRA_* variable the preloaded library reads: its grammar,\n"
    "default and meaning. --markdown prints the table README.md carries.\n";

void print_markdown() {
  std::printf("| variable | accepted values | default | meaning |\n");
  std::printf("|---|---|---|---|\n");
  for (const auto& v : config::kConfigVars) {
    std::printf("| `%.*s` | %.*s | %.*s | %.*s |\n", static_cast<int>(v.name.size()),
                v.name.data(), static_cast<int>(v.grammar.size()), v.grammar.data(),
                static_cast<int>(v.fallback.size()), v.fallback.data(),
                static_cast<int>(v.doc.size()), v.doc.data());
  }
}

void print_plain() {
  for (const auto& v : config::kConfigVars) {
    std::printf("%.*s\n    %.*s\n    accepted: %.*s\n    default: %.*s\n",
                static_cast<int>(v.name.size()), v.name.data(), static_cast<int>(v.doc.size()),
                v.doc.data(), static_cast<int>(v.grammar.size()), v.grammar.data(),
                static_cast<int>(v.fallback.size()), v.fallback.data());
  }
}

}  // namespace

int run_vars_command(int argc, char** argv) {
  bool markdown = false;
  CommandLine line("vars", kUsage);
  line.flag({"--markdown"}, markdown);
  if (const auto status = line.read(argc, argv)) return *status;
  markdown ? print_markdown() : print_plain();
  return 0;
}

}  // namespace chakrashim::tools::vars_command
