// pair_rules() and identity_rule() of rank_rules.h: the ET against the device
// trace.
#include <algorithm>
#include <cstdio>
#include <iterator>

#include "check/rank_rules.h"
#include "check/step_match.h"

namespace chakrashim::tools::check {

namespace {

void join_rule(const EtFacts& et, const DeviceFacts& device, RankFigures& figures, std::vector<Finding>& out) {
  const std::uint64_t total = et.op_nodes();
  const std::uint64_t matched = device.et_ops_matched();
  figures.join_matched = matched;
  figures.join_total = total;
  if (total == 0) return;
  const double share = static_cast<double>(matched) / static_cast<double>(total);
  if (share >= kJoinCoverageThreshold) return;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * share);
  out.push_back({RuleId::join_rf_id, "only " + std::to_string(matched) + " of " + std::to_string(total) +
                                         " ET op nodes (" + pct + ") find their rf_id as a Record function id"});
}

void steps_rule(const EtFacts& et, const DeviceFacts& device, const std::optional<CaptureMeta>& meta,
                const std::string& marker, RankFigures& figures, std::vector<Finding>& out) {
  if (device.steps.empty()) return;  // device.profiler_step says it already
  // Two spans for one step, or interleaved numbers: which span holds a
  // marker says nothing, and steps.profiler_step names the cause.
  if (!step_order_problem(device.steps_by_time()).empty()) return;
  const StepComparison c = compare_steps(et.outermost_markers(), device.marker_hits, device.steps);
  const std::string dev = "the device trace holds steps " + step_list(c.device_steps);
  if (c.markers == 0) {
    // Cut inside its first step: the device trace holds only that partial
    // step, and the ET no completed one. The metadata says so.
    if (meta && meta->partial_last_step && c.device_steps.size() == 1 &&
        c.device_steps[0] == *meta->partial_last_step)
      return;
    out.push_back({RuleId::steps_match, "the ET has no outermost '" + marker + "' node (another marker? see --step-marker); " + dev});
    return;
  }
  if (c.by_count()) {
    if (c.markers != c.device_steps.size()) {
      out.push_back({RuleId::steps_match, "the ET has " + std::to_string(c.markers) + " outermost '" + marker +
                                              "' nodes, none joined by rf_id; " + dev});
    }
    return;
  }
  figures.steps_et = c.et_steps;
  std::vector<std::uint64_t> diff;
  std::set_symmetric_difference(c.et_steps.begin(), c.et_steps.end(), c.device_steps.begin(),
                                c.device_steps.end(), std::back_inserter(diff));
  // The metadata explains one difference: the step the window ended inside.
  if (meta && meta->partial_last_step && diff.size() == 1 && diff[0] == *meta->partial_last_step) diff.clear();
  if (diff.empty() && c.markers_outside == 0) return;
  std::string detail = "the ET holds steps " + step_list(c.et_steps) + ", " + dev;
  if (c.markers_outside > 0)
    detail += "; " + std::to_string(c.markers_outside) + " ET step marker(s) lie outside every ProfilerStep#N";
  out.push_back({RuleId::steps_match, detail});
}

// Every op the ET records has a span in the device trace (both are taken by
// the same callbacks over the same steps), so an ET with many more op nodes
// than the device trace has spans is not the record of the same ops.
void op_count_rule(const EtFacts& et, const DeviceFacts& device, std::vector<Finding>& out) {
  const std::uint64_t ops = et.op_nodes(), spans = device.host_spans;
  if (static_cast<double>(ops) <= kOpCountFactor * static_cast<double>(spans) + kOpCountSlack) return;
  out.push_back({RuleId::join_op_count, "the ET has " + std::to_string(ops) + " op nodes, the device trace " +
                                            std::to_string(spans) + " host spans"});
}

}  // namespace

void identity_rule(const std::string& et_path, const std::string& device_path, PairIdentity id, const EtFacts& et,
                   const DeviceFacts& device, std::vector<Finding>& out) {
  const auto& rf_ids = et.op_rf_ids();  // sorted: nodes without an rf_id (0) first
  const auto first_rf_id = std::upper_bound(rf_ids.begin(), rf_ids.end(), std::uint64_t{0});
  id.et_rf_ids = static_cast<std::uint64_t>(rf_ids.end() - first_rf_id);
  id.et_rf_ids_found = device.et_ops_matched();
  std::string line = not_one_pair(et_path, device_path, id);
  if (!line.empty()) out.push_back({RuleId::pair_mismatch, std::move(line)});
}

std::optional<std::vector<std::uint64_t>> torch_last_cycle(const EtFacts& et, const DeviceFacts& device,
                                                           const std::optional<CaptureMeta>& meta) {
  if (meta) return std::nullopt;
  std::vector<std::uint64_t> in_et = et.profiler_steps(), in_device = device.steps_by_time();
  std::sort(in_et.begin(), in_et.end());
  std::sort(in_device.begin(), in_device.end());
  in_et.erase(std::unique(in_et.begin(), in_et.end()), in_et.end());
  in_device.erase(std::unique(in_device.begin(), in_device.end()), in_device.end());
  // The device trace's steps are the ET's last ones: the schedule's last
  // cycle (a device trace that lost another step is something else).
  if (in_device.empty() || in_et.size() <= in_device.size() ||
      !std::equal(in_device.begin(), in_device.end(), in_et.end() - static_cast<std::ptrdiff_t>(in_device.size())))
    return std::nullopt;
  return in_et;
}

void pair_rules(const EtFacts& et, const DeviceFacts& device, const std::optional<CaptureMeta>& meta,
                const std::string& step_marker, RankFigures& figures, std::vector<Finding>& out) {
  if (const auto et_steps = torch_last_cycle(et, device, meta)) {
    std::vector<std::uint64_t> dev = device.steps_by_time();
    std::sort(dev.begin(), dev.end());
    figures.steps_et = *et_steps;
    out.push_back({RuleId::steps_match,
                   "the ET holds steps " + step_list(*et_steps) + " (its ProfilerStep#N nodes), the device trace "
                   "only " + step_list(dev) + ": the device trace is the last cycle of a torch.profiler schedule "
                   "(on_trace_ready writes each cycle over the one before; NeMo's chakra_profile with "
                   "active_steps=1) while its ExecutionTraceObserver recorded every step; make the schedule's "
                   "active steps cover the window (NeMo: active_steps = end_step - start_step + 1), or capture "
                   "with chakrashim (docs/nemo.md)"});
    return;
  }
  join_rule(et, device, figures, out);
  op_count_rule(et, device, out);
  steps_rule(et, device, meta, step_marker, figures, out);
}

}  // namespace chakrashim::tools::check
