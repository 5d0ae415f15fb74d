#include "files/small_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "files/unique_fd.h"

namespace chakrashim::files {

namespace {

// open()'s errors as a reader should see them: O_NOFOLLOW's ELOOP means a
// link stands where a file was expected.
std::string open_error(int err) {
  return err == ELOOP ? std::string("a symbolic link (not followed)") : std::strerror(err);
}

}  // namespace

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

std::string temporary_name(const std::string& name) {
  std::uint64_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) {
    // Early boot without entropy: unique in this process and hard enough to
    // guess; O_EXCL makes a collision a failed write, never a followed link.
    static std::atomic<std::uint64_t> counter{0};  // why global: unique per process
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (static_cast<std::uint64_t>(ts.tv_nsec) << 20) ^ static_cast<std::uint64_t>(ts.tv_sec) ^
        (static_cast<std::uint64_t>(::getpid()) << 40) ^ counter.fetch_add(1);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
  return "." + name + "." + hex + ".tmp";
}

std::optional<std::string> read_small_file_at(int dir_fd, const std::string& name,
                                              std::size_t max_bytes, std::string& error,
                                              int* open_errno) {
  if (open_errno) *open_errno = 0;
  // O_NONBLOCK: a FIFO opens at once (and is then refused below) instead of
  // waiting for a writer; O_NOCTTY: a terminal never becomes ours.
  UniqueFd fd(::openat(dir_fd, name.c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) {
    if (open_errno) *open_errno = errno;
    error = open_error(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "not a regular file";
    return std::nullopt;
  }
  const std::string too_large = "larger than " + std::to_string(max_bytes) + " bytes";
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    error = too_large;
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // grew since the fstat
      error = too_large;
      return std::nullopt;
    }
  }
  return text;
}

std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes,
                                           std::string& error, int* open_errno) {
  return read_small_file_at(AT_FDCWD, path, max_bytes, error, open_errno);
}

bool replace_file_at(int dir_fd, const std::string& name, const std::string& text, bool durable,
                     std::string& error, const std::string& shown_dir) {
  const std::string temp = temporary_name(name);
  const auto failed = [&](const std::string& what, const std::string& file) {
    error = what + " " + shown_dir + "/" + file + ": " + std::strerror(errno);
    return false;
  };
  UniqueFd fd(::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0644));
  if (!fd) return failed("cannot create", temp);
  // Durable: the data reaches the disk before the name does, so a reader
  // after a crash of this host finds a whole document.
  bool ok = write_all(fd.get(), text) && (!durable || ::fsync(fd.get()) == 0);
  if (!ok) failed("cannot write", temp);
  // On NFS a write error can surface only at close.
  if (fd.close() != 0 && ok) ok = failed("cannot write", temp);
  if (ok && ::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0)
    ok = failed("cannot rename " + shown_dir + "/" + temp + " to", name);
  if (!ok) {
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return false;
  }
  // Where a folder cannot be fsynced (some network file systems) the file
  // is there all the same.
  if (durable) ::fsync(dir_fd);
  return true;
}

bool replace_file(const std::string& dir, const std::string& name, const std::string& text,
                  bool durable, std::string& error) {
  UniqueFd folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder) {
    error = "cannot open " + dir + ": " + std::strerror(errno);
    return false;
  }
  return replace_file_at(folder.get(), name, text, durable, error, dir);
}

std::optional<std::vector<std::string>> list_names_at(int dir_fd, std::string& error) {
  // fdopendir takes the descriptor it is given: a duplicate, so the caller's
  // stays open; its offset is shared, hence the rewind.
  const int copy = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  DIR* d = ::fdopendir(copy);
  if (!d) {
    error = std::strerror(errno);
    ::close(copy);
    return std::nullopt;
  }
  ::rewinddir(d);
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

}  // namespace chakrashim::files
