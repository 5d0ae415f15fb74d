#include "check/rank_rules.h"

#include <algorithm>
#include <iterator>

#include "chakrashim/trace_schema.h"
#include "check/step_match.h"
#include "common/missing_ranks.h"
#include "common/tool_schema.h"

namespace chakrashim::tools::check {

namespace s = chakrashim::schema;
using nlohmann::json;

namespace {

std::optional<std::uint64_t> u64_at(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return std::nullopt;
  return it->get<std::uint64_t>();
}

std::optional<std::string> string_at(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

const json& object_at(const json& obj, std::string_view key) {
  static const json kEmpty = json::object();
  const auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

std::string plural(std::uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void et_schema_rules(const EtInput& in, std::vector<Finding>& out) {
  const EtSummary& sum = *in.summary;
  std::string missing;
  for (const auto key : names::kEtTopLevelKeys) {
    if (key == names::kEtFinishTs) continue;  // et.finalized reports it
    if (std::find(sum.top_keys.begin(), sum.top_keys.end(), key) != sum.top_keys.end()) continue;
    missing += missing.empty() ? "" : ", ";
    missing += key;
  }
  if (!missing.empty()) out.push_back({RuleId::et_fields, in.path + " lacks top-level " + missing});
  if (!sum.schema) return;
  if (!listed(names::kConverterSchemas, *sum.schema)) {
    const bool linker = listed(names::kLinkerSchemas, *sum.schema);
    std::string writer = "no torch release chakrashim knows";
    for (const auto& w : names::kEtSchemaWriters)
      if (w.schema == *sum.schema) writer = std::string(w.torch);
    out.push_back({RuleId::et_schema,
                   in.path + " has schema " + *sum.schema + " (written by " + writer + "), which chakra_converter" +
                       (linker ? "" : " and chakra_trace_link") +
                       " will refuse: the converter parses nodes only of 1.0.2, 1.0.3, 1.1.0 and 1.1.1, "
                       "each with the -chakra.0.0.4 suffix; capture under torch 2.5 or later"});
  }
}

}  // namespace

std::string step_list(const std::vector<std::uint64_t>& steps) {
  // Runs of consecutive steps as ranges, as ranks are (issue #49: a
  // 100-step window listed every step): {3,4,5,8} -> "3-5,8".
  return steps.empty() ? "none" : rank_ranges(steps);
}

std::optional<CaptureMeta> parse_meta(const json& object) {
  if (!object.is_object()) return std::nullopt;
  CaptureMeta meta;
  const json& steps = object_at(object, s::kMetaSteps);
  meta.partial_last_step = u64_at(steps, s::kMetaPartialLastStep);
  if (const auto it = steps.find(s::kMetaCaptured); it != steps.end() && it->is_array()) {
    for (const auto& v : *it)
      if (v.is_number_unsigned()) meta.captured.push_back(v.get<std::uint64_t>());
  }
  if (const auto it = steps.find(s::kMetaCutShort); it != steps.end() && it->is_boolean())
    meta.cut_short = it->get<bool>();
  meta.reason = string_at(steps, s::kMetaReason).value_or("");
  if (const auto it = steps.find(s::kMetaMerged); it != steps.end() && it->is_array()) {
    for (const auto& m : *it) {
      const auto step = u64_at(m, s::kMetaMergedStep), n = u64_at(m, s::kMetaMergedIterations);
      if (step && n) meta.merged.push_back({*step, *n, string_at(m, s::kMetaMergedWhy).value_or("")});
    }
  }
  const json& ranks = object_at(object, s::kMetaRanks);
  meta.world_size = u64_at(ranks, s::kWorldSize);
  meta.run = string_at(ranks, s::kMetaRun);
  meta.ranks_filter = string_at(ranks, s::kMetaFilter);
  meta.host_trace = string_at(object, s::kMetaHostTrace);
  const json& device = object_at(object, s::kMetaDeviceTrace);
  meta.dropped_records = u64_at(device, s::kMetaDroppedRecords).value_or(0);
  meta.cupti = string_at(device, s::kMetaCupti);
  if (const auto it = device.find(s::kMetaTruncatedAt); it != device.end()) meta.truncated = !it->is_null();
  return meta;
}

void et_rules(const EtInput& in, RankFigures& figures, std::vector<Finding>& out) {
  if (!in.read_error.empty()) {
    out.push_back({RuleId::files_unreadable, in.path + ": " + in.read_error});
    return;
  }
  const EtSummary& sum = *in.summary;
  figures.et_schema = sum.schema;
  figures.et_nodes = in.facts->nodes();
  figures.et_op_nodes = in.facts->op_nodes();
  if (in.gzip) out.push_back({RuleId::et_gzip, in.path + " is gzip-compressed"});
  if (!sum.parse.ok && !sum.parse.truncated) {
    out.push_back({RuleId::et_json, in.path + " is not valid JSON (" + sum.parse.error + ")"});
    return;
  }
  const bool has_finish = std::find(sum.top_keys.begin(), sum.top_keys.end(), names::kEtFinishTs) !=
                          sum.top_keys.end();
  if (sum.parse.truncated) {
    out.push_back({RuleId::et_finalized, in.path + " ends after " + plural(sum.nodes, "node") +
                                             " without its root node 1 and finish_ts"});
  } else if (!has_finish || !in.facts->has_root()) {
    std::string what = !has_finish && !in.facts->has_root() ? "no finish_ts and no root node 1"
                       : !has_finish                        ? "no finish_ts"
                                                            : "no root node 1";
    out.push_back({RuleId::et_finalized, in.path + " has " + what});
  }
  // A cut-off file lacks its later keys for that reason alone.
  if (!sum.parse.truncated) et_schema_rules(in, out);
  if (const auto n = in.facts->nodes_missing_attrs(); n > 0) {
    out.push_back({RuleId::et_attrs, in.path + ": " + plural(n, "node") + " without all seven attrs, e.g. " +
                                         in.facts->missing_attrs_example()});
  }
  const std::uint64_t ids = in.facts->duplicate_ids(), rf_ids = in.facts->duplicate_rf_ids();
  if (ids + rf_ids > 0) {
    std::string what;
    if (ids) what = plural(ids, "repeated node id");
    if (rf_ids) what += (what.empty() ? "" : " and ") + plural(rf_ids, "repeated op rf_id");
    out.push_back({RuleId::et_duplicates, in.path + ": " + what + ", e.g. " + in.facts->duplicate_example()});
  }
  if (const auto n = in.facts->orphans(); n > 0)
    out.push_back({RuleId::et_parent_missing, in.path + ": " + plural(n, "node") +
                                                  " name a parent that is not in the file, e.g. " +
                                                  in.facts->orphan_example()});
  if (const auto problem = step_order_problem(in.facts->profiler_steps()); !problem.empty())
    out.push_back({RuleId::steps_profiler_step, in.path + ": ProfilerStep#N nodes by id " + problem});
}

}  // namespace chakrashim::tools::check
