#include "files/run_marker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "files/publish.h"
#include "files/small_file.h"
#include "files/unique_fd.h"

namespace chakrashim::files {

namespace {

bool is_rank_file(const char* name) { return std::strncmp(name, "rank-", 5) == 0; }

// The names in the folder open at `dir_fd`, read through a descriptor of
// its own (closedir closes that one, not the caller's).
std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> names;
  const int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return names;
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return names;
}

// The marker's content: a regular file, never followed, never a FIFO that
// blocks, at most kMaxRunIdBytes; nullopt-like {false} where none is there.
FolderRun read_marker(int dir_fd) {
  FolderRun f;
  UniqueFd fd(::openat(dir_fd, kRunMarkerName, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    f.marked = errno != ENOENT;  // a link or worse at its name: someone's
    return f;
  }
  f.marked = true;
  struct stat st {};
  // Another user's file at our marker's name (a shared folder) names no
  // run of ours.
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return f;
  char buf[kMaxRunIdBytes];
  std::size_t got = 0;
  while (got < sizeof buf) {
    const ssize_t n = ::read(fd.get(), buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  f.run.assign(buf, got);
  return f;
}

// Removes another run's rank files from the folder: finals and leftover
// .partials; a .partial still being written may be this run's.
std::size_t remove_rank_files(int dir_fd, const std::string& dir) {
  std::size_t removed = 0;
  for (const auto& name : names_in(dir_fd)) {
    if (!is_rank_file(name.c_str())) continue;
    const bool partial = name.size() > 8 && name.compare(name.size() - 8, 8, ".partial") == 0;
    if (partial && partial_state(dir + "/" + name) == PartialState::being_written) continue;
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)) continue;
    if (::unlinkat(dir_fd, name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

// `text` into a new file `name` (never an existing one, never through a
// link); false with errno set.
bool write_new_file(int dir_fd, const std::string& name, const std::string& text) {
  UniqueFd t(::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  return t && write_all(t.get(), text) && t.close() == 0;
}

// The marker is there already: this run's, another's (refused), or
// replaced with `overwrite`.
MarkResult mark_existing(int dir_fd, const std::string& dir, const std::string& run_id, bool overwrite, MarkResult r) {
  const FolderRun there = read_marker(dir_fd);
  if (there.run == run_id) {
    r.ok = true;
    return r;
  }
  if (!overwrite) {
    r.error = dir + " was taken by another run since";
    return r;
  }
  // Replaced whole: the other run's files first, then its marker, by a
  // rename over it, so that no rank of this run ever reads half an id.
  r.removed = remove_rank_files(dir_fd, dir);
  const std::string replacement = temporary_name(kRunMarkerName);
  if (!write_new_file(dir_fd, replacement, run_id) ||
      ::renameat(dir_fd, replacement.c_str(), dir_fd, kRunMarkerName) != 0) {
    r.error = dir + "/" + kRunMarkerName + ": replace: " + std::strerror(errno);
    ::unlinkat(dir_fd, replacement.c_str(), 0);
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace

FolderRun read_folder_run(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return {};
  FolderRun f = read_marker(fd.get());
  for (const auto& name : names_in(fd.get()))
    if (is_rank_file(name.c_str())) f.holds_rank_files = true;
  return f;
}

bool other_runs_folder(const FolderRun& f, const std::string& run_id) {
  if (run_id.empty()) return f.marked;
  if (f.marked) return f.run != run_id;
  return f.holds_rank_files;
}

MarkResult mark_folder_run(int dir_fd, const std::string& dir, const std::string& run_id, bool overwrite) {
  MarkResult r;
  // The marker appears whole or not at all: written under a name nobody
  // can predict, then linked to its own name, which fails if it is there.
  // (Created empty and then written, another rank of the same run could
  // read it empty in between and take the folder for another run's.)
  const std::string temp = temporary_name(kRunMarkerName);
  if (!write_new_file(dir_fd, temp, run_id)) {
    r.error = dir + "/" + kRunMarkerName + ": create: " + std::strerror(errno);
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return r;
  }
  const bool linked = ::linkat(dir_fd, temp.c_str(), dir_fd, kRunMarkerName, 0) == 0;
  const int link_errno = errno;
  ::unlinkat(dir_fd, temp.c_str(), 0);
  if (linked) {
    // This run is the folder's first, or replaces an unmarked capture.
    if (overwrite) r.removed = remove_rank_files(dir_fd, dir);
    r.ok = true;
    return r;
  }
  if (link_errno != EEXIST) {
    if (link_errno == EPERM || link_errno == EOPNOTSUPP || link_errno == ENOSYS) {
      // A filesystem without hard links: created exclusively, then
      // written (the race above is back, narrow: said as it is met).
      UniqueFd fd(::openat(dir_fd, kRunMarkerName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
      if (fd) {
        if (overwrite) r.removed = remove_rank_files(dir_fd, dir);
        r.ok = write_all(fd.get(), run_id) && fd.close() == 0;
        if (!r.ok) {
          r.error = dir + "/" + kRunMarkerName + ": write: " + std::strerror(errno);
          ::unlinkat(dir_fd, kRunMarkerName, 0);
        }
        return r;
      }
      if (errno == EEXIST) return mark_existing(dir_fd, dir, run_id, overwrite, r);
    }
    r.error = dir + "/" + kRunMarkerName + ": create: " + std::strerror(link_errno);
    return r;
  }
  return mark_existing(dir_fd, dir, run_id, overwrite, r);
}

void unmark_if_alone(int dir_fd) {
  const auto names = names_in(dir_fd);
  if (names.size() == 1 && names[0] == kRunMarkerName) ::unlinkat(dir_fd, kRunMarkerName, 0);
}

}  // namespace chakrashim::files
