// Finds the per-rank file pairs of a capture (docs/design.md section 1):
//   ROOT/JOB_chakra[.i]/rank-R.json        the host ET
//   ROOT/JOB_kineto[.i]/rank-R.json[.gz]   the device trace
// and the .partial files a writer left behind. The argument may be ROOT, one
// of those folders, any other folder of trace files, or a list of files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrashim::tools {

enum class FileKind { host, device, unknown };

struct RankFiles {
  std::uint64_t rank = 0;
  bool rank_from_name = true;  // false: the name gave none and 0 is a guess
  std::optional<std::string> host_path, device_path;
};

struct PartialFile {
  std::optional<std::uint64_t> rank;  // from rank-R.json[.gz].partial
  std::string path;
};

// One run's pair of folders, or one set of loose files.
struct CaptureGroup {
  std::string label;  // "JOB" or "JOB.i"; empty for loose files
  std::string host_dir, device_dir;  // empty when that folder does not exist
  std::vector<RankFiles> ranks;      // sorted by rank
  std::vector<PartialFile> partials;
  std::vector<std::string> unknown;  // files that are neither kind
};

struct ScanResult {
  std::vector<CaptureGroup> groups;
  std::string error;  // set when the argument cannot be read at all
};

//   "0_chakra" -> {"0", host, 0}   "77_kineto.2" -> {"77", device, 2}   "x" -> nullopt
struct FolderName {
  std::string job;
  FileKind kind = FileKind::unknown;
  std::uint64_t index = 0;
};
std::optional<FolderName> parse_folder_name(const std::string& name);

// The rank a file name gives:
//   "rank-3.json" / "rank-3.json.gz.partial" -> 3   "device.0.json.gz" -> 0
//   "trace_12.json" -> 12   "kineto.json" -> nullopt
std::optional<std::uint64_t> rank_from_file_name(const std::string& name);
bool is_partial_name(const std::string& name);

// What a trace file holds, from the first top-level keys of its head: a
// device trace opens with schemaVersion/deviceProperties/distributedInfo/
// traceEvents, an ET with schema/pid/time/start_ts/nodes.
FileKind sniff_kind(const std::string& path);

ScanResult scan_directory(const std::string& dir);
ScanResult group_files(const std::vector<std::string>& paths);

}  // namespace chakrashim::tools
