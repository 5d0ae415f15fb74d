#include "report/report_text.h"

#include <cstdio>

#include "report/kernel_kind.h"

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
    out += format("  %-10llu %11s %11s %15s%s\n", static_cast<unsigned long long>(s.step), ms_text(s.dur_ns).c_str(),
                  ms_text(s.ops_self_ns).c_str(), ms_text(s.outside_ops_ns).c_str(),
                  s.partial ? "  (partial: left out of mean/min/max)" : "");
  }
  return out;
}

std::string ops_table(const RankStats& r, std::size_t top) {
  std::int64_t step_total = 0;
  for (const auto& s : r.steps) step_total += s.dur_ns;
  std::string out = format("  top %zu ops by self time (all threads; share of the captured steps' time):\n",
                           std::min(top, r.ops.size()));
  out += "     self ms   share    calls    total ms  op\n";
  for (std::size_t i = 0; i < r.ops.size() && i < top; ++i) {
    const auto& op = r.ops[i];
    out += format("  %10s %7s %8llu %11s  %s\n", ms_text(op.totals.self_ns).c_str(),
                  share_of(op.totals.self_ns, step_total).c_str(), static_cast<unsigned long long>(op.totals.calls),
                  ms_text(op.totals.total_ns).c_str(), clipped(op.name, 80).c_str());
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
    out += format(": mean %s ms, min %s, max %s\n", ms_text(s.mean_ns).c_str(), ms_text(s.min_ns).c_str(),
                  ms_text(s.max_ns).c_str());
    out += steps_table(r);
  } else {
    out += " (no ProfilerStep#N: no step times)\n";
  }
  out += ops_table(r, top);
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

}  // namespace

std::string ms_text(std::int64_t ns) { return format("%.3f", static_cast<double>(ns) / 1e6); }

std::string percent_text(double share) { return format("%.1f%%", 100.0 * share); }

std::string render_text(const Report& report, std::size_t top_ops) {
  const bool show_group = report.groups.size() > 1;
  std::string out;
  std::size_t ranks = 0;
  for (const auto& g : report.groups) {
    for (const auto& r : g.ranks) {
      out += rank_block(r, top_ops, show_group) + "\n";
      ++ranks;
    }
    const std::string skew = skew_block(g, show_group);
    if (!skew.empty()) out += skew + "\n";
  }
  out += format("chakrashim report: %zu rank%s\n", ranks, ranks == 1 ? "" : "s");
  return out;
}

}  // namespace chakrashim::tools::report
