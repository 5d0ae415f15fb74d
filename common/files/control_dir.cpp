#include "files/control_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "files/publish.h"

namespace chakrashim::files {

namespace {

constexpr char kBaseName[] = ".chakrashim";

int open_dir_at(int at, const char* name) {
  return ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool is_symlink_at(int at, const std::string& name) {
  struct stat st {};
  return ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

// What a folder of ours gets: private, unless the trace folder is shared
// with its group (a project directory), whose members may then trigger.
mode_t our_mode(const struct stat& trace, bool base) {
  const bool group_shared = (trace.st_mode & S_IWGRP) != 0;
  mode_t mode = S_IRWXU | (group_shared ? (trace.st_mode & (S_IRWXG | S_ISGID)) : 0);
  // `.chakrashim` holds the folders of every job of every user writing the
  // trace folder: as open as the trace folder, and sticky where others can
  // write it, so that none removes or renames another's job folder.
  if (base) {
    mode = (trace.st_mode & (S_IRWXU | S_IRWXG | S_IRWXO | S_ISGID));
    if (trace.st_mode & (S_IWGRP | S_IWOTH)) mode |= S_ISVTX;
  }
  return mode;
}

// Opens NAME in `at` as a folder of ours, making it when `create`. A link
// there is replaced when `replace_link`. Returns -1 with errno, or with
// `why` set for a refusal.
int open_our_dir(int at, const std::string& name, bool create, mode_t mode, bool replace_link,
                 bool& created, std::string& why, std::string& note) {
  created = false;
  if (create) {
    if (::mkdirat(at, name.c_str(), S_IRWXU) == 0) {
      created = true;
    } else if (errno == EEXIST && replace_link && is_symlink_at(at, name)) {
      // Never ours (we make folders, not links): the link goes, its target
      // stays untouched.
      if (::unlinkat(at, name.c_str(), 0) == 0 && ::mkdirat(at, name.c_str(), S_IRWXU) == 0) {
        created = true;
        note = "a symbolic link stood where the control folder " + name +
               " belongs; removed it (its target is untouched) and made the folder";
      }
    }
  }
  const int fd = open_dir_at(at, name.c_str());
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR)
      why = is_symlink_at(at, name) ? "is a symbolic link (not followed)" : "is not a folder";
    return -1;
  }
  // The mode we want, whatever the umask took away; only on what we made.
  if (created) ::fchmod(fd, mode);
  return fd;
}

}  // namespace

ControlDir open_control_dir(const std::string& trace_dir, const std::string& job_id, bool create,
                            std::string& error) {
  ControlDir dir;
  dir.path = trace_dir + "/" + kBaseName;
  if (create) {
    if (const auto made = make_dirs(trace_dir); !made.ok) {
      error = made.error;
      return {};
    }
  }
  // The trace folder itself is the user's choice, links and all.
  dir.trace = UniqueFd(::open(trace_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat trace_st {};
  if (!dir.trace || ::fstat(dir.trace.get(), &trace_st) != 0) {
    error = errno == ENOENT && !create ? "not there yet"
                                       : "cannot open " + trace_dir + ": " + std::strerror(errno);
    return {};
  }
  bool made = false;
  std::string why;
  dir.base = UniqueFd(open_our_dir(dir.trace.get(), kBaseName, create, our_mode(trace_st, true),
                                   /*replace_link=*/false, made, why, dir.note));
  if (!dir.base) {
    error = errno == ENOENT && !create ? "not there yet"
                                       : dir.path + " " + (why.empty() ? std::strerror(errno) : why);
    return {};
  }
  const uid_t me = ::geteuid();
  const mode_t mode = our_mode(trace_st, false);
  // Our job's folder, or, where another user owns that name, our own one
  // beside it.
  for (const std::string& name : {job_id, job_id + ".uid" + std::to_string(me)}) {
    why.clear();
    UniqueFd job(open_our_dir(dir.base.get(), name, create, mode, /*replace_link=*/true, made, why,
                              dir.note));
    const std::string shown = dir.path + "/" + name;
    if (!job) {
      if (errno == ENOENT && !create) {
        if (name == job_id) continue;  // perhaps the job's own beside it
        error = "not there yet";
      } else {
        error = shown + " " + (why.empty() ? std::strerror(errno) : why);
      }
      return {};
    }
    struct stat st {};
    if (::fstat(job.get(), &st) != 0) {
      error = shown + ": " + std::strerror(errno);
      return {};
    }
    if (st.st_uid != me) {
      dir.note = shown + " belongs to uid " + std::to_string(st.st_uid) + ", not to this job's uid " +
                 std::to_string(me) + ": not used";
      continue;
    }
    dir.job = std::move(job);
    dir.name = name;
    dir.path = shown;
    dir.created = made;
    return dir;
  }
  error = dir.note;
  return {};
}

bool control_dir_intact(const ControlDir& dir) {
  if (!dir) return false;
  struct stat open_st {}, named_st {};
  if (::fstat(dir.job.get(), &open_st) != 0 || open_st.st_nlink == 0) return false;
  if (::fstatat(dir.base.get(), dir.name.c_str(), &named_st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  return named_st.st_dev == open_st.st_dev && named_st.st_ino == open_st.st_ino;
}

void remove_control_dir(const ControlDir& dir) {
  if (!control_dir_intact(dir)) return;
  // rmdir fails, harmlessly, while anything else is in it; so does the
  // base's while another job's folder remains.
  if (::unlinkat(dir.base.get(), dir.name.c_str(), AT_REMOVEDIR) != 0) return;
  ::unlinkat(dir.trace.get(), kBaseName, AT_REMOVEDIR);
}

}  // namespace chakrashim::files
