#include "check/check_runner.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "check/capture_rules.h"
#include "common/capture_scan.h"
#include "common/progress.h"
#include "common/rank_pool.h"

namespace chakrashim::tools::check {

namespace fs = std::filesystem;

namespace {

struct Job {
  const CaptureGroup* group;
  const RankFiles* files;
};

std::uint64_t total_bytes(const std::vector<Job>& jobs) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& j : jobs) {
    for (const auto& p : {j.files->host_path, j.files->device_path}) {
      if (!p) continue;
      const auto size = fs::file_size(*p, ec);
      if (!ec) total += size;
    }
  }
  return total;
}

}  // namespace

std::string display_root_of(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return parse_folder_name(p.filename().string()) ? p.parent_path().string() : p.string();
}

std::optional<ScanResult> scan_paths(const std::vector<std::string>& paths, std::string& display_root,
                                     std::string& usage_error) {
  if (paths.empty()) {
    usage_error = "no folder or file given";
    return std::nullopt;
  }
  std::error_code ec;
  for (const auto& p : paths) {
    if (!fs::exists(p, ec)) {
      usage_error = "no such file or folder: " + p;
      return std::nullopt;
    }
  }
  ScanResult scan;
  if (paths.size() == 1 && fs::is_directory(paths[0], ec)) {
    scan = scan_capture(paths[0]);
    display_root = display_root_of(paths[0]);
  } else {
    for (const auto& p : paths) {
      if (fs::is_directory(p, ec)) {
        usage_error = "give one folder, or trace files, not both: " + p;
        return std::nullopt;
      }
    }
    scan = group_files(paths);
  }
  if (!scan.error.empty()) {
    usage_error = paths[0] + ": " + scan.error;
    return std::nullopt;
  }
  return scan;
}

RunResult run_check(const RunRequest& request) {
  RunResult result;
  CheckOptions options;
  options.step_marker = request.step_marker;
  const auto found = scan_paths(request.paths, options.display_root, result.usage_error);
  if (!found) return result;
  const ScanResult& scan = *found;
  std::vector<Job> jobs;
  for (const auto& g : scan.groups)
    for (const auto& f : g.ranks) jobs.push_back({&g, &f});
  const std::uint64_t bytes = total_bytes(jobs);
  Progress progress(bytes, request.progress && progress_wanted(bytes));
  result.reports.resize(jobs.size());
  for_each_index(jobs.size(), request.threads, [&](std::size_t i) {
    result.reports[i] = check_rank(jobs[i].group->label, *jobs[i].files, options, progress.counter());
  });
  for (const auto& g : scan.groups) capture_rules(g, options.display_root, result.reports);
  // Nothing to check is no pass: a CI gate must not go green on a job that
  // wrote nothing.
  const bool any_files = std::any_of(scan.groups.begin(), scan.groups.end(), [](const CaptureGroup& g) {
    return !g.ranks.empty() || !g.partials.empty() || (g.label.empty() && !g.unknown.empty());
  });
  if (!any_files) {
    RankReport none;
    none.findings.push_back({RuleId::files_none, request.paths.size() == 1 && fs::is_directory(request.paths[0])
                                                     ? nothing_found(request.paths[0])
                                                     : std::string("no trace file among the paths given")});
    result.reports.push_back(std::move(none));
  }
  return result;
}

}  // namespace chakrashim::tools::check
