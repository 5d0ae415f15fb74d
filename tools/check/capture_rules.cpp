#include "check/capture_rules.h"

#include <algorithm>

#include "check/rank_check.h"
#include "common/missing_ranks.h"
#include "common/run_mix.h"
#include "config/value_grammar.h"
#include "files/publish.h"

namespace chakrashim::tools::check {

namespace {

RankReport& report_for(std::vector<RankReport>& reports, const std::string& group,
                       std::optional<std::uint64_t> rank) {
  for (auto& r : reports) {
    if (r.group == group && r.rank == rank) return r;
  }
  RankReport fresh;
  fresh.group = group;
  fresh.rank = rank;
  reports.push_back(std::move(fresh));
  return reports.back();
}

// The group's metadata, from the first device trace that has it: every rank
// of a run writes the same world size and filter.
std::optional<CaptureMeta> group_meta(const std::vector<RankReport>& reports, const std::string& group) {
  for (const auto& r : reports) {
    if (r.group == group && r.meta) return r.meta;
  }
  return std::nullopt;
}

// Files of two runs in one capture (issue #49): run_mix.h; and one rank
// whose ET and device trace name two runs.
void mixed_run_rules(const std::string& group, std::vector<RankReport>& reports) {
  std::vector<RankRunId> runs;
  std::vector<std::string> split;
  for (const auto& r : reports) {
    if (r.group != group || !r.rank) continue;
    RankRunId run;
    run.rank = *r.rank;
    run.run = r.meta && r.meta->run ? r.meta->run : r.et_run;
    run.world_size = r.meta && r.meta->world_size ? r.meta->world_size : r.et_meta_world_size;
    runs.push_back(run);
    if (r.meta && r.meta->run && r.et_run && *r.meta->run != *r.et_run)
      split.push_back("rank " + std::to_string(*r.rank) + "'s ET is of run " + *r.et_run +
                      ", its device trace of run " + *r.meta->run);
  }
  std::string detail = mixed_runs_detail(runs);
  for (const auto& s : split) detail += (detail.empty() ? "" : "; ") + s;
  if (!detail.empty())
    report_for(reports, group, std::nullopt).findings.push_back({RuleId::ranks_mixed_runs, detail});
}

void unpaired_rules(const CaptureGroup& group, const std::string& root, std::vector<RankReport>& reports) {
  const bool loose = group.label.empty();
  if (loose) {
    // Loose files: one kind alone is a fine thing to check (an ET by
    // itself); both kinds given means pairs were meant.
    const bool hosts = std::any_of(group.ranks.begin(), group.ranks.end(), [](const RankFiles& f) { return f.host_path.has_value(); });
    const bool devices = std::any_of(group.ranks.begin(), group.ranks.end(), [](const RankFiles& f) { return f.device_path.has_value(); });
    if (!hosts || !devices) return;
  } else if (std::none_of(group.ranks.begin(), group.ranks.end(),
                          [](const RankFiles& f) { return f.device_path.has_value(); }) &&
             std::none_of(reports.begin(), reports.end(), [&](const RankReport& r) {
               return r.group == group.label && r.et_device_trace == "on";
             })) {
    // A run's folder with ETs and no device trace at all is what
    // CHAKRA_DEVICE_TRACE=0 writes: chakrashim's ETs say so ("off"), torch's
    // say nothing. One whose ET says its window has a device trace lost it
    // (issue #49: taken for a capture without one). A device trace missing
    // beside others' is an error.
    return;
  }
  for (const auto& files : group.ranks) {
    if (files.host_path && files.device_path) continue;
    RankReport& report = report_for(reports, group.label, files.rank);
    if (!files.host_path) {
      // CHAKRA_HOST_TRACE=0 writes no ET on purpose, and says so.
      if (report.meta && report.meta->host_trace && *report.meta->host_trace != "on") continue;
      report.findings.push_back({RuleId::ranks_unpaired, display_path(*files.device_path, root) +
                                                             (loose ? " has no ET of the same rank among the files given"
                                                                    : " has no ET beside it in the _chakra folder")});
    } else if (report.et_device_trace == "off") {
      continue;  // CHAKRA_DEVICE_TRACE=0, as the ET says
    } else if (report.et_device_trace == "on") {
      report.findings.push_back({RuleId::ranks_unpaired,
                                 display_path(*files.host_path, root) +
                                     " says its window has a device trace, and there is none" +
                                     (loose ? " among the files given" : " beside it in the _kineto folder") +
                                     ": the process died after writing the ET, the device trace could not be "
                                     "written (see the job's log), or it was removed"});
    } else {
      report.findings.push_back({RuleId::ranks_unpaired, display_path(*files.host_path, root) +
                                                             (loose ? " has no device trace of the same rank among the files given"
                                                                    : " has no device trace beside it in the _kineto folder")});
    }
  }
}

bool has_rank(const CaptureGroup& group, std::uint64_t rank) {
  return std::any_of(group.ranks.begin(), group.ranks.end(), [rank](const RankFiles& f) { return f.rank == rank; });
}

// With CHAKRA_DEVICE_TRACE=0 no file carries the metadata; the ETs still
// record the world size in their process-group node, but not CHAKRA_RANKS.
std::optional<std::uint64_t> et_world_size(const std::vector<RankReport>& reports, const std::string& group) {
  for (const auto& r : reports) {
    if (r.group == group && r.et_world_size) return r.et_world_size;
  }
  return std::nullopt;
}

void missing_et_rank_rules(const CaptureGroup& group, std::uint64_t world_size, std::vector<RankReport>& reports) {
  for (std::uint64_t r = 0; r < world_size; ++r) {
    if (has_rank(group, r)) continue;
    // A warning, not an error: the ETs do not say whether CHAKRA_RANKS left
    // the rank out on purpose.
    report_for(reports, group.label, r)
        .findings.push_back({RuleId::ranks_missing,
                             "rank " + std::to_string(r) + " of world size " + std::to_string(world_size) +
                                 " (from the ETs' process groups) has no ET; without device traces the "
                                 "capture does not record whether CHAKRA_RANKS left it out",
                             Severity::warning});
  }
}

void missing_rank_rules(const CaptureGroup& group, std::vector<RankReport>& reports) {
  const auto meta = group_meta(reports, group.label);
  if (!meta) {
    if (const auto world = et_world_size(reports, group.label)) missing_et_rank_rules(group, *world, reports);
    return;
  }
  if (!meta->world_size) return;
  std::optional<config::RankSet> filter;
  if (meta->ranks_filter) filter = config::parse_rank_list(*meta->ranks_filter);
  std::vector<std::uint64_t> filtered;
  for (std::uint64_t r = 0; r < *meta->world_size; ++r) {
    if (has_rank(group, r)) continue;
    if (filter && !filter->contains(r)) {
      filtered.push_back(r);
      continue;
    }
    report_for(reports, group.label, r)
        .findings.push_back({RuleId::ranks_missing, "rank " + std::to_string(r) + " of world size " +
                                                        std::to_string(*meta->world_size) + " has no files"});
  }
  if (!filtered.empty()) {
    report_for(reports, group.label, std::nullopt)
        .findings.push_back({RuleId::ranks_filtered, "ranks " + rank_ranges(filtered) + " of world size " +
                                                         std::to_string(*meta->world_size) +
                                                         " are absent because of CHAKRA_RANKS=" + *meta->ranks_filter});
  }
}

}  // namespace

void capture_rules(const CaptureGroup& group, const std::string& display_root,
                   std::vector<RankReport>& reports) {
  for (const auto& p : group.partials) {
    report_for(reports, group.label, p.rank)
        .findings.push_back(files::partial_state(p.path) == files::PartialState::being_written
                                ? Finding{RuleId::files_in_progress,
                                          display_path(p.path, display_root) + " is being written by a live capture"}
                                : Finding{RuleId::files_partial, display_path(p.path, display_root) + " is left over"});
  }
  for (const auto& path : group.unknown) {
    // Loose files must be traces; folder scans skip other files quietly.
    if (!group.label.empty()) continue;
    report_for(reports, group.label, std::nullopt)
        .findings.push_back({RuleId::files_unreadable,
                             display_path(path, display_root) + " " + describe_unknown_file(path)});
  }
  unpaired_rules(group, display_root, reports);
  mixed_run_rules(group.label, reports);
  if (!group.label.empty()) missing_rank_rules(group, reports);
  std::stable_sort(reports.begin(), reports.end(), [](const RankReport& a, const RankReport& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();  // capture-wide last
    return a.rank < b.rank;
  });
}

}  // namespace chakrashim::tools::check
