#include "simulate/simulate_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <system_error>
#include <vector>

#include "common/options.h"
#include "convert/convert_command.h"
#include "convert/convert_runner.h"
#include "convert/et_file_reader.h"
#include "simulate/astra_runner.h"
#include "simulate/sim_compare.h"

namespace chakrashim::tools::simulate {

namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: chakrashim simulate [options] DIR\n"
    "\n"
    "Runs a capture in ASTRA-sim and prints, per rank, how close the simulated\n"
    "time comes to the window the rank captured, so that nobody has to compare\n"
    "by hand.\n"
    "\n"
    "DIR is a capture (a trace root with JOB_chakra/ and JOB_kineto/, or one of\n"
    "those folders), converted first as `chakrashim convert DIR` does (its\n"
    "output is printed; the .et files go to JOB_et/), or a folder of .et files\n"
    "that convert wrote (JOB_et/). ASTRA-sim's analytical backend runs the\n"
    "ranks' PREFIX.R.et, one NPU per rank (a single rank runs as two copies:\n"
    "ASTRA-sim needs two NPUs), on the network convert fitted to the capture\n"
    "(PREFIX.network.yml; a ring at 50 GB/s and 500 ns where there is none),\n"
    "with the communicator groups of PREFIX.comm_groups.json where the job had\n"
    "more than one process group, and the ring system configuration of\n"
    "docs/simulate.md.\n"
    "\n"
    "Per rank: the captured window (the ProfilerStep#N spans of the steps\n"
    "converted), the recording cost convert took out of the timeline, what is\n"
    "left (expected), the simulated time, and simulated / expected. A ratio\n"
    "beyond +-15% (--tolerance) is a warning that names the rank; so is a rank\n"
    "ASTRA-sim did not finish.\n"
    "\n"
    "options:\n"
    "  --astra-sim BIN   ASTRA-sim's binary (default: $ASTRA_SIM_BIN, else\n"
    "                    AstraSim_Analytical_Congestion_Unaware on PATH)\n"
    "  --network FILE    ASTRA-sim's network .yml instead of the fitted one: a\n"
    "                    target cluster's, for what-if runs\n"
    "  --system FILE     ASTRA-sim's system .json instead of the ring one\n"
    "  --prefix PREFIX   the .et files' prefix: where a capture is converted to\n"
    "                    (default JOB_et/rank), or which set of a folder to run\n"
    "  --tolerance PCT   the warning band around a ratio of 1, in percent\n"
    "                    (default 15)\n"
    "  --timeout S       ASTRA-sim's time limit in seconds (default 3600)\n"
    "  --keep            keep ASTRA-sim's folder (configuration, output) and\n"
    "                    print where it is (kept anyway when a rank fails)\n"
    "  -h, --help        this text\n"
    "docs/simulate.md.\n"
    "\n"
    "exit status: 0 every rank simulated, within the tolerance; 1 a rank not\n"
    "simulated or beyond the tolerance, or the conversion failed; 2 usage\n"
    "errors or no ASTRA-sim.\n";

struct Args {
  std::vector<std::string> given;
  std::string astra, network, system, prefix;
  std::uint64_t tolerance_pct = 15, timeout_s = 3600;
  bool keep = false;
};

// PREFIX.R.et of one set of files.
struct EtSet {
  std::string prefix;
  std::map<std::uint64_t, std::string> ranks;
};

void say(const std::string& line) { std::printf("chakrashim simulate: %s\n", line.c_str()); }
void warn(const std::string& line) { std::printf("chakrashim simulate: warning: %s\n", line.c_str()); }
void fail(const std::string& line) { std::fprintf(stderr, "chakrashim simulate: %s\n", line.c_str()); }

bool regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The .et sets in `dir` (regular files named PREFIX.R.et, no link
// followed), by prefix.
std::map<std::string, EtSet> et_sets_in(const std::string& dir) {
  static const std::regex kName(R"((.+)\.([0-9]{1,9})\.et)");
  std::map<std::string, EtSet> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    std::smatch m;
    const std::string name = it->path().filename().string();
    if (!std::regex_match(name, m, kName)) continue;
    const std::string prefix = (fs::path(dir) / m[1].str()).string();
    out[prefix].prefix = prefix;
    out[prefix].ranks[std::stoull(m[2].str())] = it->path().string();
  }
  return out;
}

// The set of PREFIX.R.et for ranks 0, 1, ... as long as they exist.
EtSet et_set_of(const std::string& prefix) {
  EtSet set{prefix, {}};
  for (std::uint64_t r = 0;; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    if (!regular_file(path)) break;
    set.ranks[r] = path;
  }
  return set;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

// The first rank below the highest that has no file, if any.
std::optional<std::uint64_t> first_missing(const EtSet& set) {
  std::uint64_t expect = 0;
  for (const auto& [rank, path] : set.ranks) {
    if (rank != expect) return expect;
    ++expect;
  }
  return std::nullopt;
}

// Converts a capture folder as `chakrashim convert` does; each run's .et
// set (a trace root of repeated windows holds several), or nullopt after
// saying why.
std::optional<std::vector<EtSet>> convert_capture(const std::string& dir, const std::string& prefix) {
  const convert::ConvertPlan plan = convert::plan_convert(dir, prefix);
  if (!plan.error.empty() || plan.jobs.empty()) {
    for (const auto& skip : plan.skipped) std::fprintf(stderr, "%s\n", skip.c_str());
    fail(dir + ": " + (plan.error.empty() ? "no capture and no .et files here" : plan.error));
    return std::nullopt;
  }
  std::vector<std::string> prefixes;
  for (const auto& job : plan.jobs) {
    std::string p = job.output;
    p.resize(p.size() - ("." + std::to_string(job.rank) + ".et").size());
    if (std::find(prefixes.begin(), prefixes.end(), p) == prefixes.end()) prefixes.push_back(p);
  }
  std::vector<std::string> args = {"convert", dir};
  if (!prefix.empty()) args.insert(args.end(), {"--prefix", prefix});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const int status = convert::run_convert_command(static_cast<int>(args.size()), argv.data());
  std::fflush(stdout);
  if (status != 0) {
    fail("the conversion failed (above): nothing simulated");
    return std::nullopt;
  }
  std::vector<EtSet> sets;
  for (const auto& p : prefixes) sets.push_back(et_set_of(p));
  return sets;
}

// The last `n` lines of ASTRA-sim's output, for a run that finished nothing.
std::vector<std::string> last_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (end > at) lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

// One .et set through ASTRA-sim, its table and its verdict (the exit status).
int simulate_set(const EtSet& set, const Args& a, const std::string& astra, double tolerance) {
  std::error_code ec;
  if (set.ranks.empty()) {
    fail("no " + set.prefix + ".0.et: nothing to simulate");
    return 1;
  }
  if (const auto missing = first_missing(set)) {
    fail(set.prefix + "." + std::to_string(*missing) + ".et is missing: ASTRA-sim needs a file for every rank from 0 to " +
         std::to_string(set.ranks.rbegin()->first));
    return 1;
  }
  const std::uint64_t world = set.ranks.size();
  std::vector<RankWindow> windows;
  for (const auto& [rank, path] : set.ranks) {
    const check::EtFile meta = convert::read_et_metadata(path);
    if (!meta.read_error.empty()) {
      fail(path + " " + meta.read_error);
      return 1;
    }
    windows.push_back({rank, meta.window_ns, meta.window_steps, meta.cost_taken_ns});
  }

  // ASTRA-sim's folder: its configuration, and its output and logs.
  std::string error;
  const std::string folder = make_run_folder(error);
  if (folder.empty()) {
    fail(error);
    return 1;
  }
  const std::uint64_t npus = std::max<std::uint64_t>(world, 2);
  std::string workload = fs::absolute(set.prefix, ec).string();
  // ASTRA-sim runs in its folder: every path it is given is absolute.
  const auto absolute = [&ec](const std::string& p) { return p.empty() ? p : fs::absolute(p, ec).string(); };
  std::string system = a.system.empty() ? folder + "/system.json" : absolute(a.system);
  const std::string memory = folder + "/remote_memory.json";
  std::string network = absolute(a.network);
  std::string network_said = "your network " + a.network;
  bool written = write_text(memory, remote_memory_json()) && (!a.system.empty() || write_text(system, ring_system_json()));
  if (network.empty()) {
    const std::string fitted = set.prefix + ".network.yml";
    if (world > 1 && regular_file(fitted)) {
      network = absolute(fitted);
      network_said = "the network convert fitted to the capture, " + fitted;
    } else {
      network = folder + "/network.yml";
      network_said = std::string("a ring of ") + std::to_string(npus) + " at 50 GB/s and 500 ns (" +
                     (world > 1 ? "no " + fitted + ": a capture without measured collectives"
                                : "one rank: no network to fit") +
                     ")";
      written = written && write_text(network, ring_network_yml(npus));
    }
  }
  if (world == 1) {
    // ASTRA-sim does not run on one NPU: rank 0 twice.
    for (const char* copy : {"/rank.0.et", "/rank.1.et"})
      written = written && fs::copy_file(set.ranks.begin()->second, folder + copy, ec) && !ec;
    workload = folder + "/rank";
  }
  if (!written) {
    fail("cannot write ASTRA-sim's files into " + folder);
    return 1;
  }
  std::vector<std::string> cmd = {astra, "--workload-configuration=" + workload, "--system-configuration=" + system,
                                  "--remote-memory-configuration=" + memory, "--network-configuration=" + network};
  const std::string groups = set.prefix + ".comm_groups.json";
  if (regular_file(groups)) cmd.push_back("--comm-group-configuration=" + fs::absolute(groups, ec).string());
  say("ASTRA-sim (" + astra + ") on " + std::to_string(world) + (world == 1 ? " rank" : " ranks") + " of " +
      set.prefix + ", on " + network_said + (world == 1 ? "; rank 0 runs as two NPUs" : ""));
  std::fflush(stdout);
  const AstraRun run = run_in_folder(cmd, folder, std::chrono::seconds(a.timeout_s));
  if (!run.started) {
    fail(run.error);
    return 1;
  }
  auto finished = finished_cycles(run.output);
  if (world == 1) finished.erase(1);  // the copy
  const auto rows = compare(windows, finished, tolerance);
  for (const auto& l : table_lines(rows)) std::printf("%s\n", l.c_str());
  const auto problems = problem_lines(rows, tolerance);
  for (const auto& p : problems) warn(p);
  bool failed = std::any_of(rows.begin(), rows.end(), [](const RankRow& r) { return !r.simulated_ns || r.beyond; });
  if (run.timed_out) warn("ASTRA-sim ran past --timeout " + std::to_string(a.timeout_s) + " s and was stopped");
  if (finished.empty()) {
    std::string how = run.signal ? "killed by signal " + std::to_string(run.signal)
                                 : "exit status " + std::to_string(run.exit_status);
    warn("ASTRA-sim ended (" + how + ") without finishing a rank; its last lines:");
    for (const auto& l : last_lines(run.output, 12)) std::printf("  %s\n", l.c_str());
  }
  if (a.keep || failed) {
    say("ASTRA-sim's configuration and output (astra-sim.log) are in " + folder);
  } else {
    fs::remove_all(folder, ec);
  }
  const auto simulated = std::count_if(rows.begin(), rows.end(), [](const RankRow& r) { return r.simulated_ns.has_value(); });
  say(std::to_string(simulated) + " of " + std::to_string(world) + (world == 1 ? " rank" : " ranks") +
      " simulated in " + std::to_string(static_cast<long long>(run.seconds * 10 + 0.5) / 10) + "." +
      std::to_string(static_cast<long long>(run.seconds * 10 + 0.5) % 10) + " s" +
      (failed ? "" : problems.empty() ? ", each within " + std::to_string(a.tolerance_pct) + "% of its expected window"
                                      : ""));
  return failed ? 1 : 0;
}

}  // namespace

int run_simulate_command(int argc, char** argv) {
  Args a;
  CommandLine line("simulate", kUsage);
  line.value({"--astra-sim"}, a.astra)
      .value({"--network", "--network-configuration"}, a.network)
      .value({"--system", "--system-configuration"}, a.system)
      .value({"--prefix"}, a.prefix)
      .number({"--tolerance"}, 1, 1000, "a percentage from 1 to 1000", a.tolerance_pct)
      .number({"--timeout"}, 1, 604800, "seconds from 1 to 604800", a.timeout_s)
      .flag({"--keep"}, a.keep)
      .positionals(a.given, 1, "give a capture folder or a folder of .et files", 1,
                   [](const std::string&) { return "one folder at most"; });
  if (const auto status = line.read(argc, argv)) return *status;
  const std::string dir = a.given[0];
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return line.usage_error(dir + " is not a folder");
  for (const std::string* f : {&a.network, &a.system})
    if (!f->empty() && !regular_file(*f)) return line.usage_error(*f + " is not a file");
  std::string why;
  const std::string astra = find_astra_sim(a.astra, why);
  if (astra.empty()) {
    fail(why);
    return 2;
  }
  const double tolerance = static_cast<double>(a.tolerance_pct) / 100.0;

  // The .et files: already in DIR, or converted from the capture there
  // (each run's: a trace root of repeated windows holds several).
  std::vector<EtSet> todo;
  const auto sets = et_sets_in(dir);
  if (!sets.empty()) {
    if (!a.prefix.empty()) {
      todo.push_back(et_set_of(a.prefix));
      if (todo.back().ranks.empty()) return line.usage_error("no " + a.prefix + ".0.et");
    } else if (sets.size() > 1) {
      std::string names;
      for (const auto& [prefix, s] : sets) names += (names.empty() ? "" : ", ") + prefix;
      return line.usage_error(dir + " holds more than one set of .et files (" + names + "): give one with --prefix");
    } else {
      todo.push_back(sets.begin()->second);
    }
  } else {
    const auto converted = convert_capture(dir, a.prefix);
    if (!converted) return 1;
    todo = *converted;
  }
  int status = 0;
  for (const EtSet& set : todo) status = std::max(status, simulate_set(set, a, astra, tolerance));
  return status;
}


}  // namespace chakrashim::tools::simulate
