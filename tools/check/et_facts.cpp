#include "check/et_facts.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "check/device_facts.h"
#include "common/tool_schema.h"

namespace chakrashim::tools::check {

namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// "rf_id, scope" for the attrs a node lacks.
std::string missing_attr_list(std::uint8_t mask) {
  std::string out;
  for (std::size_t i = 0; i < names::kEtRequiredAttrs.size(); ++i) {
    if ((mask & (1u << i)) != 0) continue;
    if (!out.empty()) out += ", ";
    out += names::kEtRequiredAttrs[i];
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> world_size_of_process_groups(std::string_view pg_config_json) {
  const auto groups = nlohmann::json::parse(pg_config_json, nullptr, false);
  if (!groups.is_array()) return std::nullopt;
  for (const auto& g : groups) {
    if (!g.is_object()) continue;
    const auto name = g.find(names::kPgName), size = g.find(names::kPgGroupSize);
    if (name == g.end() || !name->is_string() || name->get_ref<const std::string&>() != names::kDefaultPgName) continue;
    if (size == g.end() || !size->is_number_unsigned() || size->get<std::uint64_t>() == 0) return std::nullopt;
    return size->get<std::uint64_t>();
  }
  return std::nullopt;
}

void EtFacts::add(const EtNode& node) {
  ++nodes_;
  if (node.process_groups && !world_size_) world_size_ = world_size_of_process_groups(*node.process_groups);
  const std::uint64_t id = node.id.value_or(0);
  if (id == names::kEtRootId) has_root_ = true;
  constexpr std::uint8_t kAll = (1u << names::kEtRequiredAttrs.size()) - 1;
  if (node.attr_mask != kAll) {
    if (missing_attrs_++ == 0) {
      missing_attrs_example_ = "node " + std::to_string(id) + " (" + node.name + ") lacks " +
                               missing_attr_list(node.attr_mask);
    }
  }
  const bool structural = starts_with(node.name, names::kEtStructuralPrefix) ||
                          node.name == names::kEtProcessGroupName;
  if (!structural) op_rf_ids_.push_back(node.rf_id.value_or(0));
  const bool marker = !structural && starts_with(node.name, step_marker_);
  links_.push_back({id, node.parent.value_or(0), marker});
  if (marker) markers_.push_back({id, node.rf_id.value_or(0)});
  if (const auto step = profiler_step_number(node.name)) step_nodes_.emplace_back(id, *step);
}

bool EtFacts::is_outermost(const Link& node) const {
  // Walk the ctrl_deps chain; the bound stops a cycle in a damaged file.
  std::uint64_t parent = node.parent;
  for (std::size_t hops = 0; hops < links_.size() && parent != 0; ++hops) {
    const auto it = std::lower_bound(links_.begin(), links_.end(), parent,
                                     [](const Link& l, std::uint64_t id) { return l.id < id; });
    if (it == links_.end() || it->id != parent || it->parent == it->id) return true;
    if (it->marker) return false;
    parent = it->parent;
  }
  return true;
}

void EtFacts::finish() {
  std::sort(op_rf_ids_.begin(), op_rf_ids_.end());
  std::sort(links_.begin(), links_.end(), [](const Link& a, const Link& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < links_.size(); ++i) {
    if (links_[i].id != links_[i - 1].id) continue;
    if (duplicate_ids_++ == 0) duplicate_example_ = "node id " + std::to_string(links_[i].id);
  }
  for (std::size_t i = 1; i < op_rf_ids_.size(); ++i) {
    if (op_rf_ids_[i] == 0 || op_rf_ids_[i] != op_rf_ids_[i - 1]) continue;
    if (duplicate_rf_ids_++ == 0 && duplicate_example_.empty())
      duplicate_example_ = "rf_id " + std::to_string(op_rf_ids_[i]);
  }
  const auto find = [&](std::uint64_t id) {
    const auto it = std::lower_bound(links_.begin(), links_.end(), id,
                                     [](const Link& l, std::uint64_t v) { return l.id < v; });
    return it != links_.end() && it->id == id;
  };
  for (const auto& l : links_) {
    if (l.parent == 0 || l.parent == l.id || find(l.parent)) continue;
    if (orphans_++ == 0)
      orphan_example_ = "node " + std::to_string(l.id) + " names parent " + std::to_string(l.parent);
  }
  for (const auto& m : markers_) {
    const auto it = std::lower_bound(links_.begin(), links_.end(), m.id,
                                     [](const Link& l, std::uint64_t id) { return l.id < id; });
    if (it != links_.end() && it->id == m.id && is_outermost(*it)) outermost_.push_back(m);
  }
  links_.clear();
  links_.shrink_to_fit();
  markers_.clear();
  std::stable_sort(step_nodes_.begin(), step_nodes_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [id, step] : step_nodes_) profiler_steps_.push_back(step);
  step_nodes_ = {};
}

}  // namespace chakrashim::tools::check
