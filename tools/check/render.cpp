#include "check/render.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "check/capture_rules.h"
#include "common/missing_ranks.h"
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

// "; steps 3-4 in both files", or each file's steps where they differ.
std::string steps_text(const RankFigures& f) {
  if (f.steps_et && f.steps_device && *f.steps_et == *f.steps_device)
    return "; steps " + step_list(*f.steps_device) + " in both files";
  std::string out;
  if (f.steps_et) out += "; ET steps " + step_list(*f.steps_et);
  if (f.steps_device) out += "; device steps " + step_list(*f.steps_device);
  return out;
}

}  // namespace

Totals count_findings(const std::vector<RankReport>& reports) {
  Totals t;
  for (const auto& r : reports) {
    if (r.rank) ++t.ranks;
    for (const auto& f : r.findings) {
      const auto sev = severity_of(f);
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
  return prefix(report, show_group) + ": " + std::string(severity_name(severity_of(finding))) + " [" +
         std::string(r.name) + "] " + finding.detail + ": " + std::string(r.fix);
}

std::string summary_line(const RankReport& report, bool show_group) {
  std::uint64_t errors = 0, warnings = 0;
  for (const auto& f : report.findings) {
    const auto sev = severity_of(f);
    errors += sev == Severity::error;
    warnings += sev == Severity::warning;
  }
  std::string out = prefix(report, show_group) + ": ";
  out += errors + warnings == 0 ? "ok" : counted(errors, "error") + ", " + counted(warnings, "warning");
  const RankFigures& f = report.figures;
  out += steps_text(f);
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

std::string verdict_key(const RankReport& report) {
  std::string out = "ok";
  const RankFigures& f = report.figures;
  out += steps_text(f);
  if (f.join_total) out += "; rf_id join " + share(*f.join_matched, *f.join_total);
  if (!report.host_path) out += "; no ET";
  if (!report.device_path) out += "; no device trace";
  if (report.device_path && f.host_only) out += "; host-only";
  return out;
}

std::string totals_line(const std::vector<RankReport>& reports, bool strict) {
  const Totals t = count_findings(reports);
  // Ranks per run, in report order: two runs of a one-rank job are two runs
  // of one rank each, not two ranks.
  std::vector<std::pair<std::string, std::uint64_t>> runs;
  for (const auto& r : reports) {
    if (runs.empty() || runs.back().first != r.group) runs.emplace_back(r.group, 0);
    if (r.rank) ++runs.back().second;
  }
  std::string out = "chakrashim check: ";
  if (runs.size() > 1) {
    out += std::to_string(runs.size()) + " runs: ";
    for (std::size_t i = 0; i < runs.size(); ++i)
      out += (i ? ", " : "") + runs[i].first + " (" + counted(runs[i].second, "rank") + ")";
    out += "; ";
  } else {
    out += counted(t.ranks, "rank") + ", ";
  }
  out += counted(t.errors, "error") + ", " + counted(t.warnings, "warning");
  std::string notes;
  if (runs.size() == 1 && !runs[0].first.empty()) notes = "run " + runs[0].first;
  if (strict) notes += (notes.empty() ? "" : ", ") + std::string("--strict");
  if (!notes.empty()) out += " (" + notes + ")";
  return out + "\n";
}

namespace {

bool has_problem(const RankReport& r) {
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [](const Finding& f) { return severity_of(f) != Severity::info; });
}

std::string run_prefix(const std::string& group, bool show_group) {
  return show_group && !group.empty() ? "run " + group + ": " : std::string();
}

std::string per_rank_text(const std::vector<RankReport>& reports, const TextOptions& o) {
  const bool show_group = several_groups(reports);
  std::string out;
  // A note is said once per run, on its first rank (issue #49: the 300
  // characters of link.host_only came once per rank); the others' summary
  // lines carry it in a word ("host-only").
  std::set<std::pair<std::string, RuleId>> noted;
  for (const auto& r : reports) {
    for (const auto& f : r.findings) {
      if (severity_of(f) == Severity::info && (o.quiet || !noted.insert({r.group, f.rule}).second)) continue;
      out += finding_line(r, f, show_group) + "\n";
    }
    if (!o.quiet && r.rank) out += summary_line(r, show_group) + "\n";
  }
  if (!o.quiet) out += totals_line(reports, o.strict);
  return out;
}

// One line for a rule that many ranks share: every rank is named, the
// detail of the first stands for the rest.
std::string shared_finding_line(const std::string& group, bool show_group, const std::vector<const RankReport*>& ranks,
                                const Finding& first) {
  std::vector<std::uint64_t> numbers;
  for (const auto* r : ranks) numbers.push_back(*r->rank);
  const Rule& rl = rule(first.rule);
  return run_prefix(group, show_group) + std::string(severity_name(severity_of(first))) + " [" + std::string(rl.name) +
         "] on " + counted(ranks.size(), "rank") + " (" + rank_ranges(numbers) + "), e.g. rank " +
         std::to_string(*ranks.front()->rank) + ": " + first.detail + ": " + std::string(rl.fix);
}

std::string grouped_text(const std::vector<RankReport>& reports, const TextOptions& o) {
  const bool show_group = several_groups(reports);
  std::string out = o.quiet ? std::string() : totals_line(reports, o.strict);
  // Clean ranks, grouped by run and verdict, in order of first appearance.
  if (!o.quiet) {
    std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::uint64_t>>> clean;
    for (const auto& r : reports) {
      if (!r.rank || has_problem(r)) continue;
      const auto key = std::pair{r.group, verdict_key(r)};
      auto it = std::find_if(clean.begin(), clean.end(), [&](const auto& c) { return c.first == key; });
      if (it == clean.end()) it = clean.insert(clean.end(), {key, {}});
      it->second.push_back(*r.rank);
    }
    for (const auto& [key, ranks] : clean) {
      const std::string verdict = key.second.substr(2);  // after "ok"
      out += run_prefix(key.first, show_group) + counted(ranks.size(), "rank") + " ok (" + rank_ranges(ranks) + ")" +
             (verdict.empty() ? std::string() : ":" + verdict.substr(1)) + "\n";
    }
  }
  // Per run and rule, the ranks it hit. A rule that hits more ranks than a
  // handful gets one shared line; notes always do.
  std::map<std::pair<std::string, RuleId>, std::vector<std::pair<const RankReport*, const Finding*>>> hits;
  for (const auto& r : reports) {
    if (!r.rank) continue;
    for (const auto& f : r.findings) {
      auto& v = hits[{r.group, f.rule}];
      if (v.empty() || v.back().first != &r) v.emplace_back(&r, &f);
    }
  }
  const auto shared = [&](const RankReport& r, const Finding& f) {
    return severity_of(f) == Severity::info || hits[{r.group, f.rule}].size() > kGroupRanksAbove;
  };
  std::string notes;
  for (const auto& [key, list] : hits) {
    const Finding& first = *list.front().second;
    if (!shared(*list.front().first, first)) continue;
    if (severity_of(first) == Severity::info && o.quiet) continue;
    std::vector<const RankReport*> ranks;
    for (const auto& [r, f] : list) ranks.push_back(r);
    const std::string line = shared_finding_line(key.first, show_group, ranks, first) + "\n";
    (severity_of(first) == Severity::info ? notes : out) += line;
  }
  for (const auto& r : reports) {
    std::string mine;
    for (const auto& f : r.findings) {
      if (r.rank && shared(r, f)) continue;
      if (o.quiet && severity_of(f) == Severity::info) continue;
      mine += finding_line(r, f, show_group) + "\n";
    }
    if (mine.empty()) continue;
    out += mine;
    if (!o.quiet && r.rank) out += summary_line(r, show_group) + "\n";
  }
  return out + notes;
}

}  // namespace

std::string render_text(const std::vector<RankReport>& reports, const TextOptions& options) {
  std::size_t ranks = 0;
  for (const auto& r : reports) ranks += r.rank.has_value();
  return options.verbose || ranks <= kGroupRanksAbove ? per_rank_text(reports, options) : grouped_text(reports, options);
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
      j["findings"].push_back({{"rule", rl.name}, {"severity", severity_name(severity_of(f))},
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
