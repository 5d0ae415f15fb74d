// Small control files (docs/on-demand.md: step.json, triggers, missed
// notes), shared by the bridge and `chakrashim trigger`: read whole, up to a
// size cap; written whole under a temporary name that starts with '.', then
// renamed over the final name, so that a reader sees the old document or the
// new one, never a part (on NFS and Lustre too, where appending is not atomic).
// Trace files go through publish.h instead.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace chakrashim::files {

// The file's bytes, or nullopt with `error` (strerror, or "larger than N
// bytes"). `open_errno`, when given, is set to open()'s errno if the open
// failed (ENOENT: no such file), else to 0.
std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes,
                                           std::string& error, int* open_errno = nullptr);

// Writes `text` to dir/.NAME.tmp, then renames it to dir/NAME, replacing any.
// `durable`: fsync the file before the rename and the folder after it. On
// failure the temporary file is removed and `error` says, e.g.
//   "cannot write /t/.x.json.tmp: File too large"
bool replace_file(const std::string& dir, const std::string& name, const std::string& text,
                  bool durable, std::string& error);

}  // namespace chakrashim::files
