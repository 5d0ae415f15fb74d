// Interned strings for the device model: kernel names repeat thousands of
// times (and run to hundreds of characters), so each distinct name is kept
// once and GPU ops carry a 4-byte index.
//   intern("") -> 0 (always the empty string)   intern("k") -> 1, intern("k") -> 1
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace chakrashim::tools::link {

class NamePool {
 public:
  NamePool() { intern({}); }
  NamePool(const NamePool&) = delete;
  NamePool& operator=(const NamePool&) = delete;
  NamePool(NamePool&&) = default;
  NamePool& operator=(NamePool&&) = default;

  std::uint32_t intern(std::string_view text) {
    if (const auto it = index_.find(text); it != index_.end()) return it->second;
    // A deque never moves its elements, so the map's views stay valid.
    const auto& kept = names_.emplace_back(text);
    const auto id = static_cast<std::uint32_t>(names_.size() - 1);
    index_.emplace(std::string_view(kept), id);
    return id;
  }
  std::string_view at(std::uint32_t id) const { return names_[id]; }

 private:
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

}  // namespace chakrashim::tools::link
