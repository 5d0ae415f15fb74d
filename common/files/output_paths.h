// Output naming (docs/design.md section 1), pure: NeMo's JOB_chakra/ and
// JOB_kineto/ folders, new sibling folders (.1, .2, ...) instead of
// overwriting, and the .partial name of a file being written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "files/unique_fd.h"

namespace chakrashim::files {

enum class TraceKind { host, device };  // JOB_chakra/ and JOB_kineto/

//   ("123", host, 0) -> "123_chakra"   ("0", device, 2) -> "0_kineto.2"
std::string folder_name(const std::string& job_id, TraceKind kind, std::uint64_t index);
//   (3, false) -> "rank-3.json"   (3, true) -> "rank-3.json.gz"
std::string rank_file_name(std::uint64_t rank, bool gzip);
//   "/t/0_chakra/rank-0.json" -> "/t/0_chakra/rank-0.json.partial"
std::string partial_path(const std::string& final_path);

struct LayoutRequest {
  std::string root;  // CHAKRA_TRACE_DIR, absolute
  std::string job_id;
  std::uint64_t rank = 0;
  std::uint64_t restart_count = 0;  // TORCHELASTIC_RESTART_COUNT
  bool gzip = false;                // the device trace only; the ET stays plain
  bool overwrite = false;
  // The run's id (run_marker.h); empty: none known, and folders are told
  // apart by this rank's own file only.
  std::string run_id;
};

struct Layout {
  std::uint64_t index = 0;
  std::string host_dir, device_dir;    // .../JOB_chakra[.i], .../JOB_kineto[.i]
  std::string host_path, device_path;  // final file names in them
  // Folders passed over because they are not ours to write (see
  // choose_layout), as one line for the log; empty when none was.
  std::string passed_over;
  // The two folders, opened without following a link once made
  // (output_dirs.h); null before, or for a folder not written.
  std::shared_ptr<const UniqueFd> host_fd, device_fd;
  // The claimed .partial files, open with their write lock while the window
  // records (publish.h, lock_for_writing): closed once written, so that
  // check tells a capture in progress from a leftover.
  std::shared_ptr<UniqueFd> host_claim, device_claim;
  // From the request: the run's id, left in each folder made (run_marker.h).
  std::string run_id;
  bool overwrite = false;
  // Another run's rank files removed by overwrite, for the log.
  std::size_t replaced_files = 0;
};

// Why a folder that is there is not ours to write into ("is a symbolic
// link", "belongs to uid 1001"), or empty when it is ours or not there.
using FolderRefusal = std::function<std::string(const std::string& dir)>;
// Whether a folder that is there belongs to another run than the request's
// (run_marker.h, read_folder_run and other_runs_folder).
using OtherRunsFolder = std::function<bool(const std::string& dir)>;

// The folder index is the smallest i >= restart_count for which this rank's
// file (final or .partial, plain or .gz) exists in neither folder of index i,
// neither folder belongs to another run, and neither is refused. Each rank
// decides alone, and every rank of one run gets the same answer: another
// run's folder is passed over by all of them, whichever ranks it holds.
// With overwrite, i = restart_count, or the first index from it whose
// folders are not refused (another run's files there are replaced).
// `exists` is asked about file paths only. Returns nullopt if the 10000
// indexes from restart_count on are all taken.
std::optional<Layout> choose_layout(const LayoutRequest& request,
                                    const std::function<bool(const std::string&)>& exists,
                                    const FolderRefusal& refused = {},
                                    const OtherRunsFolder& other_run = {});

}  // namespace chakrashim::files
