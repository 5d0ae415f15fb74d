#include "report/report_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

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
    "  --html FILE           also write a self-contained page with SVG charts (step time\n"
    "                        per rank, time breakdown per rank, one step's timeline)\n"
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

const std::vector<std::string_view> kOptions = {"--html", "--json", "--top", "--top-ranks", "--ranks", "--all",
                                                "--timeline-rank", "--timeline-step", "--jobs", "--help"};

// "12" -> 12; nullopt for anything but plain digits in [min, max].
std::optional<std::uint64_t> number(const std::string& text, std::uint64_t min, std::uint64_t max) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::uint64_t n = std::strtoull(text.c_str(), nullptr, 10);
  if (n < min || n > max) return std::nullopt;
  return n;
}

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
  bool json = false, options_done = false;
  TextOptions text;
  std::string html_path;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (options_done || arg.empty() || arg[0] != '-' || arg == "-") {
      request.paths.emplace_back(arg);
    } else if (arg == "--") {
      options_done = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--all") {
      text.all = true;
    } else if (arg == "--ranks") {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') return usage_error("--ranks needs a value");
      const std::string value = argv[++i];
      const auto set = config::parse_rank_list(value);
      if (!set) return usage_error("--ranks takes a list like 0,3,8-15, not '" + value + "'");
      text.ranks = std::vector<std::uint64_t>{};
      request.only_ranks = *set;
    } else if (arg == "--html" || arg == "--top" || arg == "--jobs" || arg == "--timeline-rank" ||
               arg == "--timeline-step" || arg == "--top-ranks") {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') return usage_error(std::string(arg) + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--html") {
        html_path = value;
        continue;
      }
      const auto n = arg == "--top"         ? number(value, 1, 100)
                     : arg == "--top-ranks" ? number(value, 1, 1000)
                     : arg == "--jobs"      ? number(value, 1, 1024)
                                            : number(value, 0, UINT64_MAX - 1);
      if (!n) return usage_error(std::string(arg) + " takes a number in its range, not '" + value + "'");
      if (arg == "--top") text.top_ops = *n;
      else if (arg == "--top-ranks") text.top_ranks = *n;
      else if (arg == "--jobs") request.threads = *n;
      else if (arg == "--timeline-rank") request.timeline_rank = *n;
      else request.timeline_step = *n;
    } else {
      return usage_error(unknown_option(arg, kOptions));
    }
  }
  if (request.paths.empty()) return usage_error("give a folder or device trace files");
  request.want_timeline = !html_path.empty();
  const Report report = run_report(request);
  if (!report.usage_error.empty()) return usage_error(report.usage_error);
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
  } else {
    std::fputs(render_text(report, text).c_str(), stdout);
    if (!html_path.empty()) std::printf("wrote %s\n", html_path.c_str());
  }
  for (const auto& g : report.groups)
    for (const auto& r : g.ranks)
      if (!r.error.empty()) return 1;
  return 0;
}

}  // namespace chakrashim::tools::report
