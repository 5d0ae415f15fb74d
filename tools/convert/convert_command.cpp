#include "convert/convert_command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/options.h"
#include "common/progress.h"
#include "common/rank_pool.h"
#include "common/rank_totals.h"
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
    "By default the output is made for ASTRA-sim: no ctrl dep names a node that is\n"
    "not written (Chakra's output keeps one on the dropped process root, which\n"
    "ASTRA-sim's feeder refuses); '## process_group:init ##' is a COMP node (ASTRA-sim\n"
    "asserts on METADATA); on a rank without NCCL kernels (gloo, CPU) the c10d\n"
    "collectives (c10d::allreduce_, ...) become COMM_COLL nodes with their type,\n"
    "byte size and process group, and c10d::send / recv_ COMM_SEND / COMM_RECV nodes\n"
    "with global comm_src, comm_dst, comm_tag and comm_size; and the time between\n"
    "top-level ops on each host thread is kept (folded into the next op; durations\n"
    "rounded so that each thread adds up to its captured time), less the time spent\n"
    "waiting for communication, which the comm nodes stand for. A world above 1\n"
    "gets PREFIX.network.yml, ASTRA-sim's network fitted to the captured\n"
    "collectives and messages (--network-configuration). A job with more than one\n"
    "process group also gets PREFIX.comm_groups.json (--comm-group-configuration).\n"
    "A world above 1 without any collective, or a rank not converted, gets a\n"
    "warning line.\n"
    "docs/convert.md, docs/simulate.md.\n"
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
    "  --chakra-exact      write what chakra_converter writes, byte for byte (none of\n"
    "                      the ASTRA-sim changes above)\n"
    "  --no-gaps           durations as chakra_converter's (int() of exclusive_dur,\n"
    "                      Optimizer.step 0), without the time between ops\n"
    "  --op-cost-ns N      the recorder's own cost per recorded op (ns), taken out of\n"
    "                      the timeline where it lands (parent op or gap); default:\n"
    "                      what the capture measured (its recording_cost), 0 for an\n"
    "                      ET+ given as a file; 0 keeps the captured timeline as is\n"
    "  --keep-partial-step with DIR: keep the window's partial last step (by default\n"
    "                      what ran from its start on is left out, said in one line)\n"
    "  --quiet             print errors and warnings only\n"
    "  --verbose           with DIR: one line per rank, however many ranks\n"
    "  --log-filename F    accepted for chakra_converter's scripts; ignored\n"
    "  -h, --help          this text\n"
    "\n"
    "Bad input (not JSON, cut short, a device trace, a host ET never linked, a\n"
    "schema chakra_converter does not read, a dependency cycle) is one line naming\n"
    "the file; no output is left (it is written as .partial, renamed when done).\n"
    "exit status: 0 every rank converted, 1 a file or rank failed, 2 usage errors.\n";

struct Args {
  std::string input, output, prefix;
  std::vector<std::string> given;  // one at most
  bool quiet = false, verbose = false;
  bool chakra_exact = false, no_gaps = false, keep_partial = false;
  // kFromCapture: not given (the capture's own figure).
  static constexpr std::uint64_t kFromCapture = ~std::uint64_t{0};
  std::uint64_t op_cost_ns = kFromCapture;
  std::size_t jobs = default_threads();
};

CommandLine command_line(Args& a) {
  CommandLine line("convert", kUsage);
  line.value({"--input", "-i"}, a.input)
      .value({"--output", "-o"}, a.output)
      .value({"--prefix", "--output-prefix"}, a.prefix)
      .jobs(a.jobs)
      .flag({"--quiet", "-q"}, a.quiet)
      .flag({"--verbose", "-v"}, a.verbose)
      .flag({"--chakra-exact"}, a.chakra_exact)
      .flag({"--no-gaps"}, a.no_gaps)
      .flag({"--keep-partial-step"}, a.keep_partial)
      .number({"--op-cost-ns"}, 0, 1000000, "nanoseconds from 0 to 1000000", a.op_cost_ns)
      .ignored({"--log-filename"})
      .refused({"--simulate"}, "--simulate (chakra_converter's debug simulation) is not supported")
      .positionals(a.given, 0, {}, 1, [](const std::string&) { return "one ET+ file or one capture folder at most"; });
  return line;
}

ConvertOptions options_of(const Args& a) {
  ConvertOptions o;
  o.chakra_exact = a.chakra_exact;
  o.gaps = !a.no_gaps;
  o.op_cost_from_capture = a.op_cost_ns == Args::kFromCapture;
  o.op_cost_ns = o.op_cost_from_capture ? 0 : static_cast<std::int64_t>(a.op_cost_ns);
  return o;
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

// A file for ASTRA-sim written beside the .et (its line unless quiet), or
// its error said; false on an error.
bool say_written(const char* what, const std::string& written, const std::string& error, bool quiet) {
  if (!error.empty()) {
    std::fprintf(stderr, "chakrashim convert: %s: %s\n", what, error.c_str());
    return false;
  }
  if (!written.empty() && !quiet) std::printf("%s\n", written.c_str());
  return true;
}

}  // namespace

int run_convert_command(int argc, char** argv) {
  Args a;
  const CommandLine line = command_line(a);
  if (const auto status = line.read(argc, argv)) return *status;
  if (!a.input.empty() && !a.given.empty())
    return line.usage_error("give the ET+ as the argument or with --input, not both");
  if (a.input.empty() && a.given.empty()) return line.usage_error("give an ET+ file or a capture folder");
  const std::string given = a.input.empty() ? a.given[0] : a.input;
  std::error_code ec;
  const bool folder = a.input.empty() && std::filesystem::is_directory(given, ec);
  if (folder) {
    if (!a.output.empty()) return line.usage_error("--output is for one ET+; with a folder use --prefix");
    const ConvertPlan plan = plan_convert(given, a.prefix, a.keep_partial);
    if (!plan.error.empty()) {
      for (const auto& skip : plan.skipped) std::fprintf(stderr, "%s\n", skip.c_str());
      std::fprintf(stderr, "chakrashim convert: %s\n", plan.error.c_str());
      return 1;
    }
    for (const auto& w : plan.warnings) std::fprintf(stderr, "chakrashim convert: warning: %s\n", w.c_str());
    // As link does: progress in ranks, a line per rank only where it is read.
    const ConvertOptions options = options_of(a);
    const auto run = run_ranks(plan.jobs, a.jobs, a.quiet, "converting", [&options](ConvertJob job) {
      job.options = options;
      return convert_one(job);
    });
    std::vector<std::pair<std::uint64_t, link::LeftOutStep>> left;
    for (const auto& r : run.results)
      if (r.ok && r.left_out) left.emplace_back(r.rank, *r.left_out);
    if (const std::string line = link::left_out_line(left); !line.empty())
      std::fprintf(stderr, "chakrashim convert: %s\n", line.c_str());
    const bool rank_lines = rank_lines_wanted(run.results.size(), a.verbose, a.quiet);
    const int status = report(run.results, plan.skipped, rank_lines, false);
    // Each rank's line says it; without them, one line for all.
    std::size_t refused = 0;
    const ConvertResult* first_refused = nullptr;
    for (const auto& r : run.results) {
      if (!r.ok || r.sim.cost_ns == 0 || r.sim.cost_refused.empty()) continue;
      if (refused++ == 0) first_refused = &r;
    }
    if (refused > 0 && !rank_lines)
      std::printf("%zu ranks took the recording cost measured between ops, not from their steps (rank %llu: %s)\n",
                  refused, static_cast<unsigned long long>(first_refused->rank), first_refused->sim.cost_refused.c_str());
    // ASTRA-sim's files beside the .et: Chakra's output has none, so
    // --chakra-exact writes none either.
    std::string fit_warning;
    if (!options.chakra_exact) {
      std::string error;
      if (!say_written("communicator groups", write_comm_groups(run.results, error), error, a.quiet) ||
          !say_written("network", write_network(run.results, error, &fit_warning), error, a.quiet))
        return 1;
    }
    if (!fit_warning.empty()) std::printf("warning: %s\n", fit_warning.c_str());
    // plan.warnings holds only the missing-rank lines: said once.
    for (const auto& w : world_warnings(run.results, !plan.warnings.empty())) std::printf("warning: %s\n", w.c_str());
    if (!a.quiet) std::printf("%s\n", totals_line(run.results, run.seconds).c_str());
    return plan.skipped.empty() ? status : 1;
  }
  if (!a.prefix.empty()) return line.usage_error("--prefix is for a capture folder; use --output");
  if (!std::filesystem::exists(given, ec)) {
    std::fprintf(stderr, "chakrashim convert: %s: no such file or folder\n", given.c_str());
    return 1;
  }
  ConvertJob job{0, given, a.output.empty() ? default_output_for(given) : a.output, std::nullopt, options_of(a)};
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
