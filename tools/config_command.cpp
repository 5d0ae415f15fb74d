#include "config_command.h"

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "config/config.h"
#include "common/options.h"
#include "config/env_snapshot.h"
#include "files/output_dirs.h"
#include "files/run_marker.h"
#include "files/output_paths.h"
#include "config/identity.h"
#include "nemo_profile.h"

extern "C" char** environ;

namespace chakrashim::tools::config_command {

namespace {

namespace cfg = chakrashim::config;

constexpr const char* kUsage =
    "usage: chakrashim config [--print] [--rank] [--quiet] [--prefix TEXT]\n"
    "       chakrashim config --nemo FILE [--prefix TEXT]\n"
    "\n"
    "Parses the CHAKRA_* variables of this environment exactly as the preloaded\n"
    "library will, with the launcher's rank variables. Prints one line per bad\n"
    "variable on stderr and exits 2, or exits 0.\n"
    "  --print        print the effective configuration on stderr\n"
    "  --rank         print the rank this process would have, on stdout\n"
    "  --quiet        print errors only, not warnings (chakra-run on ranks but 0)\n"
    "  --prefix TEXT  start each printed line with TEXT (chakra-run passes its name)\n"
    "  --nemo FILE    read a NeMo/Hydra YAML's chakra_profile section (at the top or\n"
    "                 under model:) and print the CHAKRA_* assignments it means, one\n"
    "                 NAME=VALUE a line on stdout, what was taken on stderr; one line\n"
    "                 and exit 2 when the section is missing or inconsistent\n"
    "                 (chakra-run --nemo-config FILE; docs/nemo.md)\n";

// The environment as the preloaded library reads it (the same rules for a
// name given twice: EnvSnapshot::from_entries).
cfg::EnvSnapshot snapshot() {
  std::size_t count = 0;
  while (environ && environ[count]) ++count;
  return cfg::EnvSnapshot::from_entries(environ, count);
}

std::string num(std::uint64_t n) { return std::to_string(n); }
const char* yes(bool b) { return b ? "on" : "off"; }

// CHAKRA_GZIP compresses the device trace only (Chakra's tools read the ET
// plain): said where the files are announced, so nobody looks for an ET.gz.
constexpr const char* kGzipNote = ", device trace gzip'd as .json.gz; the ET stays plain .json";

void print_effective(const cfg::Config& c, const target::Identity& id, const std::string& p) {
  // The windows, by mode (docs/on-demand.md).
  if (c.on_demand) {
    std::fprintf(stderr, "%sprofile on; on demand: windows when `chakrashim trigger %s` asks%s%s, "
                 "warmup %s\n", p.c_str(), c.trace_dir.c_str(),
                 c.trigger_signal ? ", or for " : "",
                 c.trigger_signal ? (num(c.trigger_steps) + " steps on SIG" +
                                     (c.trigger_signal == SIGUSR1 ? "USR1" : "USR2")).c_str() : "",
                 num(c.warmup_steps).c_str());
  } else {
    // Without warm-up every step of the window is kept, whatever the
    // cycle's length: "active 1" read as one step kept (issue #49).
    const std::string cycles = c.warmup_steps == 0 ? std::string("every step kept")
                                                   : "cycles of " + num(c.warmup_steps) + " warm-up and " +
                                                         num(c.active_steps) + " kept";
    std::fprintf(stderr, "%sprofile on; steps %s-%s, %s%s\n", p.c_str(), num(c.start_step).c_str(),
                 num(c.end_step).c_str(), cycles.c_str(),
                 c.repeat_every ? (", repeated every " + num(c.repeat_every) + " steps" +
                                   (c.repeat_until ? " until step " + num(*c.repeat_until) : "") +
                                   " (each window in step-S/)").c_str() : "");
  }
  if (c.on_demand || c.repeat_every) {
    std::fprintf(stderr, "%straces to %s/step-S/%s_chakra and %s_kineto, S each window's first step "
                 "(host trace %s, device trace %s%s)\n", p.c_str(), c.trace_dir.c_str(),
                 id.job_id.c_str(), id.job_id.c_str(), yes(c.host_trace), yes(c.device_trace),
                 c.gzip ? kGzipNote : "");
    std::fprintf(stderr, "%sranks %s; this process: rank %s (from %s)%s\n", p.c_str(),
                 c.ranks_text ? c.ranks_text->c_str() : "all", num(id.rank).c_str(),
                 id.rank_source.c_str(), id.world_size ? (" of " + num(*id.world_size)).c_str() : "");
    return;
  }
  const char* recorder =
      c.host_trace ? (c.et_native ? " by chakrashim's recorder" : " by torch's observer") : "";
  // The folders this rank's files would get now, by the library's own rule
  // (an earlier run's files push a new run to JOB_chakra.1/ and so on).
  files::LayoutRequest request;
  request.root = c.trace_dir;
  request.job_id = id.job_id;
  // A process that captures nothing itself (chakra-run around torchrun, or
  // a rank CHAKRA_RANKS leaves out) announces the folders of the rank that
  // speaks for the job: with CHAKRA_RANKS=1 and an earlier run's rank-1
  // files there, rank 1 writes JOB_chakra.1, whatever rank 0 would (#38).
  request.rank = c.ranks && !c.ranks->contains(id.rank) ? target::speaking_rank(c) : id.rank;
  request.restart_count = id.restart_count;
  request.gzip = c.gzip;
  request.overwrite = c.overwrite;
  // The run's id as the library will have it; a lone process names itself
  // by its own pid there, which this process cannot know: any id that no
  // folder holds chooses as it will (another run's folders are passed by).
  request.run_id = id.run_id.empty() && (!id.world_size || *id.world_size <= 1) ? "pid:?" : id.run_id;
  const auto layout = files::choose_layout(
      request,
      [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
      },
      files::output_dir_refusal,
      [&](const std::string& dir) { return files::other_runs_folder(files::read_folder_run(dir), request.run_id); });
  if (layout) {
    const auto name = [](const std::string& dir) { return std::filesystem::path(dir).filename().string(); };
    // Only the folders the capture writes (issue #49: 0_kineto was named
    // with the device trace off).
    const std::string folders = c.host_trace && c.device_trace ? name(layout->host_dir) + " and " + name(layout->device_dir)
                                : c.device_trace                ? name(layout->device_dir)
                                                                : name(layout->host_dir);
    std::fprintf(stderr, "%straces to %s/%s%s (host trace %s%s, device trace %s%s)\n", p.c_str(),
                 c.trace_dir.c_str(), folders.c_str(),
                 // Chosen when the window opens: another run into the
                 // same folder by then takes the next index (issue #49:
                 // two concurrent jobs both announced 0_chakra).
                 c.overwrite                       ? ""
                 : layout->index > id.restart_count ? ", beside an earlier run's, or the next free ones if another run "
                                                      "takes these before the window opens"
                                                    : ", or the next free ones if another run takes these before the "
                                                      "window opens",
                 yes(c.host_trace),
                 recorder, yes(c.device_trace), c.gzip ? kGzipNote : "");
  } else {
    std::fprintf(stderr, "%straces under %s (host trace %s%s, device trace %s%s)\n", p.c_str(),
                 c.trace_dir.c_str(), yes(c.host_trace), recorder, yes(c.device_trace), c.gzip ? kGzipNote : "");
  }
  std::fprintf(stderr, "%sranks %s; this process: rank %s (from %s)%s\n", p.c_str(),
               c.ranks_text ? c.ranks_text->c_str() : "all", num(id.rank).c_str(),
               id.rank_source.c_str(),
               id.world_size ? (" of " + num(*id.world_size)).c_str() : "");
}

// Capture is off (CHAKRA_PROFILE unset or false): say so first, then what
// the other variables would mean with it on, so that a forgotten
// CHAKRA_PROFILE=1 is never silent (issue #38).
void print_off(const cfg::EnvSnapshot& env, const std::string& p) {
  const auto profile = env.get("CHAKRA_PROFILE");
  std::fprintf(stderr, "%scapture is off: CHAKRA_PROFILE is %s, so the library stays inert (set CHAKRA_PROFILE=1 to "
               "capture); with it on, this environment would mean:\n",
               p.c_str(), profile ? ("'" + std::string(*profile) + "'").c_str() : "unset");
  cfg::EnvSnapshot on = env;
  on.set("CHAKRA_PROFILE", "1");
  const cfg::ParseResult parsed = cfg::parse_config(on);
  for (const auto& e : parsed.errors) std::fprintf(stderr, "%s  %s\n", p.c_str(), e.c_str());
  if (parsed.config) print_effective(*parsed.config, target::resolve_identity(on, *parsed.config), p + "  ");
}

}  // namespace

// --nemo FILE: NeMo's chakra_profile section as our variables.
int from_nemo(const std::string& path, const std::string& prefix) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s%s: cannot be read\n", prefix.c_str(), path.c_str());
    return 2;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const NemoProfile p = nemo_profile(text);
  if (!p.error.empty()) {
    std::fprintf(stderr, "%s%s: %s\n", prefix.c_str(), path.c_str(), p.error.c_str());
    return 2;
  }
  for (const auto& [name, value] : p.assignments) std::printf("%s=%s\n", name.c_str(), value.c_str());
  std::fprintf(stderr, "%sfrom %s's %s: %s\n", prefix.c_str(), path.c_str(), p.where.c_str(), p.said.c_str());
  if (p.enabled)
    std::fprintf(stderr,
                 "%swarning: %s.enabled is true: NeMo's own chakra_profile captures too (torch.profiler in the "
                 "job); chakrashim's capture goes on, and renames that profiler's step records as for any job "
                 "profiler. Set it to false to capture once (docs/nemo.md)\n",
                 prefix.c_str(), p.where.c_str());
  return 0;
}

int run_config_command(int argc, char** argv) {
  bool print = false, rank = false, quiet = false;
  std::string prefix = "chakrashim: ", nemo;
  CommandLine line("config", kUsage);
  line.flag({"--print"}, print)
      .flag({"--rank"}, rank)
      .flag({"--quiet"}, quiet)
      .value({"--prefix"}, prefix, /*empty_ok=*/true)
      .value({"--nemo"}, nemo);
  if (const auto status = line.read(argc, argv)) return *status;
  if (!nemo.empty()) return from_nemo(nemo, prefix);
  const cfg::EnvSnapshot env = snapshot();
  const cfg::ParseResult parsed = cfg::parse_config(env);
  if (!quiet)
    for (const auto& w : parsed.warnings) std::fprintf(stderr, "%swarning: %s\n", prefix.c_str(), w.c_str());
  for (const auto& e : parsed.errors) std::fprintf(stderr, "%s%s\n", prefix.c_str(), e.c_str());
  if (!parsed.errors.empty()) return 2;
  const cfg::Config c = parsed.config.value_or(cfg::Config{});
  const target::Identity id = target::resolve_identity(env, c);
  if (rank) std::printf("%llu\n", static_cast<unsigned long long>(id.rank));
  if (print && parsed.config) print_effective(c, id, prefix);
  if (print && !parsed.enabled) print_off(env, prefix);
  return 0;
}

}  // namespace chakrashim::tools::config_command
