#include "link/link_command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/capture_scan.h"
#include "common/progress.h"
#include "common/rank_pool.h"
#include "common/rank_totals.h"
#include "common/usage.h"
#include "link/link_runner.h"

namespace chakrashim::tools::link {

namespace {

constexpr const char* kUsage =
    "usage: chakrashim link [options] DIR\n"
    "       chakrashim link [--rank R] --host ET --device DEVICE --output OUT\n"
    "\n"
    "Merges each rank's host ET and device trace into Chakra's ET+ (\"host + device\"\n"
    "trace), the input of chakra_converter, as MLCommons chakra_trace_link does:\n"
    "host nodes joined to device ops by rf_id get ts, inclusive_dur, exclusive_dur\n"
    "and inter_thread_dep; each kernel and memcpy becomes a child node of the host\n"
    "node that launched it (correlation -> launch -> op on the same thread with the\n"
    "same External id), with cat, name, ts, durations, stream, and pg_name on NCCL\n"
    "kernels; node ids are renumbered from 0. Memsets are not linked, as in Chakra.\n"
    "Host-only captures (no GPU ops) link too: host nodes are timed, no children.\n"
    "Not done: HTA's critical-path sync_dep (chakra_trace_link adds it from HTA).\n"
    "\n"
    "DIR is a trace root (JOB_chakra/ and JOB_kineto/), or one of those folders;\n"
    "every rank is linked, in parallel, into JOB_linked/rank-R.json beside them.\n"
    "Up to 8 ranks print a line each; more print only problems, then one summary\n"
    "line (--verbose: a line per rank). On a terminal a progress bar shows ranks\n"
    "done, elapsed time and rate; in logs, a plain line every 10 s instead.\n"
    "Each input is checked for its kind (an ET for --host, a device trace for\n"
    "--device) and the two for being one rank's (pid, rank, rf_ids).\n"
    "Inputs may be plain or gzip. Streaming: memory stays far below the inputs.\n"
    "\n"
    "options:\n"
    "  --host ET              one rank's host ET (also --chakra-host-trace)\n"
    "  --device DEVICE        its device trace (also --chakra-device-trace)\n"
    "  --output OUT           the ET+ to write; .gz compresses (also --output-file)\n"
    "  --rank R               the rank, for messages (chakra_trace_link needs it for HTA)\n"
    "  --output-dir DIR       with a capture DIR: write rank-R.json files here\n"
    "  --gzip                 write gzip (rank-R.json.gz)\n"
    "  --jobs N               ranks linked at once (default: the number of cores)\n"
    "  --quiet                print errors and warnings only\n"
    "  --verbose              one line per rank, however many ranks\n"
    "  --log-level L          accepted for chakra_trace_link's scripts; ignored\n"
    "  -h, --help             this text\n"
    "\n"
    "exit status: 0 every rank linked, 1 a rank failed, 2 usage errors.\n";

int usage_error(const std::string& why) { return tools::usage_error("link", why); }

const std::vector<std::string_view> kOptions = {
    "--host", "--chakra-host-trace", "--device", "--chakra-device-trace", "--output", "--output-file", "--rank",
    "--output-dir", "--gzip", "--jobs", "--quiet", "--verbose", "--log-level", "--help"};

struct Args {
  std::string host, device, output, output_dir, dir;
  std::optional<std::uint64_t> rank;
  bool gzip = false, quiet = false, verbose = false;
  std::size_t jobs = default_threads();
};

std::optional<std::uint64_t> to_number(const std::string& text, std::uint64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19)
    return std::nullopt;
  const auto v = std::stoull(text);
  if (v > max) return std::nullopt;
  return v;
}

// Returns an error text, or empty when the arguments are good.
std::string parse(int argc, char** argv, Args& a, bool& help) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::string& into) -> std::string {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') return std::string(arg) + " needs a value";
      into = argv[++i];
      return {};
    };
    std::string err, text;
    if (arg == "-h" || arg == "--help") help = true;
    else if (arg == "--host" || arg == "--chakra-host-trace") err = value(a.host);
    else if (arg == "--device" || arg == "--chakra-device-trace") err = value(a.device);
    else if (arg == "--output" || arg == "--output-file") err = value(a.output);
    else if (arg == "--output-dir") err = value(a.output_dir);
    else if (arg == "--gzip") a.gzip = true;
    else if (arg == "--quiet" || arg == "-q") a.quiet = true;
    else if (arg == "--verbose" || arg == "-v") a.verbose = true;
    else if (arg == "--log-level") err = value(text);
    else if (arg == "--rank" || arg == "--jobs") {
      err = value(text);
      if (err.empty() && arg == "--rank") {
        a.rank = to_number(text, UINT32_MAX);
        if (!a.rank) err = "--rank takes a number, not '" + text + "'";
      } else if (err.empty()) {
        const auto n = to_number(text, 1024);
        if (!n || *n == 0) err = "--jobs takes a number from 1 to 1024, not '" + text + "'";
        else a.jobs = *n;
      }
    } else if (!arg.empty() && arg[0] == '-') err = unknown_option(arg, kOptions);
    else if (a.dir.empty()) a.dir = arg;
    else err = "one folder at most (for one rank's files use --host and --device)";
    if (!err.empty()) return err;
  }
  if (help) return {};
  const bool one_rank = !a.host.empty() || !a.device.empty() || !a.output.empty();
  if (one_rank && !a.dir.empty()) return "give a folder, or --host/--device/--output, not both";
  if (one_rank && (a.host.empty() || a.device.empty() || a.output.empty()))
    return "one rank needs --host, --device and --output";
  if (!one_rank && a.dir.empty()) return "give a capture folder, or --host, --device and --output";
  if (!a.output_dir.empty() && one_rank) return "--output-dir is for a capture folder; use --output";
  return {};
}

// `rank_lines`: every rank's summary line; otherwise failed ranks only.
int report(const std::vector<RankResult>& results, const std::vector<std::string>& skipped, bool rank_lines) {
  int status = 0;
  for (const auto& line : skipped) std::fprintf(stderr, "%s\n", line.c_str());
  for (const RankResult& r : results) {
    if (!r.ok) status = 1;
    if (!r.ok || rank_lines) std::printf("%s\n", summary_line(r).c_str());
    for (const auto& w : r.warnings) std::printf("rank %llu: warning: %s\n", static_cast<unsigned long long>(r.rank), w.c_str());
  }
  return status;
}

}  // namespace

int run_link_command(int argc, char** argv) {
  Args a;
  bool help = false;
  if (const std::string err = parse(argc, argv, a, help); !err.empty()) return usage_error(err);
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a.dir.empty()) {
    RankJob job{a.rank.value_or(rank_from_file_name(std::filesystem::path(a.device).filename().string()).value_or(0)), a.host, a.device, a.output, a.gzip};
    return report({link_rank(job)}, {}, !a.quiet);
  }
  const CapturePlan plan = plan_capture(a.dir, a.output_dir, a.gzip);
  if (!plan.error.empty()) {
    std::fprintf(stderr, "chakrashim link: %s\n", plan.error.c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<RankResult> results;
  {
    RankProgress progress(plan.jobs.size(), a.quiet ? RankProgress::Mode::none : RankProgress::mode_for_stderr());
    results = link_ranks(plan.jobs, a.jobs, [&progress] { progress.done_one(); });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool rank_lines = rank_lines_wanted(results.size(), a.verbose, a.quiet);
  const int status = report(results, plan.skipped, rank_lines);
  if (!a.quiet) std::printf("%s\n", totals_line(results, seconds).c_str());
  return plan.skipped.empty() ? status : 1;
}

}  // namespace chakrashim::tools::link
