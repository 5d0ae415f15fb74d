// Hash containers of std::string looked up by std::string_view (or a C
// string) without making a std::string first: on the op path a lookup that
// missed its pointer cache allocated a copy of the name (a backward node's
// or a user scope's, longer than the short-string buffer) only to find it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace chakrashim {

struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

using StringSet = std::unordered_set<std::string, StringViewHash, std::equal_to<>>;
template <typename Value>
using StringMap = std::unordered_map<std::string, Value, StringViewHash, std::equal_to<>>;

}  // namespace chakrashim
