#include "report/report_text.h"

#include <algorithm>
#include <cstdio>
#include <type_traits>

#include "report/kernel_kind.h"
#include "report/scale_summary.h"

namespace chakrashim::tools::report {

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string share_of(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? percent_text(static_cast<double>(part) / static_cast<double>(whole)) : std::string("-");
}

std::string clipped(const std::string& name, std::size_t width) {
  return name.size() <= width ? name : name.substr(0, width - 3) + "...";
}

std::string captured_list(const std::vector<StepTime>& steps) {
  std::string out;
  for (const auto& s : steps) out += (out.empty() ? "" : ",") + std::to_string(s.step);
  return out.empty() ? "none" : out;
}

std::string steps_table(const RankStats& r) {
  std::string out = "  step          time ms   in ops ms  outside ops ms\n";
  for (const auto& s : r.steps) {
    const std::string merged =
        s.iterations > 1 ? "  (" + std::to_string(s.iterations) + " iterations: a GradScaler skipped " +
                               std::to_string(s.iterations - 1) + " optimizer step" + (s.iterations > 2 ? "s" : "") +
                               "; left out of mean/min/max)"
                         : "";
    out += format("  %-10llu %11s %11s %15s%s\n", static_cast<unsigned long long>(s.step), ms_text(s.dur_ns).c_str(),
                  ms_text(s.ops_self_ns).c_str(), ms_text(s.outside_ops_ns).c_str(),
                  s.partial            ? "  (partial: left out of mean/min/max)"
                  : s.iterations > 1  ? merged.c_str()
                  : is_setup_step(s)  ? "  (step 0: the job's setup; left out of mean/min/max)"
                                       : "");
  }
  return out;
}

// Where each step went on the stepping thread; the phases add up to the
// step's time (step_phases.h).
std::string phases_table(const RankStats& r) {
  if (r.phases.size() != r.steps.size() || r.steps.empty()) return {};
  std::string out = "  phases on the stepping thread, ms (they add up to the step):\n  step      ";
  for (int p = 0; p < kPhases; ++p) out += format(" %13s", std::string(phase_name(static_cast<Phase>(p))).c_str());
  out += "\n";
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    out += format("  %-10llu", static_cast<unsigned long long>(r.steps[i].step));
    for (int p = 0; p < kPhases; ++p) out += format(" %13s", ms_text(r.phases[i][p]).c_str());
    // A step the exit (or a signal) cut has no optimizer step to split it
    // at: what ran is all "forward" by the rules, which is not a finding.
    out += r.steps[i].partial ? "  (partial: cut before its optimizer step; not split into phases)\n" : "\n";
  }
  return out;
}

std::string ops_table(const RankStats& r, std::size_t top) {
  std::int64_t step_total = 0;
  for (const auto& s : r.steps) step_total += s.dur_ns;
  // Self time is summed over all threads, but a share of the step is only
  // meaningful on the thread that steps: ops on other threads (gloo's
  // workers, data loaders) run beside the step, not in it.
  std::string out = format("  top %zu ops by self time (all threads); step share: self time on the stepping thread\n"
                           "  inside the steps, as a share of the captured steps' time ('-': other threads only):\n",
                           std::min(top, r.ops.size()));
  out += "     self ms  step share    calls    total ms  op\n";
  for (std::size_t i = 0; i < r.ops.size() && i < top; ++i) {
    const auto& op = r.ops[i];
    out += format("  %10s %11s %8llu %11s  %s\n", ms_text(op.totals.self_ns).c_str(),
                  op.totals.in_steps_self_ns > 0 ? share_of(op.totals.in_steps_self_ns, step_total).c_str() : "-",
                  static_cast<unsigned long long>(op.totals.calls), ms_text(op.totals.total_ns).c_str(),
                  clipped(op.name, 80).c_str());
  }
  return out;
}

// A "top N" table of named totals, by total time: total ms, self ms (where
// the total has it), calls, name; nothing when there are none. `what`:
// the table's title after "top N"; `columns`: its column heads.
template <class Total>
std::string totals_table(const std::vector<std::pair<std::string, Total>>& rows, std::size_t top,
                         const char* what, const char* columns) {
  if (rows.empty()) return {};
  std::string out = format("  top %zu %s\n%s\n", std::min(top, rows.size()), what, columns);
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& [name, t] = rows[i];
    std::string self;
    if constexpr (std::is_same_v<Total, ModuleTotal>) self = format("  %11s", ms_text(t.self_ns).c_str());
    out += format("  %11s%s %8llu  %s\n", ms_text(t.total_ns).c_str(), self.c_str(),
                  static_cast<unsigned long long>(t.calls), clipped(name, 80).c_str());
  }
  return out;
}

std::string gpu_lines(const GpuStats& g) {
  const std::int64_t kinds_total = g.kind_ns[0] + g.kind_ns[1] + g.kind_ns[2];
  std::string out = format("  GPU (%u device%s, %llu ops in the steps): busy %s of %s ms\n", g.devices,
                           g.devices == 1 ? "" : "s", static_cast<unsigned long long>(g.ops),
                           percent_text(g.busy_share()).c_str(), ms_text(g.window_ns).c_str());
  out += "    kind             time ms   share     ops\n";
  for (int k = 0; k < kGpuKinds; ++k) {
    out += format("    %-14s %9s %7s %7llu\n", std::string(kind_name(static_cast<GpuKind>(k))).c_str(),
                  ms_text(g.kind_ns[k]).c_str(), share_of(g.kind_ns[k], kinds_total).c_str(),
                  static_cast<unsigned long long>(g.kind_ops[k]));
  }
  if (g.comm_ns > 0) {
    out += format("    communication under compute: %s of %s ms (exposed %s ms)\n",
                  percent_text(g.overlap_share()).c_str(), ms_text(g.comm_ns).c_str(),
                  ms_text(g.breakdown.exposed_comm_ns).c_str());
  } else {
    out += "    communication under compute: no communication kernels\n";
  }
  return out;
}

std::string rank_block(const RankStats& r, std::size_t top, bool show_group) {
  std::string out = "rank " + std::to_string(r.rank);
  if (show_group && !r.group.empty()) out += " (" + r.group + ")";
  if (!r.device_path.empty()) out += "  " + r.device_path;
  out += "\n";
  if (!r.error.empty()) return out + "  cannot report: " + r.error + "\n";
  const StepSummary& s = r.summary;
  out += "  steps " + captured_list(r.steps);
  if (s.count > 0) {
    // Only steps the mean leaves out (partial, the setup step, merged
    // iterations): said, not passed off as the mean of whole steps (issue
    // #49: "steps 14: mean 2325.831 ms" on one partial step).
    const bool only_left_out = std::none_of(r.steps.begin(), r.steps.end(), counted_step);
    out += format(": mean %s ms, min %s, max %s%s\n", ms_text(s.mean_ns).c_str(), ms_text(s.min_ns).c_str(),
                  ms_text(s.max_ns).c_str(), only_left_out ? " (of steps the mean would leave out: no other)" : "");
    out += steps_table(r);
    out += phases_table(r);
  } else {
    out += " (no ProfilerStep#N: no step times)\n";
  }
  out += ops_table(r, top);
  // Time per torch.nn.Module path (module_totals.h), where the capture
  // has "nn.Module: " scopes (CHAKRA_MODULE_SCOPES=1).
  out += totals_table(r.modules, top,
                      "modules by total time (forward calls, all threads; self: less the modules called inside):",
                      "     total ms      self ms    calls  module");
  // The job's record_function scopes (step_phases.h, scope_totals): per
  // module where the job or a wrapper names them.
  out += totals_table(r.scopes, top,
                      "record_function scopes by total time (all threads; modules where the job names them):",
                      "     total ms    calls  scope");
  if (r.gpu) out += gpu_lines(*r.gpu);
  return out;
}

std::string skew_block(const GroupReport& g, bool show_group) {
  if (g.skew.steps.empty()) return {};
  std::string out = "cross-rank skew";
  if (show_group && !g.label.empty()) out += " (" + g.label + ")";
  out += ": slowest rank per step\n";
  out += "  step        ranks  slowest rank    time ms  fastest rank    time ms   spread ms  spread\n";
  for (const auto& k : g.skew.steps) {
    out += format("  %-10llu %6u %13llu %10s %13llu %10s %11s %7s\n", static_cast<unsigned long long>(k.step),
                  k.ranks, static_cast<unsigned long long>(k.slowest_rank), ms_text(k.slowest_ns).c_str(),
                  static_cast<unsigned long long>(k.fastest_rank), ms_text(k.fastest_ns).c_str(),
                  ms_text(k.spread_ns()).c_str(), share_of(k.spread_ns(), k.fastest_ns).c_str());
  }
  if (g.skew.most_often_slowest) {
    out += format("  rank %llu was the slowest in %u of %zu steps; the largest spread was %s ms\n",
                  static_cast<unsigned long long>(*g.skew.most_often_slowest), g.skew.slowest_count,
                  g.skew.steps.size(), ms_text(g.skew.max_spread_ns).c_str());
  }
  return out;
}

// Per rank: the stepping thread's time in collectives, and how much of it
// was spent waiting for the last rank to arrive (collective_wait.h).
std::string wait_block(const GroupReport& g, bool show_group) {
  const auto& w = g.waits;
  const bool any = std::any_of(w.ranks.begin(), w.ranks.end(), [](const RankWait& r) { return r.collectives > 0; });
  if (!any || w.ranks.size() < 2) return {};
  std::string out = "communication wait";
  if (show_group && !g.label.empty()) out += " (" + g.label + ")";
  out += ": the stepping thread's time in collectives; waiting: until the last rank arrived\n";
  if (!w.matched) out += "  (waiting not computed: " + w.unmatched + ")\n";
  out += "  rank    collectives  arrived last  in collectives ms  waiting ms  waiting per step, ms\n";
  for (const auto& r : w.ranks) {
    std::string per_step;
    for (const auto& [step, ns] : r.waiting_by_step)
      per_step += (per_step.empty() ? "" : ", ") + std::to_string(step) + ": " + ms_text(ns);
    out += format("  %-6llu %12llu %13s %18s %11s  %s\n", static_cast<unsigned long long>(r.rank),
                  static_cast<unsigned long long>(r.collectives),
                  w.matched ? std::to_string(r.arrived_last).c_str() : "-", ms_text(r.in_collectives_ns).c_str(),
                  w.matched ? ms_text(r.waiting_ns).c_str() : "-", per_step.c_str());
  }
  return out;
}

std::string distribution_block(const ScaleSummary& s) {
  std::string out = "  step time over ranks, per step (ms; complete steps only):\n";
  out += "  step        ranks        min     median        p95        max     spread\n";
  for (const auto& d : s.steps) {
    out += format("  %-10llu %6u %10s %10s %10s %10s %10s%s\n", static_cast<unsigned long long>(d.step), d.ranks,
                  ms_text(d.min_ns).c_str(), ms_text(d.median_ns).c_str(), ms_text(d.p95_ns).c_str(),
                  ms_text(d.max_ns).c_str(), share_of(d.spread_ns(), d.median_ns).c_str(),
                  d.setup ? "  (step 0: the job's setup)" : "");
  }
  return out;
}

std::string slow_block(const ScaleSummary& s, std::size_t top_ranks) {
  if (s.slow.empty()) {
    return format("  slowest ranks: none; no rank took more than %.0f%% over a step's median\n", 100 * kSlowShare);
  }
  std::string out = format("  slowest ranks: %zu rank%s took more than %.0f%% over a step's median", s.slow_total,
                           s.slow_total == 1 ? "" : "s", 100 * kSlowShare);
  out += s.slow_total > s.slow.size() ? format(" (the worst %zu; --top-ranks N for more)", s.slow.size()) : std::string();
  out += "\n  (each at its worst step, next to that step's median rank; GPU figures over the whole window)\n";
  const bool gpu = s.slow.front().figures.gpu_busy.has_value();
  out += "  rank        step    time ms  vs median  op self ms  outside ops ms";
  if (gpu) out += "  GPU busy  compute ms  comm ms  memory ms  comm under compute";
  out += "\n";
  const auto row = [gpu](const std::string& who, std::uint64_t step, const StepFigures& f, const std::string& vs) {
    std::string line = format("  %-10s %5llu %10s %10s %11s %15s", who.c_str(), static_cast<unsigned long long>(step),
                              ms_text(f.step_ns).c_str(), vs.c_str(), ms_text(f.ops_self_ns).c_str(),
                              ms_text(f.outside_ops_ns).c_str());
    if (gpu) {
      line += format(" %9s %11s %8s %10s %19s", f.gpu_busy ? percent_text(*f.gpu_busy).c_str() : "-",
                     f.compute_ns ? ms_text(*f.compute_ns).c_str() : "-", f.comm_ns ? ms_text(*f.comm_ns).c_str() : "-",
                     f.memory_ns ? ms_text(*f.memory_ns).c_str() : "-",
                     f.comm_under_compute ? percent_text(*f.comm_under_compute).c_str() : "-");
    }
    return line + "\n";
  };
  for (const auto& r : s.slow) {
    out += row(std::to_string(r.figures.rank), r.step, r.figures, "+" + percent_text(r.over_median));
    out += "    why: " + r.why + format(" (median rank %llu:", static_cast<unsigned long long>(r.median.rank)) +
           " " + ms_text(r.median.step_ns) + " ms, op self " + ms_text(r.median.ops_self_ns) + ", outside ops " +
           ms_text(r.median.outside_ops_ns) + ")\n";
  }
  (void)top_ranks;
  return out;
}

std::string differ_block(const ScaleSummary& s) {
  constexpr std::size_t kShown = 10;
  if (s.differ.empty()) return "  ranks that differ in structure: none (same steps, GPU ops alike, no dropped records)\n";
  std::string out = format("  ranks that differ in structure: %zu\n", s.differ.size());
  for (std::size_t i = 0; i < s.differ.size() && i < kShown; ++i)
    out += format("    rank %llu: %s\n", static_cast<unsigned long long>(s.differ[i].rank), s.differ[i].what.c_str());
  if (s.differ.size() > kShown) {
    std::string rest;
    for (std::size_t i = kShown; i < s.differ.size(); ++i) rest += (rest.empty() ? "" : ",") + std::to_string(s.differ[i].rank);
    out += "    and ranks " + clipped(rest, 100) + " (--ranks LIST for their blocks)\n";
  }
  return out;
}

std::string summary_ops_block(const ScaleSummary& s) {
  std::string out = format("  top %zu ops across all ranks, by self time summed over ranks (all threads):\n", s.ops.size());
  out += "     self ms    calls  ranks  op\n";
  for (const auto& op : s.ops) {
    out += format("  %10s %8llu %6u  %s\n", ms_text(op.self_ns).c_str(), static_cast<unsigned long long>(op.calls),
                  op.ranks, clipped(op.name, 80).c_str());
  }
  return out;
}

std::string summary_text(const GroupReport& g, const TextOptions& o, const std::string& root) {
  const ScaleSummary s = summarize_group(g, o.top_ranks, o.top_ops);
  std::string steps;
  for (const auto& d : s.steps) steps += (steps.empty() ? "" : ",") + std::to_string(d.step);
  std::string out = (g.label.empty() ? std::string("loose files") : "run " + g.label) +
                    (root.empty() ? std::string() : " in " + root) + format(": %u ranks", s.ranks) +
                    (s.readable < s.ranks ? format(" (%u unreadable)", s.ranks - s.readable) : std::string()) +
                    "; steps " + (steps.empty() ? std::string("none") : steps) + "\n";
  out += distribution_block(s);
  out += slow_block(s, o.top_ranks);
  out += differ_block(s);
  out += summary_ops_block(s);
  return out;
}

}  // namespace

std::string totals_line(const Report& report) {
  std::size_t ranks = 0;
  for (const auto& g : report.groups) ranks += g.ranks.size();
  std::string out = "chakrashim report: ";
  if (report.groups.size() > 1) {
    out += std::to_string(report.groups.size()) + " runs: ";
    for (std::size_t i = 0; i < report.groups.size(); ++i) {
      const auto n = report.groups[i].ranks.size();
      out += (i ? ", " : "") + report.groups[i].label + format(" (%zu rank%s)", n, n == 1 ? "" : "s");
    }
  } else {
    out += format("%zu rank%s", ranks, ranks == 1 ? "" : "s");
    if (!report.groups.empty() && !report.groups[0].label.empty()) out += " (run " + report.groups[0].label + ")";
  }
  return out + "\n";
}

std::string ms_text(std::int64_t ns) { return format("%.3f", static_cast<double>(ns) / 1e6); }

std::string percent_text(double share) { return format("%.1f%%", 100.0 * share); }

std::string render_text(const Report& report, const TextOptions& o) {
  const bool show_group = report.groups.size() > 1;
  std::size_t ranks = 0;
  for (const auto& g : report.groups) ranks += g.ranks.size();
  std::string out;
  if (ranks > kSummaryAboveRanks && !o.all && !o.ranks) {
    for (const auto& g : report.groups) out += summary_text(g, o, report.root) + "\n";
    out += "(a block per rank: --ranks LIST or --all)\n";
    return out + totals_line(report);
  }
  for (const auto& g : report.groups) {
    for (const auto& r : g.ranks) {
      if (o.ranks && std::find(o.ranks->begin(), o.ranks->end(), r.rank) == o.ranks->end()) continue;
      out += rank_block(r, o.top_ops, show_group) + "\n";
    }
    const std::string skew = skew_block(g, show_group);
    if (!skew.empty() && !o.ranks) out += skew + "\n";
    const std::string wait = wait_block(g, show_group);
    if (!wait.empty() && !o.ranks) out += wait + "\n";
  }
  return out + totals_line(report);
}

}  // namespace chakrashim::tools::report
