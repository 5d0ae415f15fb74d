#include "report/report_html.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include "report/kernel_kind.h"
#include "report/report_text.h"
#include "report/scale_summary.h"
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
table.facts td, table.facts th { text-align: left; border: none; padding: 1px 12px 1px 0; }
table.facts th { background: none; color: #666; font-weight: normal; }
details > summary { cursor: pointer; font-size: 15px; margin: 8px 0; }
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

// "2024-03-18 00:00 UTC" for nanoseconds since the epoch; empty when the
// clock is not one (a trace whose times start near zero).
std::string utc_date(std::int64_t ns) {
  const std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
  if (t < 1'000'000'000) return {};  // before 2001: not a wall clock
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return {};
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string step_chart(const std::vector<const RankStats*>& ranks, bool show_group) {
  GroupedBars c;
  c.y_label = "step time (ms)";
  std::set<std::uint64_t> steps;
  for (const auto* r : ranks)
    for (const auto& s : r->steps) steps.insert(s.step);
  for (const auto s : steps) c.categories.push_back("step " + std::to_string(s) + (s == 0 ? " (setup)" : ""));
  for (const auto* r : ranks) {
    c.series.push_back(rank_label(*r, show_group));
    std::vector<double> v(steps.size(), -1);
    std::vector<bool> marked(steps.size(), false);
    for (const auto& s : r->steps) {
      const auto k = static_cast<std::size_t>(std::distance(steps.begin(), steps.find(s.step)));
      v[k] = to_ms(s.dur_ns);
      marked[k] = s.partial;
    }
    c.values.push_back(std::move(v));
    c.marked.push_back(std::move(marked));
  }
  return grouped_bar_chart(c);
}

std::string heatmap(const GroupReport& g, const ScaleSummary& s) {
  Heatmap h;
  for (const auto& d : s.steps) {
    h.steps.push_back(d.step);
    h.median_ms.push_back(to_ms(d.median_ns));
  }
  for (const auto& r : g.ranks) {
    if (!r.error.empty()) continue;
    h.ranks.push_back(r.rank);
    std::vector<double> v(h.steps.size(), -1);
    std::vector<bool> partial(h.steps.size(), false);
    for (const auto& st : r.steps) {
      const auto it = std::find(h.steps.begin(), h.steps.end(), st.step);
      if (it == h.steps.end()) continue;
      const auto k = static_cast<std::size_t>(it - h.steps.begin());
      v[k] = to_ms(st.dur_ns);
      partial[k] = st.partial;
    }
    h.ms.push_back(std::move(v));
    h.partial.push_back(std::move(partial));
  }
  return heatmap_chart(h);
}

std::string distribution_table(const ScaleSummary& s) {
  std::string out = "<table><tr><th>step</th><th>ranks</th><th>min ms</th><th>median ms</th><th>p95 ms</th>"
                    "<th>max ms</th><th>spread</th></tr>\n";
  for (const auto& d : s.steps) {
    out += "<tr>" + cell(std::to_string(d.step) + (d.setup ? " (setup)" : "")) + cell(std::to_string(d.ranks)) +
           cell(ms_text(d.min_ns)) + cell(ms_text(d.median_ns)) + cell(ms_text(d.p95_ns)) + cell(ms_text(d.max_ns)) +
           cell(d.median_ns > 0 ? percent_text(static_cast<double>(d.spread_ns()) / static_cast<double>(d.median_ns)) : "-") +
           "</tr>\n";
  }
  return out + "</table>\n";
}

std::string outlier_table(const ScaleSummary& s) {
  if (s.slow.empty()) {
    return "<p class=\"note\">No rank took more than " + std::to_string(static_cast<int>(100 * kSlowShare)) +
           "% over a step's median.</p>\n";
  }
  const bool gpu = s.slow.front().figures.gpu_busy.has_value();
  std::string out = "<p class=\"note\">" + std::to_string(s.slow_total) + " rank" + (s.slow_total == 1 ? "" : "s") +
                    " took more than " + std::to_string(static_cast<int>(100 * kSlowShare)) +
                    "% over a step's median" +
                    (s.slow_total > s.slow.size() ? "; the worst " + std::to_string(s.slow.size()) + " are shown" : "") +
                    ". Each at its worst step, next to that step's median rank.</p>\n";
  out += "<table><tr><th class=\"name\">rank</th><th>step</th><th>time ms</th><th>vs median</th><th>op self ms</th>"
         "<th>outside ops ms</th>";
  if (gpu) out += "<th>GPU busy</th><th>compute ms</th><th>comm ms</th><th>memory ms</th><th>comm under compute</th>";
  out += "<th class=\"name\">grew most</th></tr>\n";
  const auto row = [gpu](const std::string& who, std::uint64_t step, const StepFigures& f, const std::string& vs,
                         const std::string& why) {
    std::string line = "<tr>" + cell(who, true) + cell(std::to_string(step)) + cell(ms_text(f.step_ns)) + cell(vs) +
                       cell(ms_text(f.ops_self_ns)) + cell(ms_text(f.outside_ops_ns));
    if (gpu) {
      line += cell(f.gpu_busy ? percent_text(*f.gpu_busy) : "-") + cell(f.compute_ns ? ms_text(*f.compute_ns) : "-") +
              cell(f.comm_ns ? ms_text(*f.comm_ns) : "-") + cell(f.memory_ns ? ms_text(*f.memory_ns) : "-") +
              cell(f.comm_under_compute ? percent_text(*f.comm_under_compute) : "-");
    }
    return line + cell(why, true) + "</tr>\n";
  };
  for (const auto& r : s.slow) {
    out += row("rank " + std::to_string(r.figures.rank), r.step, r.figures, "+" + percent_text(r.over_median), r.why);
    out += row("median rank " + std::to_string(r.median.rank), r.step, r.median, "", "");
  }
  return out + "</table>\n";
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

// Each step's phases on the stepping thread (step_phases.h): they add up
// to the step's time.
std::string phases_html(const RankStats& r) {
  if (r.phases.size() != r.steps.size() || r.steps.empty()) return {};
  std::string out = "<table><tr><th>step</th><th>time ms</th>";
  for (int p = 0; p < kPhases; ++p) out += "<th>" + std::string(phase_name(static_cast<Phase>(p))) + " ms</th>";
  out += "</tr>\n";
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    out += "<tr>" + cell(std::to_string(r.steps[i].step)) + cell(ms_text(r.steps[i].dur_ns));
    for (int p = 0; p < kPhases; ++p) out += cell(ms_text(r.phases[i][p]));
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// Per rank: time in collectives, and waiting for the last rank to arrive.
std::string waits_html(const GroupReport& g) {
  const auto& w = g.waits;
  if (w.ranks.size() < 2 || std::none_of(w.ranks.begin(), w.ranks.end(), [](const RankWait& r) { return r.collectives > 0; }))
    return {};
  std::string out = w.matched ? std::string() : "<p class=\"note\">Waiting not computed: " + xml_escape(w.unmatched) + "</p>\n";
  out += "<table><tr><th>rank</th><th>collectives</th><th>arrived last</th><th>in collectives ms</th><th>waiting ms</th>"
         "<th class=\"name\">waiting per step, ms</th></tr>\n";
  for (const auto& r : w.ranks) {
    std::string per_step;
    for (const auto& [step, ns] : r.waiting_by_step)
      per_step += (per_step.empty() ? "" : ", ") + std::to_string(step) + ": " + ms_text(ns);
    out += "<tr>" + cell(std::to_string(r.rank)) + cell(std::to_string(r.collectives)) +
           cell(w.matched ? std::to_string(r.arrived_last) : "-") + cell(ms_text(r.in_collectives_ns)) +
           cell(w.matched ? ms_text(r.waiting_ns) : "-") + cell(per_step, true) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string html_ops_table(const RankStats& r, std::size_t top) {
  std::int64_t step_total = 0;
  for (const auto& s : r.steps) step_total += s.dur_ns;
  std::string out = "<table><tr><th>self ms</th><th>step share</th><th>calls</th><th>total ms</th>"
                    "<th class=\"name\">op</th></tr>\n";
  for (std::size_t i = 0; i < r.ops.size() && i < top; ++i) {
    const auto& op = r.ops[i];
    const std::string share = op.totals.in_steps_self_ns > 0 && step_total > 0
                                  ? percent_text(static_cast<double>(op.totals.in_steps_self_ns) / static_cast<double>(step_total))
                                  : "-";
    out += "<tr>" + cell(ms_text(op.totals.self_ns)) + cell(share) + cell(std::to_string(op.totals.calls)) +
           cell(ms_text(op.totals.total_ns)) + cell(op.name, true) + "</tr>\n";
  }
  return out + "</table>\n";
}

// What the page shows, in its first lines: the folder, the runs with their
// job ids, torch and chakrashim versions, when it was captured, the steps.
std::string facts_table(const Report& report, const HtmlOptions& o) {
  std::string torch, version, date;
  std::set<std::uint64_t> steps;
  std::set<std::uint64_t> rank_numbers;
  for (const auto& g : report.groups) {
    for (const auto& r : g.ranks) {
      rank_numbers.insert(r.rank);
      for (const auto& s : r.steps) steps.insert(s.step);
      if (r.meta && r.meta->is_object()) {
        if (torch.empty() && r.meta->contains("torch_version") && (*r.meta)["torch_version"].is_string())
          torch = (*r.meta)["torch_version"].get<std::string>();
        if (version.empty() && r.meta->contains("version") && (*r.meta)["version"].is_string())
          version = (*r.meta)["version"].get<std::string>();
      }
      if (date.empty() && !r.steps.empty()) date = utc_date(r.base_time_ns.value_or(0) + r.steps.front().start_ns);
    }
  }
  std::string runs;
  for (const auto& g : report.groups) {
    if (g.label.empty()) continue;
    // "step-2/0.1": the window from step 2 of run 0.1 (job 0).
    std::string label = g.label, window;
    if (const auto slash = label.find('/'); label.rfind("step-", 0) == 0 && slash != std::string::npos) {
      window = label.substr(5, slash - 5);
      label = label.substr(slash + 1);
    }
    runs += (runs.empty() ? "" : ", ") + g.label + " (" + (window.empty() ? "" : "window from step " + window + ", ") +
            "job " + label.substr(0, label.find('.')) + ", " + std::to_string(g.ranks.size()) + " rank" +
            (g.ranks.size() == 1 ? "" : "s") + ")";
  }
  std::string step_text;
  for (const auto s : steps) step_text += (step_text.empty() ? "" : ", ") + std::to_string(s);
  std::string out = "<table class=\"facts\">\n";
  const auto row = [&out](const char* what, const std::string& value) {
    if (!value.empty()) out += std::string("<tr><th>") + what + "</th><td class=\"name\">" + xml_escape(value) + "</td></tr>\n";
  };
  row("folder", report.root.empty() ? o.folder : report.root);
  row(report.groups.size() > 1 ? "runs" : "run", runs.empty() ? std::string("loose files") : runs);
  // Ranks, not ranks times windows (issue #49: "ranks 4" for one process
  // with repeated windows).
  row("ranks", std::to_string(rank_numbers.size()));
  row("steps", step_text.empty() ? std::string("none") : step_text);
  row("captured", date);
  row("torch", torch);
  row("chakrashim", version);
  return out + "</table>\n";
}

std::string timeline_section(const Report& report) {
  for (const auto& g : report.groups) {
    for (const auto& r : g.ranks) {
      if (!r.timeline) continue;
      const Timeline& t = *r.timeline;
      std::string out = "<h2>Step " + std::to_string(t.step) + " of rank " + std::to_string(r.rank) + "</h2>\n";
      const bool gpu_rows = std::any_of(t.bars.begin(), t.bars.end(), [](const TimelineBar& b) {
        return b.kind != BarKind::step && b.kind != BarKind::host;
      });
      out += std::string("<p class=\"note\">The top grey bar is the step; host threads show ops stacked by nesting, "
                         "coloured by depth (the legend below)") +
             (gpu_rows ? "; GPU streams show compute (green), communication (red) and memory (orange)" : "") +
             ". Hover a bar for its name and time.";
      if (t.left_out > 0) out += " " + std::to_string(t.left_out) + " short or deeply nested bars are left out.";
      return out + "</p>\n" + timeline_chart(t);
    }
  }
  return {};
}

}  // namespace

std::string render_html(const Report& report, const HtmlOptions& o) {
  const auto all = good_ranks(report);
  const bool show_group = report.groups.size() > 1;
  const bool any_gpu = std::any_of(all.begin(), all.end(), [](const RankStats* r) { return r->gpu.has_value(); });
  std::size_t total = 0;
  for (const auto& g : report.groups) total += g.ranks.size();
  const bool at_scale = total > kSummaryAboveRanks;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<title>chakrashim report</title>\n";
  out += kStyle;
  out += "</head><body>\n<h1>chakrashim report</h1>\n" + facts_table(report, o);
  out += "<p class=\"note\">Step time is each ProfilerStep#N's duration; partial steps (marked * and drawn faint) "
         "and step 0 (the job's setup) are left out of mean, min and max.</p>\n";
  for (const auto& g : report.groups)
    for (const auto& r : g.ranks)
      if (!r.error.empty())
        out += "<p class=\"error\">" + xml_escape(rank_label(r, show_group) + ": cannot report: " + r.error) + "</p>\n";

  // At scale the charts per rank show the ranks that matter: the slowest
  // and each step's median rank.
  std::vector<const RankStats*> shown = all;
  if (at_scale) {
    shown.clear();
    for (const auto& g : report.groups) {
      const ScaleSummary s = summarize_group(g, o.top_ranks, o.top_ops);
      const std::string run = show_group && !g.label.empty() ? " (run " + xml_escape(g.label) + ")" : "";
      out += "<h2>Step time, rank by step" + run + "</h2>\n<p class=\"note\">Each cell is one rank's step, coloured by "
             "its time against that step's median over ranks: a slow rank is a dark column. Hover a cell for its "
             "value.</p>\n" + heatmap(g, s);
      out += "<h2>Step time over ranks, per step" + run + "</h2>\n" + distribution_table(s);
      out += "<h2>Slowest ranks" + run + "</h2>\n" + outlier_table(s);
      if (!s.differ.empty()) {
        out += "<h2>Ranks that differ in structure" + run + "</h2>\n<ul>\n";
        for (const auto& d : s.differ)
          out += "<li>rank " + std::to_string(d.rank) + ": " + xml_escape(d.what) + "</li>\n";
        out += "</ul>\n";
      }
      out += "<h2>Top ops across all ranks" + run + "</h2>\n<table><tr><th>self ms</th><th>calls</th><th>ranks</th>"
             "<th class=\"name\">op</th></tr>\n";
      for (const auto& op : s.ops)
        out += "<tr>" + cell(ms_text(op.self_ns)) + cell(std::to_string(op.calls)) + cell(std::to_string(op.ranks)) +
               cell(op.name, true) + "</tr>\n";
      out += "</table>\n";
      std::set<std::uint64_t> wanted;
      for (const auto& r : s.slow) wanted.insert({r.figures.rank, r.median.rank});
      for (const auto* r : all)
        if (r->group == g.label && wanted.count(r->rank)) shown.push_back(r);
    }
    out += "<details><summary>Every rank (" + std::to_string(all.size()) + ")</summary>\n" +
           summary_table(all, show_group) + "</details>\n";
  } else {
    out += "<h2>Ranks</h2>\n" + summary_table(all, show_group);
    for (const auto& g : report.groups) {
      if (g.skew.steps.empty()) continue;
      out += "<h2>Cross-rank skew" + (show_group && !g.label.empty() ? " (" + xml_escape(g.label) + ")" : "") + "</h2>\n";
      out += skew_table(g);
    }
    for (const auto& g : report.groups) {
      const std::string waits = waits_html(g);
      if (waits.empty()) continue;
      out += "<h2>Communication wait" + (show_group && !g.label.empty() ? " (" + xml_escape(g.label) + ")" : "") +
             "</h2>\n<p class=\"note\">The stepping thread's time in collectives, and of it the time spent waiting "
             "for the last rank to arrive (the n-th collective of each rank is the same one).</p>\n" + waits;
    }
    out += "<h2>Step time per rank</h2>\n" + step_chart(all, show_group);
  }
  const std::string which = at_scale ? " (the slowest ranks and the median rank)" : "";
  if (!shown.empty()) {
    out += "<h2>Where the stepping thread's time goes" + which + "</h2>\n<p class=\"note\">Self time of the ops "
           "inside the captured steps, on the thread that steps, summed over the steps.</p>\n" +
           host_breakdown_chart(shown, show_group);
    out += "<h2>Step phases" + which + "</h2>\n<p class=\"note\">Each step's time on the stepping thread, by phase, "
           "from the names torch records (docs/report.md, \"Step phases\"); the phases add up to the step.</p>\n";
    for (const auto* r : shown) out += "<h3>" + xml_escape(rank_label(*r, show_group)) + "</h3>\n" + phases_html(*r);
    if (any_gpu) {
      out += "<h2>Where the GPU's time goes" + which + "</h2>\n<p class=\"note\">The captured steps' window on each "
             "rank's devices, split without double counting.</p>\n" + gpu_breakdown_chart(shown, show_group);
    }
  }
  out += timeline_section(report);
  out += "<h2>Top ops by self time" + which + "</h2>\n<p class=\"note\">Self time over all threads. Step share: self "
         "time on the stepping thread inside the steps, as a share of the steps' time; '-' for ops that ran on other "
         "threads only (they ran beside the step, not in it).</p>\n";
  for (const auto* r : shown) {
    out += "<h3>" + xml_escape(rank_label(*r, show_group)) + "</h3>\n" + html_ops_table(*r, o.top_ops);
    if (!r->modules.empty()) {
      // Time per torch.nn.Module path (CHAKRA_MODULE_SCOPES=1), next to the ops.
      out += "<table><tr><th>total ms</th><th>self ms</th><th>calls</th><th class=\"name\">module</th></tr>\n";
      for (std::size_t i = 0; i < r->modules.size() && i < o.top_ops; ++i) {
        const ModuleTotal& t = r->modules[i].second;
        out += "<tr>" + cell(ms_text(t.total_ns)) + cell(ms_text(t.self_ns)) + cell(std::to_string(t.calls)) +
               cell(r->modules[i].first, true) + "</tr>\n";
      }
      out += "</table>\n";
    }
    if (r->scopes.empty()) continue;
    // The job's record_function scopes next to its ops (modules where it names them).
    out += "<table><tr><th>total ms</th><th>calls</th><th class=\"name\">record_function scope</th></tr>\n";
    for (std::size_t i = 0; i < r->scopes.size() && i < o.top_ops; ++i)
      out += "<tr>" + cell(ms_text(r->scopes[i].second.total_ns)) + cell(std::to_string(r->scopes[i].second.calls)) +
             cell(r->scopes[i].first, true) + "</tr>\n";
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace chakrashim::tools::report
