// The per-rank rules of docs/trace-format.md, pure: what the readers and facts
// found in: findings out. One function per file and one for the pair.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "check/device_facts.h"
#include "check/et_facts.h"
#include "check/findings.h"
#include "common/et_reader.h"
#include "common/pair_identity.h"
#include "common/trace_reader.h"

namespace chakrashim::tools::check {

struct EtInput {
  std::string path;  // as printed
  bool gzip = false;
  std::string read_error;  // the OS's or zlib's, when reading failed
  const EtSummary* summary = nullptr;
  const EtFacts* facts = nullptr;
};

struct DeviceInput {
  std::string path;
  std::string read_error;
  const TraceSummary* summary = nullptr;
  const DeviceFacts* facts = nullptr;
  std::optional<std::uint64_t> hta_rank;  // the first match of HTA's regex
  // The rank the file must read as: from its name, else distributedInfo.
  std::optional<std::uint64_t> expected_rank;
};

// Our chakrashim object -> CaptureMeta; nullopt when it is not an object.
std::optional<CaptureMeta> parse_meta(const nlohmann::json& object);

void et_rules(const EtInput& in, RankFigures& figures, std::vector<Finding>& out);
void device_rules(const DeviceInput& in, const std::optional<CaptureMeta>& meta,
                  RankFigures& figures, std::vector<Finding>& out);
// The join and the steps; both files parsed.
// A pair torch.profiler wrote (no chakrashim metadata) whose device trace
// holds the last cycle of its schedule only, while its ET observer recorded
// every step: the ET's ProfilerStep#N numbers, a strict superset of the
// device trace's (NeMo's chakra_profile with its default active_steps=1:
// on_trace_ready writes each cycle over the one before; issue #49). Then
// one steps.match error says so, in place of the rf_id and op-count
// findings, which are only its consequences. The ET's step numbers, else
// nullopt.
std::optional<std::vector<std::uint64_t>> torch_last_cycle(const EtFacts& et, const DeviceFacts& device,
                                                           const std::optional<CaptureMeta>& meta);

void pair_rules(const EtFacts& et, const DeviceFacts& device, const std::optional<CaptureMeta>& meta,
                const std::string& step_marker, RankFigures& figures, std::vector<Finding>& out);

// pair.mismatch: files paired by their names or folders that are clearly
// not one rank's (another rank's or another process's; pair_identity.h).
// `id` holds what each file said of itself; the rf_id overlap is taken from
// the join. Paths as printed.
void identity_rule(const std::string& et_path, const std::string& device_path, PairIdentity id, const EtFacts& et,
                   const DeviceFacts& device, std::vector<Finding>& out);

// "3,4,5" for {3,4,5}; "none" for {}.
// {3,4,5,8} -> "3-5,8"; {} -> "none"
std::string step_list(const std::vector<std::uint64_t>& steps);

}  // namespace chakrashim::tools::check
