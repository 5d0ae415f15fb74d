// "Did you mean": the known name closest to a mistyped one, by edit
// distance. Used for unknown CHAKRA_* variables (config.cpp) and for
// unknown command-line options (tools/, scripts/chakra-run via
// `chakrashim config --suggest`). Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace chakrashim::config {

// Levenshtein distance: ("--strcit", "--strict") -> 2
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `name` when it is fewer than `max_distance` edits
// away (the first on a tie); nullopt otherwise.
//   ("--jsn", {"--json", "--html"}) -> "--json"   ("--zzzzzz", ...) -> nullopt
std::optional<std::string_view> nearest_name(std::string_view name, const std::vector<std::string_view>& candidates,
                                             std::size_t max_distance = 3);

}  // namespace chakrashim::config
