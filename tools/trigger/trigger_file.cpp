#include "trigger/trigger_file.h"

#include <cstdlib>
#include <cstring>

#include <pwd.h>
#include <unistd.h>

#include "files/small_file.h"

namespace chakrashim::tools::trigger {

WriteResult write_trigger(const std::string& dir, const window::Trigger& trigger, std::int64_t time_ns,
                          std::int64_t pid) {
  WriteResult result;
  const std::string name = window::trigger_file_name(time_ns, pid);
  result.path = dir + "/" + name;
  // Durable: a rank that sees the name after a crash of this host reads a
  // whole document.
  result.ok = files::replace_file(dir, name, window::encode_trigger(trigger), /*durable=*/true, result.error);
  return result;
}

std::string requester() {
  std::string user;
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) user = pw->pw_name;
  if (user.empty())
    if (const char* env = std::getenv("USER"); env && *env) user = env;
  if (user.empty()) user = "uid" + std::to_string(::geteuid());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "unknown-host");
  return user + "@" + host;
}

}  // namespace chakrashim::tools::trigger
