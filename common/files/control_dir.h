// The on-demand control folder, TRACE_DIR/.chakrashim/JOB (docs/on-demand.md),
// opened so that nothing another user put in the trace folder can redirect
// us (docs/guarantees.md, "The control folder"):
// - `.chakrashim` and `JOB` are opened with O_NOFOLLOW: a symbolic link is
//   never followed. A link standing where our job's folder belongs is
//   removed (the link only, never what it points to) and the folder made.
// - The job's folder must be owned by this user; one that another user owns
//   is refused, and the job's own `JOB.uid<N>` beside it is used instead
//   (`chakrashim trigger` reads the job id from step.json, not the name).
// - Folders we make are 0700, or keep the trace folder's group bits (and
//   `.chakrashim` its sticky bit) where that folder is shared with a group.
// - Everything after the open works relative to the descriptors, so a
//   folder renamed or replaced later is not followed.
#pragma once

#include <string>

#include "files/unique_fd.h"

namespace chakrashim::files {

struct ControlDir {
  UniqueFd trace;       // TRACE_DIR
  UniqueFd base;        // TRACE_DIR/.chakrashim
  UniqueFd job;         // the job's folder in it
  std::string name;     // the job folder's name in base (JOB or JOB.uid<N>)
  std::string path;     // for messages only
  bool created = false; // this call made the job's folder
  std::string note;     // a line worth saying once (a link removed, a foreign folder passed over)
  explicit operator bool() const { return static_cast<bool>(job); }
};

// Opens (and, with `create`, makes) the job's control folder. On failure
// the result is empty and `error` says why in one phrase (ENOENT without
// `create`: "not there yet").
ControlDir open_control_dir(const std::string& trace_dir, const std::string& job_id, bool create,
                            std::string& error);

// True while `dir.name` in `dir.base` is still the folder `dir.job` (not
// removed, renamed or replaced since the open).
bool control_dir_intact(const ControlDir& dir);

// Removes the folder (empty by then) and `.chakrashim` if it is left empty;
// relative to the descriptors, and only while the name is still ours.
void remove_control_dir(const ControlDir& dir);

}  // namespace chakrashim::files
