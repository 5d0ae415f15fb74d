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

namespace chakrashim::files {

struct PublishResult {
  bool ok = false;
  std::string error;  // one line: "<path>: <step>: <reason>"
};

// Checks a written .partial file; returns an empty string when it is valid,
// else why not.
using Validator = std::function<std::string(const std::string& partial_path)>;

// mkdir -p, mode 0777 & ~umask. Fails if a component is not a folder.
PublishResult make_dirs(const std::string& path);

// Writes final_path's .partial through `produce`, then finalizes it.
// `produce` returns false if it gave up (the file is then abandoned).
PublishResult publish_file(const std::string& final_path,
                           const std::function<bool(ByteSink&)>& produce,
                           const Validator& validate, bool overwrite);

// For a .partial that someone else wrote (torch's ET observer): validate,
// fsync, rename, fsync the folder. Removes the .partial on failure.
PublishResult finalize_partial(const std::string& partial, const std::string& final_path,
                               const Validator& validate, bool overwrite);

// Creates an empty .partial exclusively and closes it, to claim the name and
// to prove the folder is writable before anyone writes into it.
PublishResult claim_partial(const std::string& partial);

}  // namespace chakrashim::files
