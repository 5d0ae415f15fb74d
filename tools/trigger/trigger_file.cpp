#include "trigger/trigger_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trigger/unique_fd.h"

namespace chakrashim::tools::trigger {

namespace {

std::string failed(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

WriteResult write_trigger(const std::string& dir, const window::Trigger& trigger, std::int64_t time_ns,
                          std::int64_t pid) {
  WriteResult result;
  const std::string name = window::trigger_file_name(time_ns, pid);
  result.path = dir + "/" + name;
  const std::string temp = dir + "/." + name + ".tmp";
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd) {
    result.error = failed("cannot create", temp);
    return result;
  }
  // The data reaches the disk before the name does: a rank that sees the
  // name after a crash of this host reads a whole document.
  const bool written = write_all(fd.get(), window::encode_trigger(trigger)) && ::fsync(fd.get()) == 0;
  const std::string write_error = written ? std::string() : failed("cannot write", temp);
  if (!fd.close() && written) {
    result.error = failed("cannot write", temp);
  } else if (!written) {
    result.error = write_error;
  } else if (::rename(temp.c_str(), result.path.c_str()) != 0) {
    result.error = failed("cannot rename " + temp + " to", result.path);
  }
  if (!result.error.empty()) {
    ::unlink(temp.c_str());
    return result;
  }
  // The rename itself is made durable too; where a folder cannot be
  // fsynced (some network file systems) the trigger is there all the same.
  if (UniqueFd folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); folder) ::fsync(folder.get());
  result.ok = true;
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
