#include "files/output_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chakrashim::files {

namespace {

std::string not_ours(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link (not followed)";
  if (!S_ISDIR(st.st_mode)) return "is not a folder";
  const uid_t me = ::geteuid();
  if (st.st_uid != me)
    return "belongs to uid " + std::to_string(st.st_uid) + ", not to this job's uid " + std::to_string(me);
  return {};
}

}  // namespace

std::string output_dir_refusal(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return {};  // not there: ours to make
  return not_ours(st);
}

std::shared_ptr<const UniqueFd> open_output_dir(const std::string& dir, std::string& error) {
  const bool made = ::mkdir(dir.c_str(), 0777) == 0;
  if (!made && errno != EEXIST) {
    error = dir + ": mkdir: " + std::strerror(errno);
    return nullptr;
  }
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!fd) {
    const int err = errno;
    if ((err == ELOOP || err == ENOTDIR) && ::lstat(dir.c_str(), &st) == 0 && !not_ours(st).empty())
      error = dir + " " + not_ours(st);
    else
      error = dir + ": open: " + std::strerror(err);
    return nullptr;
  }
  if (::fstat(fd.get(), &st) != 0) {
    error = dir + ": fstat: " + std::strerror(errno);
    return nullptr;
  }
  if (const std::string why = not_ours(st); !why.empty()) {
    error = dir + " " + why;
    return nullptr;
  }
  if (made && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) ::fchmod(fd.get(), (st.st_mode & 07777) | S_ISVTX);
  return std::make_shared<const UniqueFd>(std::move(fd));
}

}  // namespace chakrashim::files
