#include "report/report_json.h"

#include "report/kernel_kind.h"

namespace chakrashim::tools::report {

namespace {

using nlohmann::ordered_json;

ordered_json steps_json(const RankStats& r) {
  ordered_json steps = ordered_json::array();
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const auto& s = r.steps[i];
    ordered_json phases = ordered_json::object();
    for (int p = 0; p < kPhases && i < r.phases.size(); ++p)
      phases[std::string(phase_name(static_cast<Phase>(p))) + "_ns"] = r.phases[i][p];
    steps.push_back({{"step", s.step}, {"start_ns", s.start_ns}, {"dur_ns", s.dur_ns},
                     {"ops_self_ns", s.ops_self_ns}, {"outside_ops_ns", s.outside_ops_ns}, {"partial", s.partial}, {"iterations", s.iterations},
                     {"phases", std::move(phases)}});
  }
  return steps;
}

ordered_json waits_json(const CollectiveWaits& w) {
  ordered_json ranks = ordered_json::array();
  for (const auto& r : w.ranks) {
    ordered_json by_step = ordered_json::array();
    for (const auto& [step, ns] : r.waiting_by_step) by_step.push_back({{"step", step}, {"waiting_ns", ns}});
    ranks.push_back({{"rank", r.rank}, {"collectives", r.collectives}, {"arrived_last", r.arrived_last},
                     {"in_collectives_ns", r.in_collectives_ns}, {"waiting_ns", r.waiting_ns},
                     {"waiting_by_step", std::move(by_step)}});
  }
  return {{"matched", w.matched}, {"unmatched", w.matched ? ordered_json(nullptr) : ordered_json(w.unmatched)},
          {"ranks", std::move(ranks)}};
}

ordered_json ops_json(const RankStats& r, std::size_t top) {
  ordered_json ops = ordered_json::array();
  for (std::size_t i = 0; i < r.ops.size() && i < top; ++i) {
    const auto& t = r.ops[i].totals;
    ops.push_back({{"name", r.ops[i].name}, {"calls", t.calls}, {"self_ns", t.self_ns}, {"total_ns", t.total_ns},
                   {"in_steps_self_ns", t.in_steps_self_ns}});
  }
  return ops;
}

ordered_json gpu_json(const GpuStats& g) {
  ordered_json kinds = ordered_json::object();
  for (int k = 0; k < kGpuKinds; ++k) {
    kinds[std::string(kind_name(static_cast<GpuKind>(k)))] = {{"ns", g.kind_ns[k]}, {"ops", g.kind_ops[k]}};
  }
  return {{"devices", g.devices},
          {"ops", g.ops},
          {"window_ns", g.window_ns},
          {"busy_ns", g.busy_ns},
          {"busy_share", g.busy_share()},
          {"kinds", std::move(kinds)},
          {"communication_ns", g.comm_ns},
          {"overlap_ns", g.overlap_ns},
          {"overlap_share", g.overlap_share()},
          {"breakdown",
           {{"compute_ns", g.breakdown.compute_ns},
            {"exposed_communication_ns", g.breakdown.exposed_comm_ns},
            {"memory_only_ns", g.breakdown.memory_only_ns},
            {"idle_ns", g.breakdown.idle_ns}}}};
}

ordered_json rank_json(const RankStats& r, std::size_t top) {
  ordered_json j;
  j["group"] = r.group;
  j["rank"] = r.rank;
  j["device_trace"] = r.device_path;
  j["error"] = r.error.empty() ? ordered_json(nullptr) : ordered_json(r.error);
  j["events"] = r.events;
  j["steps"] = steps_json(r);
  j["step_time"] = {{"count", r.summary.count}, {"mean_ns", r.summary.mean_ns}, {"min_ns", r.summary.min_ns},
                    {"max_ns", r.summary.max_ns}};
  j["ops_self_ns"] = r.ops_self_ns;
  j["top_ops"] = ops_json(r, top);
  ordered_json scopes = ordered_json::array();
  for (std::size_t i = 0; i < r.scopes.size() && i < top; ++i)
    scopes.push_back({{"name", r.scopes[i].first}, {"calls", r.scopes[i].second.calls},
                      {"total_ns", r.scopes[i].second.total_ns}});
  j["top_scopes"] = std::move(scopes);
  ordered_json modules = ordered_json::array();
  for (std::size_t i = 0; i < r.modules.size() && i < top; ++i)
    modules.push_back({{"module", r.modules[i].first}, {"calls", r.modules[i].second.calls},
                       {"total_ns", r.modules[i].second.total_ns}, {"self_ns", r.modules[i].second.self_ns}});
  j["top_modules"] = std::move(modules);
  j["gpu"] = r.gpu ? gpu_json(*r.gpu) : ordered_json(nullptr);
  return j;
}

ordered_json skew_json(const SkewSummary& s) {
  ordered_json steps = ordered_json::array();
  for (const auto& k : s.steps) {
    steps.push_back({{"step", k.step}, {"ranks", k.ranks}, {"slowest_rank", k.slowest_rank},
                     {"slowest_ns", k.slowest_ns}, {"fastest_rank", k.fastest_rank}, {"fastest_ns", k.fastest_ns},
                     {"mean_ns", k.mean_ns}, {"spread_ns", k.spread_ns()}});
  }
  return {{"steps", std::move(steps)},
          {"most_often_slowest", s.most_often_slowest ? ordered_json(*s.most_often_slowest) : ordered_json(nullptr)},
          {"slowest_count", s.slowest_count},
          {"max_spread_ns", s.max_spread_ns}};
}

}  // namespace

nlohmann::ordered_json render_json(const Report& report, std::size_t top_ops) {
  ordered_json doc;
  doc["groups"] = ordered_json::array();
  for (const auto& g : report.groups) {
    ordered_json group;
    group["label"] = g.label;
    group["ranks"] = ordered_json::array();
    for (const auto& r : g.ranks) group["ranks"].push_back(rank_json(r, top_ops));
    group["skew"] = skew_json(g.skew);
    group["communication_wait"] = waits_json(g.waits);
    doc["groups"].push_back(std::move(group));
  }
  return doc;
}

}  // namespace chakrashim::tools::report
