// Decodes a Chakra protobuf .et (what convert, chakra_converter or any
// Chakra tool writes) into the nodes `chakrashim check` judges
// (check/et_file_rules.h): a GlobalMetadata record, then Node records, each
// preceded by its length as a varint. Only what ASTRA-sim's feeder and
// Workload read is kept: ids, names, types, deps, is_cpu_op, the comm
// attributes, and a METADATA node's process-group sizes.
#pragma once

#include <string>

#include "check/et_file_rules.h"

namespace chakrashim::tools::convert {

// Never throws; a file that does not decode has read_error set.
check::EtFile read_et_file(const std::string& path);

// The GlobalMetadata record only (the first few hundred bytes): rank, path
// and the window fields; nodes empty.
check::EtFile read_et_metadata(const std::string& path);

// The rank of "PREFIX.R.et" ("/t/0_et/rank.3.et" -> 3), or nullopt.
std::optional<std::uint64_t> et_file_rank(const std::string& path);

}  // namespace chakrashim::tools::convert
