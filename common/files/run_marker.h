// Which run a pair of output folders belongs to (issue #49: two runs' files
// mixed in one folder). Every rank picks its folders alone; a folder whose
// rank files belong to another run must be passed over by every rank of
// this one, not only by the ranks whose own file is there. The first rank
// of a run to make a folder leaves the run's id in it, in a file named
// .chakrashim-run: the ranks of that run write there, the next run's pass
// it by. The marker is read like anything else in a shared folder: never
// through a link, never a FIFO, at most kMaxRunIdBytes.
#pragma once

#include <cstddef>
#include <string>

namespace chakrashim::files {

inline constexpr const char* kRunMarkerName = ".chakrashim-run";
inline constexpr std::size_t kMaxRunIdBytes = 512;

struct FolderRun {
  bool marked = false;             // a marker is there (readable or not)
  std::string run;                 // its content; empty if unreadable
  bool holds_rank_files = false;   // rank-*.json* of anyone, .partial too
};

// What the folder at `dir` holds; all false where it is not there.
FolderRun read_folder_run(const std::string& dir);

// Whether a folder holding `f` belongs to another run than `run_id` (empty:
// this run has no id, and only a marked folder is another's).
//   ({marked, "a"}, "a") -> false   ({marked, "a"}, "b") -> true
//   ({rank files, unmarked}, "b") -> true   ({rank files, unmarked}, "") -> false
bool other_runs_folder(const FolderRun& f, const std::string& run_id);

struct MarkResult {
  bool ok = false;
  std::size_t removed = 0;  // another run's rank files removed (overwrite)
  std::string error;        // one line, when !ok
};

// Leaves `run_id` in the open folder `dir_fd` (shown as `dir`), or finds it
// there. Another run's marker: refused ("taken by another run since"), or
// with `overwrite` replaced, and that run's rank files removed first, as
// they are of the capture being replaced; so are the rank files of an
// unmarked folder this run marks with `overwrite`. A .partial whose writer
// is alive (publish.h, partial_state) is never removed: a rank of this run
// may have claimed it since.
MarkResult mark_folder_run(int dir_fd, const std::string& dir, const std::string& run_id, bool overwrite);

// Takes this run's marker away if it is all the folder holds (a window that
// wrote nothing), so that the empty folder can go.
void unmark_if_alone(int dir_fd);

}  // namespace chakrashim::files
