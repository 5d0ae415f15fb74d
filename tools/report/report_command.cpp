#include "report/report_command.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/options.h"
#include "common/rank_pool.h"
#include "common/usage.h"
#include "config/value_grammar.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_runner.h"
#include "report/report_text.h"

namespace chakrashim::tools::report {

namespace {

constexpr const char* kUsage =
    "usage: chakrashim report [options] DIR\n"
    "       chakrashim report [options] FILE...\n"
    "\n"
    "What a capture says, from its device traces (JOB_kineto/rank-R.json[.gz]):\n"
    "  per rank: the captured steps, step time mean/min/max (each ProfilerStep#N's\n"
    "    duration), the split of each step into op self time and time outside any op\n"
    "    on the stepping thread, and the top ops by self time (all threads);\n"
    "  on GPU traces: GPU busy %, GPU time by kind (compute, communication = NCCL\n"
    "    kernels, memory = memcpy/memset) and how much communication ran under\n"
    "    compute, all inside the captured steps' window;\n"
    "  across ranks: the slowest and fastest rank per step, and the spread.\n"
    "DIR is the trace root (with JOB_kineto/) or that folder; FILEs are device traces.\n"
    "Step 0 holds the job's setup: it is marked, and left out of mean/min/max.\n"
    "\n"
    "Above 8 ranks the text is a summary per run instead of a block per rank: per\n"
    "step the rank count, min, median, p95 and max step time and the spread; the\n"
    "ranks more than 10% over a step's median, with what grew against the median\n"
    "rank; ranks that differ in structure; the top ops over all ranks. The page\n"
    "then leads with a rank x step heatmap. docs/report.md shows an example.\n"
    "\n"
    "options:\n"
    "  --html FILE           write a self-contained page with SVG charts (step time per\n"
    "                        rank, time breakdown per rank, one step's timeline) instead\n"
    "                        of the tables\n"
    "  --json                print one JSON document (times in integer ns) instead of tables\n"
    "  --top N               ops listed per rank (default 10, at most 100)\n"
    "  --top-ranks K         slowest ranks listed in the summary (default 5)\n"
    "  --ranks LIST          a block per rank for these ranks only: 0,3,8-15\n"
    "  --all                 a block per rank for every rank, however many\n"
    "  --timeline-rank R     the rank the page's timeline shows (default: the lowest)\n"
    "  --timeline-step N     the step it shows (default: that rank's median step)\n"
    "  --jobs N              ranks read at once (default: the number of cores)\n"
    "  -h, --help            this text\n"
    "\n"
    "exit status: 0 reported, 1 a rank's trace could not be read, 2 usage errors.\n";

int usage_error(const std::string& why) { return tools::usage_error("report", why); }

// What the page says it shows: the folder given, or the files' folder.
std::string display_folder(const std::vector<std::string>& paths) {
  if (paths.size() == 1) return paths[0];
  return paths.empty() ? std::string() : std::to_string(paths.size()) + " files";
}

}  // namespace

int run_report_command(int argc, char** argv) {
  ReportRequest request;
  request.threads = default_threads();
  request.progress = true;
  bool json = false;
  TextOptions text;
  std::string html_path;
  constexpr const char* kInRange = "a number in its range";
  CommandLine line("report", kUsage);
  line.value({"--html"}, html_path)
      .flag({"--json"}, json)
      .number({"--top"}, 1, 100, kInRange, text.top_ops)
      .number({"--top-ranks"}, 1, 1000, kInRange, text.top_ranks)
      .value({"--ranks"},
             [&](std::string_view, const std::string& value) {
               const auto set = config::parse_rank_list(value);
               if (!set) return "--ranks takes a list like 0,3,8-15, not '" + value + "'";
               text.ranks = std::vector<std::uint64_t>{};
               request.only_ranks = *set;
               return std::string();
             })
      .flag({"--all"}, text.all)
      .number({"--timeline-rank"}, 0, UINT64_MAX - 1, kInRange, request.timeline_rank)
      .number({"--timeline-step"}, 0, UINT64_MAX - 1, kInRange, request.timeline_step)
      .number({"--jobs"}, 1, 1024, kInRange, request.threads)
      .positionals(request.paths, 1, "give a folder or device trace files");
  if (const auto status = line.read(argc, argv)) return *status;
  request.want_timeline = !html_path.empty();
  const Report report = run_report(request);
  if (!report.usage_error.empty()) return usage_error(report.usage_error);
  for (const auto& w : report.warnings) std::fprintf(stderr, "chakrashim report: warning: %s\n", w.c_str());
  if (text.ranks) {
    for (const auto& g : report.groups)
      for (const auto& r : g.ranks) text.ranks->push_back(r.rank);
  }
  if (!html_path.empty()) {
    std::ofstream out(html_path, std::ios::binary | std::ios::trunc);
    out << render_html(report, HtmlOptions{text.top_ops, text.top_ranks, display_folder(request.paths)});
    out.close();
    if (!out) {
      std::fprintf(stderr, "chakrashim report: cannot write %s\n", html_path.c_str());
      return 1;
    }
  }
  if (json) {
    std::printf("%s\n", render_json(report, text.top_ops).dump(2).c_str());
  } else if (!html_path.empty()) {
    // The page instead of the tables (issue #49: both went out, and the
    // page's line was lost at the end of a long report).
    std::printf("chakrashim report: wrote %s\n", html_path.c_str());
  } else {
    std::fputs(render_text(report, text).c_str(), stdout);
  }
  for (const auto& g : report.groups)
    for (const auto& r : g.ranks)
      if (!r.error.empty()) return 1;
  return 0;
}

}  // namespace chakrashim::tools::report
