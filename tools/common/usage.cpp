#include "common/usage.h"

#include <cstdio>

#include "config/nearest_name.h"

namespace chakrashim::tools {

int usage_error(std::string_view command, std::string_view why) {
  const std::string name = command.empty() ? std::string("chakrashim") : "chakrashim " + std::string(command);
  std::fprintf(stderr, "%s: %.*s (see '%s --help')\n", name.c_str(), static_cast<int>(why.size()), why.data(),
               name.c_str());
  return 2;
}

std::string unknown_option(std::string_view arg, const std::vector<std::string_view>& known) {
  std::string out = "unknown option '" + std::string(arg) + "'";
  if (const auto best = config::nearest_name(arg, known)) out += " (did you mean " + std::string(*best) + "?)";
  return out;
}

}  // namespace chakrashim::tools
