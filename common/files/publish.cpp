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

// 0 on success, else the errno of the failing call (kept before close()
// can change errno).
int fsync_at(int dir, const std::string& name) {
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return errno;
  // EINVAL: the file system does not support fsync on this kind of file.
  if (::fsync(fd.get()) != 0 && errno != EINVAL) return errno;
  return 0;
}

// Renames without replacing an existing file. RENAME_NOREPLACE is refused by
// some file systems (EINVAL); link + unlink does the same where links work.
int rename_no_replace_at(int dir, const std::string& from, const std::string& to) {
  if (::renameat2(dir, from.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  if (::linkat(dir, from.c_str(), dir, to.c_str(), 0) == 0) {
    ::unlinkat(dir, from.c_str(), 0);
    return 0;
  }
  if (errno == EEXIST) return EEXIST;
  struct stat st;
  if (::fstatat(dir, to.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return EEXIST;
  return ::renameat(dir, from.c_str(), dir, to.c_str()) == 0 ? 0 : errno;
}

std::string shown(const Folder& dir, const std::string& name) {
  return dir.path.empty() ? name : dir.path + "/" + name;
}

}  // namespace

std::string path_through(const Folder& dir, const std::string& name) {
  return "/proc/self/fd/" + std::to_string(dir.fd) + "/" + name;
}

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

void lock_for_writing(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  (void)::fcntl(fd, F_OFD_SETLK, &lock);
}

PartialState partial_state(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return PartialState::unknown;
  struct flock probe {};
  probe.l_type = F_RDLCK;  // conflicts with the writer's write lock
  probe.l_whence = SEEK_SET;
  if (::fcntl(fd.get(), F_OFD_GETLK, &probe) != 0) return PartialState::unknown;
  return probe.l_type == F_UNLCK ? PartialState::left_over : PartialState::being_written;
}

PublishResult claim_partial_at(const Folder& dir, const std::string& name, UniqueFd* held) {
  UniqueFd fd(::openat(dir.fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (fd.get() < 0) return failure(shown(dir, name), "create", errno);
  if (held) {
    lock_for_writing(fd.get());
    *held = std::move(fd);
    return {true, {}};
  }
  if (fd.close() != 0) return failure(shown(dir, name), "close", errno);
  return {true, {}};
}

PublishResult finalize_partial_at(const Folder& dir, const std::string& partial_name,
                                  const std::string& final_name, const Validator& validate,
                                  bool overwrite) {
  auto abandon = [&](PublishResult r) {
    ::unlinkat(dir.fd, partial_name.c_str(), 0);
    return r;
  };
  const std::string partial = shown(dir, partial_name);
  // Ours, and a regular file: whatever else stands at its name now is not
  // read, renamed into place, nor followed.
  struct stat st;
  if (::fstatat(dir.fd, partial_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return failure(partial, "stat", errno);
  if (!S_ISREG(st.st_mode)) return abandon(failure(partial, "validate", std::string("not a regular file")));
  if (validate) {
    const std::string why = validate(path_through(dir, partial_name));
    if (!why.empty()) return abandon(failure(partial, "validate", why));
  }
  if (const int err = fsync_at(dir.fd, partial_name)) return abandon(failure(partial, "fsync", err));
  const int err = overwrite ? (::renameat(dir.fd, partial_name.c_str(), dir.fd, final_name.c_str()) == 0 ? 0 : errno)
                            : rename_no_replace_at(dir.fd, partial_name, final_name);
  if (err != 0) return abandon(failure(shown(dir, final_name), "rename", err));
  // The rename is durable once the folder is; a failure here loses nothing
  // that is already visible, so it is not reported.
  ::fsync(dir.fd);
  return {true, {}};
}

PublishResult publish_file_at(const Folder& dir, const std::string& name,
                              const std::function<bool(ByteSink&)>& produce, const Validator& validate,
                              bool overwrite) {
  const std::string partial_name = name + ".partial";
  const std::string partial = shown(dir, partial_name);
  UniqueFd fd(::openat(dir.fd, partial_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (fd.get() < 0) return failure(partial, "create", errno);
  // Locked from here to the rename: a second descriptor of the same open
  // file keeps the lock past the close, whose result is checked.
  lock_for_writing(fd.get());
  const UniqueFd lock(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
  auto abandon = [&](PublishResult r) {
    ::unlinkat(dir.fd, partial_name.c_str(), 0);
    return r;
  };
  FdSink sink(fd.get());
  const bool produced = produce(sink);
  if (!sink.ok() || !sink.flush()) return abandon(failure(partial, "write", sink.error()));
  if (!produced) return abandon(failure(partial, "write", std::string("writer gave up")));
  if (fd.close() != 0) return abandon(failure(partial, "close", errno));
  return finalize_partial_at(dir, partial_name, name, validate, overwrite);
}

PublishResult publish_file(const std::string& final_path,
                           const std::function<bool(ByteSink&)>& produce,
                           const Validator& validate, bool overwrite) {
  const std::string parent = parent_dir(final_path);
  UniqueFd fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // Said as the file it could not create, as publish_file_at would.
  if (fd.get() < 0) return failure(final_path + ".partial", "create", errno);
  const auto slash = final_path.rfind('/');
  const std::string name = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  return publish_file_at(Folder{fd.get(), parent}, name, produce, validate, overwrite);
}

}  // namespace chakrashim::files
