#include "files/small_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chakrashim::files {

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

std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes,
                                           std::string& error, int* open_errno) {
  if (open_errno) *open_errno = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (open_errno) *open_errno = errno;
    error = std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      error = "larger than " + std::to_string(max_bytes) + " bytes";
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return text;
}

bool replace_file(const std::string& dir, const std::string& name, const std::string& text,
                  bool durable, std::string& error) {
  const std::string temp = dir + "/." + name + ".tmp";
  const std::string final_path = dir + "/" + name;
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = failed("cannot create", temp);
    return false;
  }
  // Durable: the data reaches the disk before the name does, so a reader
  // after a crash of this host finds a whole document.
  bool ok = write_all(fd, text) && (!durable || ::fsync(fd) == 0);
  if (!ok) error = failed("cannot write", temp);
  // On NFS a write error can surface only at close.
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = failed("cannot write", temp);
  }
  if (ok && ::rename(temp.c_str(), final_path.c_str()) != 0) {
    ok = false;
    error = failed("cannot rename " + temp + " to", final_path);
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return false;
  }
  if (durable) {
    // Where a folder cannot be fsynced (some network file systems) the file
    // is there all the same.
    const int folder = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder >= 0) {
      ::fsync(folder);
      ::close(folder);
    }
  }
  return true;
}

}  // namespace chakrashim::files
