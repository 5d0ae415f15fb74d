// Finds the per-rank file pairs of a capture (docs/design.md, output layout):
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

// The subfolders of `dir` (one level down) that hold JOB_chakra/ or
// JOB_kineto/ folders: where a capture is when `dir` holds none itself.
std::vector<std::string> capture_roots_below(const std::string& dir);

// Where a scan of `dir` found nothing, in one line for the user: what it
// found, and what was expected:
//   "no capture in /t: it holds 1 file (a.txt); expected JOB_chakra/ and JOB_kineto/ folders
//    (or step-S/ folders of them), or trace files, in it or one level down"
//   "no capture in /t itself (expected ...); captures one level down: /t/a; windows of
//    repeated or on-demand captures in /t/rep (give one of them)"
std::string nothing_found(const std::string& dir);

// What a file that is neither trace kind is, after its name:
//   "x/rank.0.et" -> "is a Chakra protobuf trace (what `chakrashim convert` writes ...), not a capture file"
//   "notes.txt"   -> "is not JSON, so neither an ET nor a device trace"
std::string describe_unknown_file(const std::string& path);

// A trace root that holds no capture itself but the windows of a repeated or
// triggered capture (docs/on-demand.md): TRACE_DIR/step-S/, each a capture of
// its own. Their paths in step order; empty for anything else.
//   "/t" with /t/step-2/0_chakra, /t/step-12/0_chakra -> {"/t/step-2", "/t/step-12"}
std::vector<std::string> window_folders(const std::string& dir);

// scan_directory, except that a trace root of windows (window_folders) is
// scanned window by window, each group labelled "step-S/JOB[.i]": every
// command takes every layout the shim writes (fixed, repeated, on demand,
// restarts).
ScanResult scan_capture(const std::string& dir);
ScanResult group_files(const std::vector<std::string>& paths);

}  // namespace chakrashim::tools
