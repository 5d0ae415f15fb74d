// Usage errors, the same way in every subcommand: one line on stderr that
// says what is wrong and points at --help (the whole help text would bury
// the one line that matters), and a "did you mean" for a mistyped option.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::tools {

// Prints "chakrashim check: WHY (see 'chakrashim check --help')" on stderr
// and returns 2, the usage-error exit status. `command` is "check", "link"...
// or empty for the top-level command.
int usage_error(std::string_view command, std::string_view why);

//   ("--strcit", {"--strict", "--json"}) -> "unknown option '--strcit' (did you mean --strict?)"
std::string unknown_option(std::string_view arg, const std::vector<std::string_view>& known);

}  // namespace chakrashim::tools
