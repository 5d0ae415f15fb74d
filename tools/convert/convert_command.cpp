#include "convert/convert_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "common/progress.h"
#include "common/rank_pool.h"
#include "common/rank_totals.h"
#include "common/usage.h"
#include "convert/convert_runner.h"

namespace chakrashim::tools::convert {

namespace {

constexpr const char* kUsage =
    "usage: chakrashim convert [options] DIR\n"
    "       chakrashim convert [options] ET_PLUS [--output OUT.et]\n"
    "\n"
    "Writes the Chakra execution trace (protobuf .et) that ASTRA-sim and Chakra's\n"
    "feeder read, as MLCommons `chakra_converter PyTorch` writes it for an ET+\n"
    "(the output of chakrashim link or chakra_trace_link; .json or .json.gz).\n"
    "Node ids, names, types (COMP, COMM_COLL from NCCL kernels with comm_type,\n"
    "COMM_SEND/COMM_RECV), ctrl deps, data deps from the call order per thread\n"
    "and inter_thread_dep, attributes (rf_id, op_schema, is_cpu_op, stream,\n"
    "comm_size, pg_name, ...), inputs and outputs, duration_micros from\n"
    "exclusive_dur; nodes nothing depends on are dropped, and a dependency cycle\n"
    "is refused. chakra_converter's sync-dep rule never keeps one (it compares\n"
    "start times it does not set), so none is written here either.\n"
    "\n"
    "DIR is a trace root (JOB_chakra/ and JOB_kineto/), one of those folders, or\n"
    "a JOB_linked/ folder of ET+ files. A capture's ranks are linked in memory (no\n"
    "ET+ file is written; `chakrashim link` writes them) and converted, ranks in\n"
    "parallel, into PREFIX.R.et: ASTRA-sim's workload prefix\n"
    "(--workload-configuration=PREFIX).\n"
    "Up to 8 ranks print a line each; more print only problems, then one summary\n"
    "line (ranks converted, nodes written, time; --verbose: a line per rank). On a\n"
    "terminal a progress bar shows ranks done, elapsed time and rate; in logs, a\n"
    "plain line every 10 s instead.\n"
    "\n"
    "options:\n"
    "  --input ET_PLUS     the ET+ to convert (or give it as the argument)\n"
    "  --output OUT        the .et to write (default: ET_PLUS less .json[.gz], plus .et)\n"
    "  --prefix PREFIX     with DIR: write PREFIX.R.et (default: JOB_et/rank beside\n"
    "                      the capture's folders)\n"
    "  --jobs N            ranks converted at once (default: the number of cores)\n"
    "  --quiet             print errors and warnings only\n"
    "  --verbose           with DIR: one line per rank, however many ranks\n"
    "  --log-filename F    accepted for chakra_converter's scripts; ignored\n"
    "  -h, --help          this text\n"
    "\n"
    "Bad input (not JSON, cut short, a device trace, a host ET never linked, a\n"
    "schema chakra_converter does not read, a dependency cycle) is one line naming\n"
    "the file; no output is left (it is written as .partial, renamed when done).\n"
    "exit status: 0 every rank converted, 1 a file or rank failed, 2 usage errors.\n";

int usage_error(const std::string& why) { return tools::usage_error("convert", why); }

struct Args {
  std::string input, output, prefix, positional;
  bool quiet = false, verbose = false;
  std::size_t jobs = default_threads();
};

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
    else if (arg == "--input" || arg == "-i") err = value(a.input);
    else if (arg == "--output" || arg == "-o") err = value(a.output);
    else if (arg == "--prefix" || arg == "--output-prefix") err = value(a.prefix);
    else if (arg == "--log-filename") err = value(text);
    else if (arg == "--quiet" || arg == "-q") a.quiet = true;
    else if (arg == "--verbose" || arg == "-v") a.verbose = true;
    else if (arg == "--simulate") err = "--simulate (chakra_converter's debug simulation) is not supported";
    else if (arg == "--jobs") {
      err = value(text);
      if (err.empty()) {
        const bool digits = !text.empty() && text.size() <= 4 && text.find_first_not_of("0123456789") == std::string::npos;
        const unsigned long n = digits ? std::stoul(text) : 0;
        if (n == 0 || n > 1024) err = "--jobs takes a number from 1 to 1024, not '" + text + "'";
        else a.jobs = n;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      err = unknown_option(arg, {"--input", "--output", "--prefix", "--output-prefix", "--jobs", "--quiet",
                                 "--verbose", "--log-filename", "--help"});
    } else if (a.positional.empty()) {
      a.positional = arg;
    } else {
      err = "one ET+ file or one capture folder at most";
    }
    if (!err.empty()) return err;
  }
  if (help) return {};
  if (!a.input.empty() && !a.positional.empty()) return "give the ET+ as the argument or with --input, not both";
  if (a.input.empty() && a.positional.empty()) return "give an ET+ file or a capture folder";
  return {};
}

// `rank_lines`: every converted rank's summary line; otherwise problems only.
int report(const std::vector<ConvertResult>& results, const std::vector<std::string>& skipped, bool rank_lines,
           bool single) {
  int status = 0;
  for (const auto& line : skipped) std::fprintf(stderr, "%s\n", line.c_str());
  for (const ConvertResult& r : results) {
    for (const auto& w : r.link_warnings)
      std::printf("rank %llu: warning: %s\n", static_cast<unsigned long long>(r.rank), w.c_str());
    if (!r.ok) {
      status = 1;
      // A single file's problem is the one line: "FILE: problem".
      std::fprintf(stderr, "chakrashim convert: %s\n", single ? r.error.c_str() : summary_line(r).c_str());
    } else if (rank_lines) {
      std::printf("%s\n", summary_line(r).c_str());
    }
  }
  return status;
}

}  // namespace

int run_convert_command(int argc, char** argv) {
  Args a;
  bool help = false;
  if (const std::string err = parse(argc, argv, a, help); !err.empty()) return usage_error(err);
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::string given = a.input.empty() ? a.positional : a.input;
  std::error_code ec;
  const bool folder = a.input.empty() && std::filesystem::is_directory(given, ec);
  if (folder) {
    if (!a.output.empty()) return usage_error("--output is for one ET+; with a folder use --prefix");
    const ConvertPlan plan = plan_convert(given, a.prefix);
    if (!plan.error.empty()) {
      for (const auto& line : plan.skipped) std::fprintf(stderr, "%s\n", line.c_str());
      std::fprintf(stderr, "chakrashim convert: %s\n", plan.error.c_str());
      return 1;
    }
    // As link does: progress in ranks, a line per rank only where it is read.
    const auto start = std::chrono::steady_clock::now();
    std::vector<ConvertResult> results;
    {
      RankProgress progress(plan.jobs.size(), a.quiet ? RankProgress::Mode::none : RankProgress::mode_for_stderr(),
                            "converting");
      results = convert_all(plan.jobs, a.jobs, [&progress] { progress.done_one(); });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int status = report(results, plan.skipped, rank_lines_wanted(results.size(), a.verbose, a.quiet), false);
    if (!a.quiet) std::printf("%s\n", totals_line(results, seconds).c_str());
    return plan.skipped.empty() ? status : 1;
  }
  if (!a.prefix.empty()) return usage_error("--prefix is for a capture folder; use --output");
  if (!std::filesystem::exists(given, ec)) {
    std::fprintf(stderr, "chakrashim convert: %s: no such file or folder\n", given.c_str());
    return 1;
  }
  ConvertJob job{0, given, a.output.empty() ? default_output_for(given) : a.output, std::nullopt};
  const auto size = std::filesystem::file_size(given, ec);
  const std::uint64_t bytes = ec ? 0 : size;
  ConvertResult result;
  {
    Progress progress(bytes, progress_wanted(bytes), "converting");
    result = convert_one(job, progress.counter());
  }
  if (result.ok && !a.quiet) {
    std::printf("%s: %llu nodes (%llu collectives, %llu sends, %llu receives) -> %s (%.2f s)\n", given.c_str(),
                static_cast<unsigned long long>(result.stats.written),
                static_cast<unsigned long long>(result.stats.collectives),
                static_cast<unsigned long long>(result.stats.sends),
                static_cast<unsigned long long>(result.stats.receives), result.output.c_str(), result.seconds);
  }
  return report({result}, {}, false, true);
}

}  // namespace chakrashim::tools::convert
