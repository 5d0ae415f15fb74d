// Small control files (docs/on-demand.md: step.json, triggers, missed
// notes), shared by the bridge and `chakrashim trigger`: read whole, up to a
// size cap; written whole under a temporary name that starts with '.', then
// renamed over the final name, so that a reader sees the old document or the
// new one, never a part (on NFS and Lustre too, where appending is not atomic).
// Trace files go through publish.h instead.
//
// The folder they live in is shared, so nothing found there is trusted
// (docs/guarantees.md, "The control folder"): a name is opened without
// following a symbolic link and without blocking (a FIFO), and only a
// regular file is read; a temporary file gets a name nobody can predict and
// is created exclusively, so no planted link or file is ever written
// through. The `_at` forms work relative to an open folder, so that a folder
// renamed or swapped for a link meanwhile is not followed either.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace chakrashim::files {

// The file's bytes, or nullopt with `error` (strerror; "a symbolic link";
// "not a regular file"; "larger than N bytes"). `open_errno`, when given, is
// set to open()'s errno if the open failed (ENOENT: no such file), else 0.
// Blocks on nothing but the filesystem itself.
std::optional<std::string> read_small_file_at(int dir_fd, const std::string& name,
                                              std::size_t max_bytes, std::string& error,
                                              int* open_errno = nullptr);
// The same for a path (its last component is never followed).
std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes,
                                           std::string& error, int* open_errno = nullptr);

// Writes `text` to .NAME.<random>.tmp in the folder, created exclusively,
// then renames it to NAME, replacing any file (a link there is replaced, not
// followed). `durable`: fsync the file before the rename and the folder
// after it. On failure the temporary file is removed and `error` says, e.g.
//   "cannot write /t/.x.json.3f9a0c1b2d4e5f60.tmp: File too large"
// `shown_dir` names the folder in the error.
bool replace_file_at(int dir_fd, const std::string& name, const std::string& text, bool durable,
                     std::string& error, const std::string& shown_dir);
// The same in the folder `dir` (a path; its own links are the caller's).
bool replace_file(const std::string& dir, const std::string& name, const std::string& text,
                  bool durable, std::string& error);

// The names in an open folder (not "." or ".."), or nullopt with `error`.
std::optional<std::vector<std::string>> list_names_at(int dir_fd, std::string& error);

// Writes all of `text` to `fd`, retrying short writes and EINTR; false with
// errno set on failure (EIO for a write of 0 bytes).
bool write_all(int fd, const std::string& text);

// A temporary name for NAME: ".NAME.<16 hex digits>.tmp", the digits from
// getrandom (a counter and the clock where it has no entropy yet).
std::string temporary_name(const std::string& name);

}  // namespace chakrashim::files
