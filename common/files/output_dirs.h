// The output folders (JOB_chakra[.i], JOB_kineto[.i]), made and opened as the
// control folder is (docs/guarantees.md, "The output folders"): trace folders
// are often shared with a group, whose members can put anything where our
// folders belong. A folder of ours is one we made or made earlier (owned by
// this process's user), never a symbolic link, and every file in it is then
// written relative to its open descriptor (publish.h's *_at functions).
#pragma once

#include <memory>
#include <string>

#include "files/unique_fd.h"

namespace chakrashim::files {

// Why the folder at `dir`, if there is one, is not ours to write into:
// "is a symbolic link (not followed)", "is not a folder", "belongs to uid
// 1001, not to this job's uid 1000"; empty when it is ours or not there.
// The layout's choice passes such a folder over for the next index
// (output_paths.h).
std::string output_dir_refusal(const std::string& dir);

// Makes `dir` (whose parent exists) unless it is there, and opens it
// without following a link; refuses one that output_dir_refusal refuses
// (someone may put it there after the choice). A folder made here gets
// 0777 & ~umask, and the sticky bit when that lets others write in it, so
// that no one else can remove or rename our files there (a name we claimed
// stays ours until we rename it). Returns the descriptor, or null with one
// line in `error`.
std::shared_ptr<const UniqueFd> open_output_dir(const std::string& dir, std::string& error);

}  // namespace chakrashim::files
