// Output naming (docs/design.md section 1), pure: NeMo's JOB_chakra/ and
// JOB_kineto/ folders, new sibling folders (.1, .2, ...) instead of
// overwriting, and the .partial name of a file being written.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

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
};

struct Layout {
  std::uint64_t index = 0;
  std::string host_dir, device_dir;    // .../JOB_chakra[.i], .../JOB_kineto[.i]
  std::string host_path, device_path;  // final file names in them
};

// The folder index is the smallest i >= restart_count for which this rank's
// file (final or .partial, plain or .gz) exists in neither folder of index i.
// Each rank decides alone, and every rank of one run gets the same answer.
// With overwrite, i = restart_count. `exists` is asked about file paths only.
// Returns nullopt if the 10000 indexes from restart_count on are all taken.
std::optional<Layout> choose_layout(const LayoutRequest& request,
                                    const std::function<bool(const std::string&)>& exists);

}  // namespace chakrashim::files
