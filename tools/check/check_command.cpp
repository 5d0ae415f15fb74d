#include "check/check_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "check/check_runner.h"
#include "check/et_check.h"
#include "check/render.h"
#include "common/capture_scan.h"
#include "common/options.h"
#include "common/rank_pool.h"
#include "common/usage.h"

namespace chakrashim::tools::check {

namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: chakrashim check [options] DIR\n"
    "       chakrashim check [options] FILE...\n"
    "\n"
    "Checks a capture against what Chakra and HTA need (docs/trace-format.md), per rank:\n"
    "the ET (valid, finalized, schema, attrs), the device trace (valid, rank for HTA,\n"
    "ProfilerStep#N, Record function ids, GPU ids and streams, equal child spans), the\n"
    "steps and rf_id join between the two, and the folder (.partial leftovers, ranks\n"
    "missing or unpaired). DIR is the trace root (with JOB_chakra/ and JOB_kineto/) or\n"
    "one of those folders; FILEs are ETs and device traces, plain or .gz. A trace root\n"
    "that holds only the windows of a repeated or triggered capture (step-S/ folders,\n"
    "docs/on-demand.md) has each window checked, in step order.\n"
    "\n"
    "Chakra .et files (FILE.et ..., or a folder of PREFIX.R.et such as JOB_et/ from\n"
    "chakrashim convert) are checked against what ASTRA-sim's feeder needs: every\n"
    "dep names a node of the file, no cycle, node types it knows, is_cpu_op on\n"
    "every node, comm nodes off the CPU with comm_type, comm_size and an integer\n"
    "pg_name; across files, the same collectives in the same order on every rank;\n"
    "warnings for a world above 1 without collectives and for a rank missing.\n"
    "\n"
    "One line per problem: 'rank R: error|warning [rule] what: fix', then a summary\n"
    "line per rank. Above 8 ranks the totals come first, ranks with the same clean\n"
    "verdict share one line ('510 ranks ok (0-509): steps 3-4 in both files; ...'),\n"
    "each rank with an error or warning gets its own lines, and a rule that hits\n"
    "many ranks gets one line naming them all. docs/check.md lists every rule.\n"
    "\n"
    "options:\n"
    "  --json               print one JSON document instead of lines\n"
    "  --strict             warnings fail too\n"
    "  --quiet              print errors and warnings only\n"
    "  --verbose            one summary line per rank, however many ranks\n"
    "  --step-marker TEXT   name prefix of the step-ending record (default Optimizer.step#)\n"
    "  --jobs N             ranks checked at once (default: the number of cores)\n"
    "  -h, --help           this text\n"
    "\n"
    "exit status: 0 clean or warnings only, 1 errors (or warnings with --strict),\n"
    "2 usage errors.\n";

int usage_error(const std::string& why) { return tools::usage_error("check", why); }

// `check TRACE_DIR` on such a root: each window checked as it is, one after
// the other, under a line that names it; the exit status is the worst.
int check_windows(const RunRequest& base, const std::vector<std::string>& windows, const TextOptions& text,
                  bool json, nlohmann::ordered_json* into) {
  int worst = 0;
  std::size_t failing = 0;
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const auto& w : windows) {
    RunRequest request = base;
    request.paths = {w};
    const RunResult result = run_check(request);
    if (!result.usage_error.empty()) return usage_error(result.usage_error);
    const int status = exit_status(count_findings(result.reports), text.strict);
    worst = std::max(worst, status);
    failing += status != 0;
    if (json) {
      doc[fs::path(w).filename().string()] = render_json(result.reports, text.strict);
    } else {
      std::printf("%s:\n", w.c_str());
      std::fputs(render_text(result.reports, text).c_str(), stdout);
    }
  }
  if (into) {
    *into = nlohmann::ordered_json{{"windows", doc}};
  } else if (json) {
    std::printf("%s\n", nlohmann::ordered_json{{"windows", doc}}.dump(2).c_str());
  } else {
    std::printf("chakrashim check: %zu window%s, %zu %s\n", windows.size(), windows.size() == 1 ? "" : "s",
                failing, failing == 1 ? "fails" : "fail");
  }
  return worst;
}

// A folder that holds a capture: JOB_chakra/JOB_kineto pairs, loose trace
// files, or the windows of a repeated or triggered capture.
bool holds_capture(const std::string& dir) {
  if (!fs::is_directory(dir)) return false;
  if (!window_folders(dir).empty()) return true;
  const ScanResult scan = scan_directory(dir);
  return std::any_of(scan.groups.begin(), scan.groups.end(),
                     [](const CaptureGroup& g) { return !g.ranks.empty() || !g.partials.empty(); });
}

// The capture's check (a fixed capture, or each window of a trace root of
// windows), printed as text or JSON, or its JSON put `into` a document of
// the caller's. The exit status.
int check_capture(const RunRequest& request, const TextOptions& text, bool json,
                  nlohmann::ordered_json* into = nullptr) {
  if (const auto windows = request.paths.size() == 1 ? window_folders(request.paths[0]) : std::vector<std::string>{};
      !windows.empty())
    return check_windows(request, windows, text, json, into);
  const RunResult result = run_check(request);
  if (!result.usage_error.empty()) return usage_error(result.usage_error);
  const int status = exit_status(count_findings(result.reports), text.strict);
  if (into) {
    *into = render_json(result.reports, text.strict);
  } else if (json) {
    std::printf("%s\n", render_json(result.reports, text.strict).dump(2).c_str());
  } else {
    std::fputs(render_text(result.reports, text).c_str(), stdout);
  }
  return status;
}

// Chakra .et files given, or a folder of them (a JOB_et/ that convert
// wrote): checked by check/et_check.h's rules instead of a capture's.
std::vector<std::string> et_files_given(const std::vector<std::string>& paths) {
#if CHAKRASHIM_WITH_CONVERT
  return et_files_in(paths);
#else
  for (const auto& p : paths)
    if (fs::path(p).extension() != ".et") return {};
  return paths;
#endif
}

}  // namespace

int run_check_command(int argc, char** argv) {
  RunRequest request;
  request.threads = default_threads();
  request.progress = true;
  bool json = false;
  TextOptions text;
  CommandLine line("check", kUsage);
  line.flag({"--json"}, json)
      .flag({"--strict"}, text.strict)
      .flag({"--quiet", "-q"}, text.quiet)
      .flag({"--verbose", "-v"}, text.verbose)
      .value({"--step-marker"}, request.step_marker)
      .jobs(request.threads)
      .positionals(request.paths, 1, "give a folder or trace files");
  if (const auto status = line.read(argc, argv)) return *status;
  if (const auto et_files = et_files_given(request.paths); !et_files.empty()) {
#if CHAKRASHIM_WITH_CONVERT
    // A trace root holding a capture beside .et files (`convert --prefix
    // ROOT/nc ROOT` writes them there): both are checked. The .et files
    // alone used to be, and the capture never was (issue #49).
    if (request.paths.size() == 1 && holds_capture(request.paths[0])) {
      if (!json) return std::max(check_capture(request, text, false), run_et_check(et_files, {text.strict, text.quiet, false}));
      nlohmann::ordered_json doc = nlohmann::ordered_json::object();
      const int capture = check_capture(request, text, true, &doc["capture"]);
      const int ets = run_et_check(et_files, {text.strict, text.quiet, true}, &doc["et_files"]);
      std::printf("%s\n", doc.dump(2).c_str());
      return std::max(capture, ets);
    }
    return run_et_check(et_files, {text.strict, text.quiet, json});
#else
    return usage_error(".et files are checked where `chakrashim convert` is built (it needs libprotobuf)");
#endif
  }
  return check_capture(request, text, json);
}

}  // namespace chakrashim::tools::check
