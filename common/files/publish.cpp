#include "files/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "files/output_paths.h"
#include "files/unique_fd.h"

namespace chakrashim::files {

namespace {

PublishResult failure(const std::string& path, std::string_view step, int err) {
  return {false, path + ": " + std::string(step) + ": " + strerror(err)};
}

PublishResult failure(const std::string& path, std::string_view step, const std::string& why) {
  return {false, path + ": " + std::string(step) + ": " + why};
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A buffered sink over a file descriptor that remembers the first error.
class FdSink final : public ByteSink {
 public:
  explicit FdSink(int fd) : fd_(fd) { buffer_.reserve(kBufferSize); }

  bool write(std::string_view bytes) override {
    if (error_) return false;
    if (buffer_.size() + bytes.size() > kBufferSize && !flush()) return false;
    if (bytes.size() >= kBufferSize) return write_all(bytes);
    buffer_.append(bytes);
    return true;
  }
  bool ok() const override { return error_ == 0; }
  int error() const { return error_; }

  bool flush() {
    if (error_) return false;
    const bool done = write_all(buffer_);
    buffer_.clear();
    return done;
  }

 private:
  static constexpr std::size_t kBufferSize = 1 << 16;

  bool write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  int fd_;
  int error_ = 0;
  std::string buffer_;
};

// Closes a descriptor on every path out of a scope.
// 0 on success, else the errno of the failing call (kept before close()
// can change errno).
int fsync_path(const std::string& path, int flags) {
  UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC));
  if (fd.get() < 0) return errno;
  // EINVAL: the file system does not support fsync on this kind of file.
  if (::fsync(fd.get()) != 0 && errno != EINVAL) return errno;
  return 0;
}

// Renames without replacing an existing file. RENAME_NOREPLACE is refused by
// some file systems (EINVAL); link + unlink does the same where links work.
int rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return 0;
  }
  if (errno == EEXIST) return EEXIST;
  struct stat st;
  if (::stat(to.c_str(), &st) == 0) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

}  // namespace

PublishResult make_dirs(const std::string& path) {
  if (path.empty()) return failure(path, "mkdir", ENOENT);
  // The common case at arm: the parents exist. One mkdir (and a stat when it
  // is there already) instead of two calls per component of the path.
  {
    struct stat st;
    if (::mkdir(path.c_str(), 0777) == 0 ||
        (errno == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
      return {true, {}};
  }
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (prefix.empty()) continue;
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return failure(prefix, "mkdir", errno);
    struct stat st;
    if (::stat(prefix.c_str(), &st) != 0) return failure(prefix, "stat", errno);
    if (!S_ISDIR(st.st_mode)) return failure(prefix, "mkdir", ENOTDIR);
  }
  return {true, {}};
}

PublishResult claim_partial(const std::string& partial) {
  UniqueFd fd(::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) return failure(partial, "create", errno);
  if (fd.close() != 0) return failure(partial, "close", errno);
  return {true, {}};
}

PublishResult finalize_partial(const std::string& partial, const std::string& final_path,
                               const Validator& validate, bool overwrite) {
  auto abandon = [&](PublishResult r) {
    ::unlink(partial.c_str());
    return r;
  };
  if (validate) {
    const std::string why = validate(partial);
    if (!why.empty()) return abandon(failure(partial, "validate", why));
  }
  if (const int err = fsync_path(partial, O_RDONLY)) return abandon(failure(partial, "fsync", err));
  const int err = overwrite ? (::rename(partial.c_str(), final_path.c_str()) == 0 ? 0 : errno)
                            : rename_no_replace(partial, final_path);
  if (err != 0) return abandon(failure(final_path, "rename", err));
  // The rename is durable once the folder is; a failure here loses nothing
  // that is already visible, so it is not reported.
  fsync_path(parent_dir(final_path), O_RDONLY | O_DIRECTORY);
  return {true, {}};
}

PublishResult publish_file(const std::string& final_path,
                           const std::function<bool(ByteSink&)>& produce,
                           const Validator& validate, bool overwrite) {
  const std::string partial = partial_path(final_path);
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  UniqueFd fd(::open(partial.c_str(), flags, 0666));
  if (fd.get() < 0) return failure(partial, "create", errno);
  auto abandon = [&](PublishResult r) {
    ::unlink(partial.c_str());
    return r;
  };
  FdSink sink(fd.get());
  const bool produced = produce(sink);
  if (!sink.ok() || !sink.flush()) return abandon(failure(partial, "write", sink.error()));
  if (!produced) return abandon(failure(partial, "write", std::string("writer gave up")));
  if (fd.close() != 0) return abandon(failure(partial, "close", errno));
  return finalize_partial(partial, final_path, validate, overwrite);
}

}  // namespace chakrashim::files
