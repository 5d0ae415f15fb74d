#include "report/report_runner.h"

#include <filesystem>
#include <system_error>

#include "check/check_runner.h"
#include "common/missing_ranks.h"
#include "common/run_mix.h"
#include "common/progress.h"
#include "common/rank_pool.h"

namespace chakrashim::tools::report {

namespace {

struct Job {
  std::size_t group;
  const RankFiles* files;
  bool timeline;
};

std::uint64_t total_bytes(const std::vector<Job>& jobs) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& j : jobs) {
    if (!j.files->device_path) continue;
    const auto size = std::filesystem::file_size(*j.files->device_path, ec);
    if (!ec) total += size;
  }
  return total;
}

}  // namespace

Report run_report(const ReportRequest& request) {
  Report report;
  RankOptions options;
  const auto scan = check::scan_paths(request.paths, options.display_root, report.usage_error);
  if (!scan) return report;
  // The ET alone holds no times: a folder of ETs only is nothing to report.
  std::vector<Job> jobs;
  bool timeline_placed = false;
  for (std::size_t g = 0; g < scan->groups.size(); ++g) {
    for (const auto& f : scan->groups[g].ranks) {
      if (!f.device_path) continue;
      if (request.only_ranks && !request.only_ranks->contains(f.rank)) continue;
      const bool wanted = request.want_timeline && !timeline_placed && g == 0 &&
                          (!request.timeline_rank || *request.timeline_rank == f.rank);
      timeline_placed = timeline_placed || wanted;
      jobs.push_back({g, &f, wanted});
    }
  }
  report.root = options.display_root;
  if (jobs.empty()) {
    if (request.only_ranks) {
      report.usage_error = "--ranks: no such rank in " + request.paths[0];
    } else if (request.paths.size() == 1 && std::filesystem::is_directory(request.paths[0])) {
      report.usage_error = nothing_found(request.paths[0]) + " (the report needs JOB_kineto/rank-R.json)";
    } else {
      report.usage_error = "no device trace among the files given";
    }
    return report;
  }
  if (request.timeline_rank && request.want_timeline && !timeline_placed) {
    report.usage_error = "--timeline-rank " + std::to_string(*request.timeline_rank) + ": no such rank";
    return report;
  }
  // Two runs' ranks are no one job: their skew and waits would compare
  // jobs run minutes apart (issue #49). --ranks may pick one run's.
  for (const auto& g : scan->groups) {
    if (std::string mixed = mixed_runs_line(g, request.only_ranks); !mixed.empty()) {
      report.usage_error = mixed + "; `chakrashim check` says more: give one run's files, or --ranks for one run's ranks";
      return report;
    }
  }
  const std::uint64_t bytes = total_bytes(jobs);
  Progress progress(bytes, request.progress && progress_wanted(bytes), "reading");
  std::vector<RankStats> stats(jobs.size());
  for_each_index(jobs.size(), request.threads, [&](std::size_t i) {
    RankOptions mine = options;
    mine.want_timeline = jobs[i].timeline;
    mine.timeline_step = request.timeline_step;
    stats[i] = report_rank(scan->groups[jobs[i].group].label, *jobs[i].files, mine, progress.counter());
  });
  // A step the timeline cannot show is a usage error, as a bad rank is: the
  // page would silently lose its timeline.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].timeline || !request.timeline_step || !stats[i].error.empty() || stats[i].timeline) continue;
    std::string steps;
    for (const auto& s : stats[i].steps) steps += (steps.empty() ? "" : ",") + std::to_string(s.step);
    report.usage_error = "--timeline-step " + std::to_string(*request.timeline_step) + ": rank " +
                         std::to_string(stats[i].rank) + " has no such step (its steps: " +
                         (steps.empty() ? std::string("none") : steps) + ")";
    return report;
  }
  for (std::size_t g = 0; g < scan->groups.size(); ++g) {
    GroupReport group;
    group.label = scan->groups[g].label;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].group == g) group.ranks.push_back(std::move(stats[i]));
    if (group.ranks.empty()) continue;
    if (std::string missing = missing_ranks_line(scan->groups[g]); !missing.empty())
      report.warnings.push_back(std::move(missing));
    std::vector<RankStepTimes> times;
    for (const auto& r : group.ranks)
      if (r.error.empty()) times.emplace_back(r.rank, &r.steps);
    group.skew = step_skew(times);
    std::vector<std::pair<std::uint64_t, const std::vector<CollectiveSpan>*>> collectives;
    for (const auto& r : group.ranks)
      if (r.error.empty()) collectives.emplace_back(r.rank, &r.collectives);
    group.waits = collective_waits(collectives);
    report.groups.push_back(std::move(group));
  }
  return report;
}

}  // namespace chakrashim::tools::report
