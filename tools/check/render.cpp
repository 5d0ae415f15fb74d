#include "check/render.h"

#include <cstdio>
#include <set>

#include "check/rank_rules.h"

namespace chakrashim::tools::check {

namespace {

std::string prefix(const RankReport& r, bool show_group) {
  std::string out = r.rank ? "rank " + std::to_string(*r.rank) : std::string("capture");
  if (show_group && !r.group.empty()) out += " (" + r.group + ")";
  return out;
}

bool several_groups(const std::vector<RankReport>& reports) {
  std::set<std::string> groups;
  for (const auto& r : reports) groups.insert(r.group);
  return groups.size() > 1;
}

std::string share(std::uint64_t matched, std::uint64_t total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", total == 0 ? 100.0 : 100.0 * matched / total);
  return buf;
}

std::string counted(std::uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace

Totals count_findings(const std::vector<RankReport>& reports) {
  Totals t;
  for (const auto& r : reports) {
    if (r.rank) ++t.ranks;
    for (const auto& f : r.findings) {
      const auto sev = rule(f.rule).severity;
      if (sev == Severity::error) ++t.errors;
      else if (sev == Severity::warning) ++t.warnings;
    }
  }
  return t;
}

int exit_status(const Totals& totals, bool strict) {
  return totals.errors > 0 || (strict && totals.warnings > 0) ? 1 : 0;
}

std::string finding_line(const RankReport& report, const Finding& finding, bool show_group) {
  const Rule& r = rule(finding.rule);
  return prefix(report, show_group) + ": " + std::string(severity_name(r.severity)) + " [" +
         std::string(r.name) + "] " + finding.detail + ": " + std::string(r.fix);
}

std::string summary_line(const RankReport& report, bool show_group) {
  std::uint64_t errors = 0, warnings = 0;
  for (const auto& f : report.findings) {
    const auto sev = rule(f.rule).severity;
    errors += sev == Severity::error;
    warnings += sev == Severity::warning;
  }
  std::string out = prefix(report, show_group) + ": ";
  out += errors + warnings == 0 ? "ok" : counted(errors, "error") + ", " + counted(warnings, "warning");
  const RankFigures& f = report.figures;
  if (f.steps_et && f.steps_device && *f.steps_et == *f.steps_device) {
    out += "; steps " + step_list(*f.steps_device) + " in both files";
  } else {
    if (f.steps_et) out += "; ET steps " + step_list(*f.steps_et);
    if (f.steps_device) out += "; device steps " + step_list(*f.steps_device);
  }
  if (f.join_total) {
    out += "; rf_id join " + std::to_string(*f.join_matched) + "/" + std::to_string(*f.join_total) + " (" +
           share(*f.join_matched, *f.join_total) + ")";
  }
  if (f.et_schema) out += "; ET " + *f.et_schema + ", " + counted(f.et_nodes, "node");
  if (report.device_path) {
    out += "; " + counted(f.events, "event");
    out += f.gpu_ops > 0 ? ", " + counted(f.gpu_ops, "GPU op") : std::string();
    if (f.host_only) out += ", host-only";
  }
  return out;
}

std::string render_text(const std::vector<RankReport>& reports, bool quiet, bool strict) {
  const bool show_group = several_groups(reports);
  std::string out;
  for (const auto& r : reports) {
    for (const auto& f : r.findings) {
      if (quiet && rule(f.rule).severity == Severity::info) continue;
      out += finding_line(r, f, show_group) + "\n";
    }
    if (!quiet && r.rank) out += summary_line(r, show_group) + "\n";
  }
  if (!quiet) {
    const Totals t = count_findings(reports);
    out += "chakrashim check: " + counted(t.ranks, "rank") + ", " + counted(t.errors, "error") + ", " +
           counted(t.warnings, "warning") + (strict ? " (--strict)" : "") + "\n";
  }
  return out;
}

nlohmann::ordered_json render_json(const std::vector<RankReport>& reports, bool strict) {
  using nlohmann::ordered_json;
  const Totals t = count_findings(reports);
  ordered_json doc;
  doc["status"] = exit_status(t, strict);
  doc["strict"] = strict;
  doc["ranks_checked"] = t.ranks;
  doc["errors"] = t.errors;
  doc["warnings"] = t.warnings;
  doc["reports"] = ordered_json::array();
  for (const auto& r : reports) {
    ordered_json j;
    j["group"] = r.group;
    j["rank"] = r.rank ? ordered_json(*r.rank) : ordered_json(nullptr);
    j["host_trace"] = r.host_path ? ordered_json(*r.host_path) : ordered_json(nullptr);
    j["device_trace"] = r.device_path ? ordered_json(*r.device_path) : ordered_json(nullptr);
    j["findings"] = ordered_json::array();
    for (const auto& f : r.findings) {
      const Rule& rl = rule(f.rule);
      j["findings"].push_back({{"rule", rl.name}, {"severity", severity_name(rl.severity)},
                               {"detail", f.detail}, {"fix", rl.fix}});
    }
    const RankFigures& fig = r.figures;
    ordered_json figures;
    figures["et_schema"] = fig.et_schema ? ordered_json(*fig.et_schema) : ordered_json(nullptr);
    figures["et_nodes"] = fig.et_nodes;
    figures["et_op_nodes"] = fig.et_op_nodes;
    figures["events"] = fig.events;
    figures["gpu_ops"] = fig.gpu_ops;
    figures["host_only"] = fig.host_only;
    figures["steps_et"] = fig.steps_et ? ordered_json(*fig.steps_et) : ordered_json(nullptr);
    figures["steps_device"] = fig.steps_device ? ordered_json(*fig.steps_device) : ordered_json(nullptr);
    if (fig.join_total) {
      figures["rf_id_join"] = {{"matched", *fig.join_matched}, {"total", *fig.join_total},
                               {"share", *fig.join_total == 0 ? 1.0 : double(*fig.join_matched) / double(*fig.join_total)}};
    } else {
      figures["rf_id_join"] = nullptr;
    }
    j["figures"] = std::move(figures);
    doc["reports"].push_back(std::move(j));
  }
  return doc;
}

}  // namespace chakrashim::tools::check
