#include "link/link_command.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/capture_scan.h"
#include "common/options.h"
#include "common/progress.h"
#include "common/rank_pool.h"
#include "common/rank_totals.h"
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
    "A window cut by the job's exit or a signal holds a partial last step (its\n"
    "metadata's partial_last_step): what ran from that step's start on is left out\n"
    "(its ops, their GPU work, their ET nodes), said in one line.\n"
    "\n"
    "options:\n"
    "  --host ET              one rank's host ET (also --chakra-host-trace)\n"
    "  --device DEVICE        its device trace (also --chakra-device-trace)\n"
    "  --output OUT           the ET+ to write; .gz compresses (also --output-file)\n"
    "  --rank R               the rank, for messages (chakra_trace_link needs it for HTA)\n"
    "  --output-dir DIR       with a capture DIR: write rank-R.json files here\n"
    "  --gzip                 write gzip (rank-R.json.gz)\n"
    "  --keep-partial-step    keep the window's partial last step\n"
    "  --jobs N               ranks linked at once (default: the number of cores)\n"
    "  --quiet                print errors and warnings only\n"
    "  --verbose              one line per rank, however many ranks\n"
    "  --log-level L          accepted for chakra_trace_link's scripts; ignored\n"
    "  -h, --help             this text\n"
    "\n"
    "exit status: 0 every rank linked, 1 a rank failed, 2 usage errors.\n";

struct Args {
  std::string host, device, output, output_dir;
  std::vector<std::string> dirs;  // one at most
  std::optional<std::uint64_t> rank;
  bool gzip = false, quiet = false, verbose = false, keep_partial = false;
  std::size_t jobs = default_threads();
};

CommandLine command_line(Args& a) {
  CommandLine line("link", kUsage);
  line.value({"--host", "--chakra-host-trace"}, a.host)
      .value({"--device", "--chakra-device-trace"}, a.device)
      .value({"--output", "--output-file"}, a.output)
      .number({"--rank"}, 0, UINT32_MAX, "a number", a.rank)
      .value({"--output-dir"}, a.output_dir)
      .flag({"--gzip"}, a.gzip)
      .flag({"--keep-partial-step"}, a.keep_partial)
      .jobs(a.jobs)
      .flag({"--quiet", "-q"}, a.quiet)
      .flag({"--verbose", "-v"}, a.verbose)
      .ignored({"--log-level"})
      .positionals(a.dirs, 0, {}, 1, [](const std::string&) {
        return "one folder at most (for one rank's files use --host and --device)";
      });
  return line;
}

// What the options say together; empty when they agree.
std::string check_args(const Args& a) {
  const bool one_rank = !a.host.empty() || !a.device.empty() || !a.output.empty();
  if (one_rank && !a.dirs.empty()) return "give a folder, or --host/--device/--output, not both";
  if (one_rank && (a.host.empty() || a.device.empty() || a.output.empty()))
    return "one rank needs --host, --device and --output";
  if (!one_rank && a.dirs.empty()) return "give a capture folder, or --host, --device and --output";
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
  const CommandLine line = command_line(a);
  if (const auto status = line.read(argc, argv)) return *status;
  if (const std::string err = check_args(a); !err.empty()) return line.usage_error(err);
  if (a.dirs.empty()) {
    RankJob job{a.rank.value_or(rank_from_file_name(std::filesystem::path(a.device).filename().string()).value_or(0)),
                a.host, a.device, a.output, a.gzip, nullptr, a.keep_partial};
    const RankResult result = link_rank(job);
    if (const std::string left = left_out_line({result}); !left.empty())
      std::fprintf(stderr, "chakrashim link: %s\n", left.c_str());
    return report({result}, {}, !a.quiet);
  }
  const CapturePlan plan = plan_capture(a.dirs[0], a.output_dir, a.gzip, a.keep_partial);
  if (!plan.error.empty()) {
    std::fprintf(stderr, "chakrashim link: %s\n", plan.error.c_str());
    return 1;
  }
  for (const auto& w : plan.warnings) std::fprintf(stderr, "chakrashim link: warning: %s\n", w.c_str());
  const auto run = run_ranks(plan.jobs, a.jobs, a.quiet, "linking", link_rank);
  const bool rank_lines = rank_lines_wanted(run.results.size(), a.verbose, a.quiet);
  if (const std::string left = left_out_line(run.results); !left.empty())
    std::fprintf(stderr, "chakrashim link: %s\n", left.c_str());
  const int status = report(run.results, plan.skipped, rank_lines);
  if (!a.quiet) std::printf("%s\n", totals_line(run.results, run.seconds).c_str());
  return plan.skipped.empty() ? status : 1;
}

}  // namespace chakrashim::tools::link
