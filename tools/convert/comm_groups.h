// Process groups for ASTRA-sim's communicator-group file
// (--comm-group-configuration): read from the ET's "## process_group:init ##"
// node as the converter writes its inputs (Python's str() of a list holding
// torch's JSON text), and written as ASTRA-sim's Workload reads it: a JSON
// object from the group's id (the collectives' pg_name, an integer) to its
// ranks.
//   "['[{\"pg_name\": \"0\", \"ranks\": [], \"group_size\": 2}, {\"pg_name\": \"1\", \"ranks\": [0, 1]}]']"
//     -> groups 0 (ranks 0,1: an empty list is every rank) and 1 (0,1)
//     -> {"1": [0, 1]}   (group 0 is ASTRA-sim's default: every rank)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::tools::convert {

struct ProcessGroup {
  std::string name;  // pg_name: "0", "1", ...
  std::string desc;  // pg_desc: "default_pg", ...
  std::vector<std::uint64_t> ranks;  // empty: every rank
  std::uint64_t size = 0;            // group_size, 0 when absent
};

// nullopt when the text is not that list (or holds no group).
std::optional<std::vector<ProcessGroup>> process_groups_of(std::string_view values_text);

// The inputs' values of a node's encoded tail (et_encoding.h), or "".
std::string inputs_values_of(std::string_view tail);

// The file's text; groups whose name is not an integer are left out (ASTRA-sim
// reads names with std::stoi), as is the default group "0". `world` fills
// an empty rank list.
std::string comm_group_json(const std::vector<ProcessGroup>& groups, std::uint64_t world);

}  // namespace chakrashim::tools::convert
