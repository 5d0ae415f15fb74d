// Whether a host ET and a device trace can be one rank's pair: the same
// process wrote both (pid), they name the same rank, and the ET's ops are
// the device trace's (rf_id overlap). `link` checks the two files it is
// given, `check` each pair it finds or is given: nothing else would tell
// two files of other ranks or processes from a true pair. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/et_reader.h"
#include "common/trace_event.h"
#include "common/trace_reader.h"

namespace chakrashim::tools {

struct PairIdentity {
  std::optional<std::uint64_t> et_pid;      // the ET's "pid"
  std::optional<std::int64_t> device_pid;   // the pid of the device trace's host ops
  std::optional<std::uint64_t> et_rank;     // from the ET's file name (rank-R.json)
  std::optional<std::uint64_t> device_rank; // distributedInfo's rank
  std::uint64_t et_rf_ids = 0;              // ET op nodes with an rf_id
  std::uint64_t et_rf_ids_found = 0;        // of those, found as a Record function id
  // The device trace has chakrashim's metadata: it was written in the same
  // process as the ET, its pid from the same getpid(). Other writers' pids
  // can differ for one true pair (PID namespaces; sanitized fixtures), so
  // pids are compared only on chakrashim captures.
  bool device_from_chakrashim = false;
};

// The facts each file gives, taken the same way by every tool that pairs
// files (the rf_id counts are each tool's own: they come from its join).
void note_et(PairIdentity& p, const std::string& et_path, const EtSummary& et);
// For each device event as it streams by: the first host op gives the pid.
void note_device_event(PairIdentity& p, const TraceEvent& e);
void note_device(PairIdentity& p, const TraceSummary& device);

// Below this many ET rf_ids the overlap says nothing either way.
inline constexpr std::uint64_t kPairMinRfIds = 20;

// Empty when the two may be one rank's; else why they clearly are not:
//   pids 100 / 200 -> "the ET was written by pid 100, the device trace by pid 200"
// Each fact is compared only when both files give it.
std::string pair_mismatch(const PairIdentity& p);

// The same verdict as one line naming both files, as link and check print it:
//   "a/rank-0.json and b/rank-0.json are not one rank's pair: the ET was written by ..."
// Empty when the two may be one rank's.
std::string not_one_pair(const std::string& et_path, const std::string& device_path, const PairIdentity& p);

}  // namespace chakrashim::tools
