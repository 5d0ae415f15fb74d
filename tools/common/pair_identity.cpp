#include "common/pair_identity.h"

#include <filesystem>

#include "chakrashim/trace_schema.h"
#include "common/capture_scan.h"

namespace chakrashim::tools {

namespace s = chakrashim::schema;

void note_et(PairIdentity& p, const std::string& et_path, const EtSummary& et) {
  p.et_pid = et.pid;
  p.et_rank = rank_from_file_name(std::filesystem::path(et_path).filename().string());
}

void note_device_event(PairIdentity& p, const TraceEvent& e) {
  // Host ops are recorded by the process itself; GPU events carry a device's
  // pid instead.
  if (!p.device_pid && (e.cat == s::kCatCpuOp || e.cat == s::kCatUserAnnotation)) p.device_pid = e.pid;
}

void note_device(PairIdentity& p, const TraceSummary& device) {
  p.device_from_chakrashim = device.chakrashim.has_value();
  if (!device.distributed_info || !device.distributed_info->is_object()) return;
  const auto it = device.distributed_info->find(s::kRank);
  if (it != device.distributed_info->end() && it->is_number_unsigned()) p.device_rank = it->get<std::uint64_t>();
}

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

std::string not_one_pair(const std::string& et_path, const std::string& device_path, const PairIdentity& p) {
  const std::string why = pair_mismatch(p);
  if (why.empty()) return why;
  return et_path + " and " + device_path + " are not one rank's pair: " + why;
}

}  // namespace chakrashim::tools
