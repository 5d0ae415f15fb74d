// Writing one trigger into a job's control folder so that a rank listing
// the folder sees a whole document or nothing: a temporary name that starts
// with '.' (ranks look only at trigger-*.json), fsync, then rename.
#pragma once

#include <cstdint>
#include <string>

#include "files/on_demand_files.h"

namespace chakrashim::tools::trigger {

struct WriteResult {
  bool ok = false;
  std::string path;   // the trigger's final path
  std::string error;  // what failed, with the path: one line
};

// Writes `trigger` as DIR/trigger_file_name(time_ns, pid).
WriteResult write_trigger(const std::string& dir, const window::Trigger& trigger, std::int64_t time_ns,
                          std::int64_t pid);

// "alice@node7": who asked, for the ranks' log line. The user name from the
// password database (else $USER, else the uid), the host from gethostname.
std::string requester();

}  // namespace chakrashim::tools::trigger
