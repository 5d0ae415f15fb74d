#include "convert/comm_groups.h"

#include <nlohmann/json.hpp>

#include "convert/chakra_et.pb.h"

namespace chakrashim::tools::convert {

namespace {

bool integer_name(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (const char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::optional<std::vector<ProcessGroup>> process_groups_of(std::string_view text) {
  // As ASTRA-sim's issue_pytorch_pg_metadata reads it: less "['" and "']".
  if (text.size() < 4 || text.substr(0, 2) != "['" || text.substr(text.size() - 2) != "']") return std::nullopt;
  const auto doc = nlohmann::json::parse(text.substr(2, text.size() - 4), nullptr, false);
  if (!doc.is_array() || doc.empty()) return std::nullopt;
  std::vector<ProcessGroup> out;
  for (const auto& item : doc) {
    if (!item.is_object() || !item.contains("pg_name") || !item["pg_name"].is_string()) return std::nullopt;
    ProcessGroup g;
    g.name = item["pg_name"].get<std::string>();
    if (item.contains("pg_desc") && item["pg_desc"].is_string()) g.desc = item["pg_desc"].get<std::string>();
    if (item.contains("group_size") && item["group_size"].is_number_unsigned())
      g.size = item["group_size"].get<std::uint64_t>();
    if (item.contains("ranks") && item["ranks"].is_array()) {
      for (const auto& r : item["ranks"])
        if (r.is_number_unsigned()) g.ranks.push_back(r.get<std::uint64_t>());
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string inputs_values_of(std::string_view tail) {
  et::Node n;
  if (!n.ParseFromArray(tail.data(), static_cast<int>(tail.size()))) return {};
  return n.inputs().values();
}

std::string comm_group_json(const std::vector<ProcessGroup>& groups, std::uint64_t world) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const ProcessGroup& g : groups) {
    if (!integer_name(g.name) || g.name == "0") continue;
    std::vector<std::uint64_t> ranks = g.ranks;
    if (ranks.empty()) {
      for (std::uint64_t r = 0; r < world; ++r) ranks.push_back(r);
    }
    doc[g.name] = ranks;
  }
  return doc.dump() + "\n";
}

}  // namespace chakrashim::tools::convert
