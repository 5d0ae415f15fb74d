// Atomic publishing (docs/design.md section 4.6): a file is complete and valid
// under its final name, or it is not there. The only code that writes trace
// files to disk.
//
//   write NAME.partial (O_CREAT|O_EXCL) -> flush -> validate -> fsync ->
//   rename to NAME (never replacing an existing file unless overwrite) ->
//   fsync the folder.
//
// Every return is checked. On any failure the .partial is removed and the
// error says which step failed and why (strerror).
#pragma once

#include <functional>
#include <string>

#include "files/byte_sink.h"
#include "files/unique_fd.h"

namespace chakrashim::files {

struct PublishResult {
  bool ok = false;
  std::string error;  // one line: "<path>: <step>: <reason>"
};

// Checks a written .partial file; returns an empty string when it is valid,
// else why not. It is given a path that names the file through our open
// folder (/proc/self/fd/N/NAME), never through a name that someone else
// could point elsewhere.
using Validator = std::function<std::string(const std::string& partial_path)>;

// A folder to publish in: open (output_dirs.h opens ours without following
// a link), and its path, for messages only. Every operation below is
// relative to `fd` and never follows a link at the file's name, so nobody
// who can write the folder's parent can redirect what we write (docs/
// guarantees.md, "The output folders").
struct Folder {
  int fd = -1;
  std::string path;
};

// NAME as seen through the open folder, for code that takes a path (a
// validator, torch's ET observer): "/proc/self/fd/7/rank-0.json.partial".
std::string path_through(const Folder& dir, const std::string& name);

// mkdir -p, mode 0777 & ~umask. Fails if a component is not a folder.
// Follows links: for a folder the user named (CHAKRA_TRACE_DIR).
PublishResult make_dirs(const std::string& path);

// Writes NAME.partial in `dir` through `produce` (created exclusively,
// never through a link), then finalizes it as NAME. `produce` returns false
// if it gave up (the file is then abandoned).
PublishResult publish_file_at(const Folder& dir, const std::string& name,
                              const std::function<bool(ByteSink&)>& produce, const Validator& validate,
                              bool overwrite);

// For a .partial that someone else wrote (torch's ET observer): validate,
// fsync, rename to NAME in the same folder, fsync the folder. Removes the
// .partial on failure.
PublishResult finalize_partial_at(const Folder& dir, const std::string& partial_name,
                                  const std::string& final_name, const Validator& validate,
                                  bool overwrite);

// Creates an empty NAME exclusively, to claim the name and to prove the
// folder is writable before anyone writes into it. With `held`, the file
// stays open there with a write lock on it (below) until the caller closes
// it: the claim of a window that is still recording.
PublishResult claim_partial_at(const Folder& dir, const std::string& name, UniqueFd* held = nullptr);

// A .partial being written carries an open-file-description write lock
// (fcntl F_OFD_SETLK) from its creation to its rename, held by the writing
// process: `chakrashim check` tells a capture in progress from a leftover of
// a writer that died (the kernel drops the lock with it; issue #49). A
// lock the file system refuses is no error: the file is written anyway.
void lock_for_writing(int fd);
enum class PartialState { left_over, being_written, unknown };
//   a .partial whose writer holds its lock -> being_written; one whose
//   writer died or finished -> left_over; a file system without such locks
//   -> unknown
PartialState partial_state(const std::string& path);

// The same for a file named by its path (its folder opened as named, links
// and all): the tools' outputs, where the user names the path.
PublishResult publish_file(const std::string& final_path,
                           const std::function<bool(ByteSink&)>& produce,
                           const Validator& validate, bool overwrite);

}  // namespace chakrashim::files
