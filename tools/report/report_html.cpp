#include "report/report_html.h"

#include <algorithm>
#include <map>
#include <set>

#include "report/kernel_kind.h"
#include "report/report_text.h"
#include "report/svg_charts.h"

namespace chakrashim::tools::report {

namespace {

constexpr const char* kStyle = R"(<style>
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1320px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin-bottom: 4px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f4f4f4; } td.name, th.name { text-align: left; }
td.name { max-width: 760px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
p.note { color: #666; font-size: 13px; } .error { color: #b00; }
</style>
)";

double to_ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string cell(const std::string& s, bool name = false) {
  return std::string(name ? "<td class=\"name\">" : "<td>") + xml_escape(s) + "</td>";
}

std::string rank_label(const RankStats& r, bool show_group) {
  return "rank " + std::to_string(r.rank) + (show_group && !r.group.empty() ? " (" + r.group + ")" : "");
}

std::vector<const RankStats*> good_ranks(const Report& report) {
  std::vector<const RankStats*> out;
  for (const auto& g : report.groups)
    for (const auto& r : g.ranks)
      if (r.error.empty()) out.push_back(&r);
  return out;
}

std::string step_chart(const std::vector<const RankStats*>& ranks, bool show_group) {
  GroupedBars c;
  c.y_label = "step time (ms)";
  std::set<std::uint64_t> steps;
  for (const auto* r : ranks)
    for (const auto& s : r->steps) steps.insert(s.step);
  for (const auto s : steps) c.categories.push_back("step " + std::to_string(s));
  for (const auto* r : ranks) {
    c.series.push_back(rank_label(*r, show_group));
    std::vector<double> v(steps.size(), -1);
    for (const auto& s : r->steps)
      v[static_cast<std::size_t>(std::distance(steps.begin(), steps.find(s.step)))] = to_ms(s.dur_ns);
    c.values.push_back(std::move(v));
  }
  return grouped_bar_chart(c);
}

// The stepping thread's time in the steps: the five ops with the most self
// time over all ranks, the other ops, and the time outside any op.
std::string host_breakdown_chart(const std::vector<const RankStats*>& ranks, bool show_group) {
  std::map<std::string, std::int64_t> by_name;
  for (const auto* r : ranks)
    for (const auto& op : r->ops) by_name[op.name] += op.totals.in_steps_self_ns;
  std::vector<std::pair<std::string, std::int64_t>> order(by_name.begin(), by_name.end());
  std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (order.size() > 5) order.resize(5);
  StackedBars c;
  for (std::size_t i = 0; i < order.size(); ++i) {
    c.segments.push_back(order[i].first);
    c.colors.emplace_back(palette_color(i));
  }
  c.segments.insert(c.segments.end(), {"other ops", "outside any op"});
  c.colors.insert(c.colors.end(), {"#bab0ac", "#e8e8e8"});
  for (const auto* r : ranks) {
    c.rows.push_back(rank_label(*r, show_group));
    std::vector<double> v;
    std::int64_t ops_in_steps = 0, outside = 0, top = 0;
    for (const auto& s : r->steps) {
      ops_in_steps += s.ops_self_ns;
      outside += s.outside_ops_ns;
    }
    for (const auto& [name, unused] : order) {
      // clang before 16 (the fuzz build's clang-14) cannot capture a structured binding.
      const auto it = std::find_if(r->ops.begin(), r->ops.end(),
                                   [&name = name](const NamedOp& o) { return o.name == name; });
      const std::int64_t ns = it == r->ops.end() ? 0 : it->totals.in_steps_self_ns;
      top += ns;
      v.push_back(to_ms(ns));
    }
    v.push_back(to_ms(ops_in_steps - top));
    v.push_back(to_ms(outside));
    c.values.push_back(std::move(v));
  }
  return stacked_bar_chart(c);
}

std::string gpu_breakdown_chart(const std::vector<const RankStats*>& ranks, bool show_group) {
  StackedBars c;
  c.segments = {"compute", "communication not under compute", "memory only", "idle"};
  c.colors = {std::string(palette_color(2)), std::string(palette_color(3)), std::string(palette_color(1)), "#e8e8e8"};
  for (const auto* r : ranks) {
    if (!r->gpu) continue;
    const auto& b = r->gpu->breakdown;
    c.rows.push_back(rank_label(*r, show_group));
    c.values.push_back({to_ms(b.compute_ns), to_ms(b.exposed_comm_ns), to_ms(b.memory_only_ns), to_ms(b.idle_ns)});
  }
  return stacked_bar_chart(c);
}

std::string summary_table(const std::vector<const RankStats*>& ranks, bool show_group) {
  const bool any_gpu = std::any_of(ranks.begin(), ranks.end(), [](const RankStats* r) { return r->gpu.has_value(); });
  std::string out = "<table><tr><th class=\"name\">rank</th><th>steps</th><th>mean ms</th><th>min ms</th><th>max ms</th>";
  if (any_gpu) out += "<th>GPU busy</th><th>compute ms</th><th>communication ms</th><th>memory ms</th><th>comm under compute</th>";
  out += "</tr>\n";
  for (const auto* r : ranks) {
    std::string steps;
    for (const auto& s : r->steps) steps += (steps.empty() ? "" : ",") + std::to_string(s.step) + (s.partial ? "*" : "");
    out += "<tr>" + cell(rank_label(*r, show_group), true) + cell(steps) + cell(ms_text(r->summary.mean_ns)) +
           cell(ms_text(r->summary.min_ns)) + cell(ms_text(r->summary.max_ns));
    if (r->gpu) {
      const auto& g = *r->gpu;
      out += cell(percent_text(g.busy_share())) + cell(ms_text(g.kind_ns[0])) + cell(ms_text(g.kind_ns[1])) +
             cell(ms_text(g.kind_ns[2])) + cell(g.comm_ns > 0 ? percent_text(g.overlap_share()) : "-");
    } else if (any_gpu) {
      out += "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string skew_table(const GroupReport& g) {
  std::string out = "<table><tr><th>step</th><th>ranks</th><th>slowest rank</th><th>slowest ms</th><th>fastest rank</th>"
                    "<th>fastest ms</th><th>spread ms</th></tr>\n";
  for (const auto& k : g.skew.steps) {
    out += "<tr>" + cell(std::to_string(k.step)) + cell(std::to_string(k.ranks)) + cell(std::to_string(k.slowest_rank)) +
           cell(ms_text(k.slowest_ns)) + cell(std::to_string(k.fastest_rank)) + cell(ms_text(k.fastest_ns)) +
           cell(ms_text(k.spread_ns())) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string ops_table(const RankStats& r, std::size_t top) {
  std::string out = "<table><tr><th>self ms</th><th>calls</th><th>total ms</th><th class=\"name\">op</th></tr>\n";
  for (std::size_t i = 0; i < r.ops.size() && i < top; ++i) {
    const auto& op = r.ops[i];
    out += "<tr>" + cell(ms_text(op.totals.self_ns)) + cell(std::to_string(op.totals.calls)) +
           cell(ms_text(op.totals.total_ns)) + cell(op.name, true) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string timeline_section(const Report& report) {
  for (const auto& g : report.groups) {
    for (const auto& r : g.ranks) {
      if (!r.timeline) continue;
      const Timeline& t = *r.timeline;
      std::string out = "<h2>Step " + std::to_string(t.step) + " of rank " + std::to_string(r.rank) + "</h2>\n";
      out += "<p class=\"note\">The top grey bar is the step; host threads show ops stacked by nesting; GPU streams show compute (green), "
             "communication (red) and memory (orange). Hover a bar for its name and time.";
      if (t.left_out > 0) out += " " + std::to_string(t.left_out) + " short or deeply nested bars are left out.";
      return out + "</p>\n" + timeline_chart(t);
    }
  }
  return {};
}

}  // namespace

std::string render_html(const Report& report, std::size_t top_ops) {
  const auto ranks = good_ranks(report);
  const bool show_group = report.groups.size() > 1;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<title>chakrashim report</title>\n";
  out += kStyle;
  out += "</head><body>\n<h1>chakrashim report</h1>\n";
  out += "<p class=\"note\">" + std::to_string(ranks.size()) + " rank" + (ranks.size() == 1 ? "" : "s") +
         ". Step time is each ProfilerStep#N's duration; steps marked * are partial and left out of mean, "
         "min and max.</p>\n";
  for (const auto& g : report.groups)
    for (const auto& r : g.ranks)
      if (!r.error.empty())
        out += "<p class=\"error\">" + xml_escape(rank_label(r, show_group) + ": cannot report: " + r.error) + "</p>\n";
  out += "<h2>Ranks</h2>\n" + summary_table(ranks, show_group);
  for (const auto& g : report.groups) {
    if (g.skew.steps.empty()) continue;
    out += "<h2>Cross-rank skew" + (show_group && !g.label.empty() ? " (" + xml_escape(g.label) + ")" : "") + "</h2>\n";
    out += skew_table(g);
  }
  out += "<h2>Step time per rank</h2>\n" + step_chart(ranks, show_group);
  out += "<h2>Where the stepping thread's time goes</h2>\n<p class=\"note\">Self time of the ops inside the "
         "captured steps, on the thread that steps, summed over the steps.</p>\n" +
         host_breakdown_chart(ranks, show_group);
  if (std::any_of(ranks.begin(), ranks.end(), [](const RankStats* r) { return r->gpu.has_value(); })) {
    out += "<h2>Where the GPU's time goes</h2>\n<p class=\"note\">The captured steps' window on each rank's "
           "devices, split without double counting.</p>\n" + gpu_breakdown_chart(ranks, show_group);
  }
  out += timeline_section(report);
  out += "<h2>Top ops by self time</h2>\n";
  for (const auto* r : ranks) out += "<h3>" + xml_escape(rank_label(*r, show_group)) + "</h3>\n" + ops_table(*r, top_ops);
  return out + "</body></html>\n";
}

}  // namespace chakrashim::tools::report
