#include "common/pair_identity.h"

namespace chakrashim::tools {

std::string pair_mismatch(const PairIdentity& p) {
  std::string why;
  const auto add = [&why](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  // torch's observer and the profiler both record the process's own pid.
  if (p.device_from_chakrashim && p.et_pid && p.device_pid && *p.device_pid >= 0 &&
      *p.et_pid != static_cast<std::uint64_t>(*p.device_pid)) {
    add("the ET was written by pid " + std::to_string(*p.et_pid) + ", the device trace by pid " +
        std::to_string(*p.device_pid));
  }
  if (p.et_rank && p.device_rank && *p.et_rank != *p.device_rank) {
    add("the ET is rank " + std::to_string(*p.et_rank) + "'s by its name, the device trace says rank " +
        std::to_string(*p.device_rank));
  }
  // Half or more of the ops missing: not the same window of the same process.
  if (p.et_rf_ids >= kPairMinRfIds && 2 * p.et_rf_ids_found < p.et_rf_ids) {
    add("only " + std::to_string(p.et_rf_ids_found) + " of the ET's " + std::to_string(p.et_rf_ids) +
        " rf_ids are in the device trace");
  }
  return why;
}

}  // namespace chakrashim::tools
