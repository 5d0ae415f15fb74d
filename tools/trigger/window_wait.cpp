#include "trigger/window_wait.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <system_error>
#include <thread>

#include "common/capture_scan.h"
#include "config/value_grammar.h"
#include "files/small_file.h"
#include "trigger/control_folder.h"

namespace chakrashim::tools::trigger {

namespace fs = std::filesystem;

namespace {

// One file of the job's run folders under the window folder.
struct RankFile {
  std::uint64_t index = 0;  // the run folder's .i
  FileKind kind = FileKind::unknown;
  std::optional<std::uint64_t> rank;
  bool partial = false;
  std::string path;
};

// The run folders of `job_id` directly under `window_dir` (JOB_chakra[.i],
// JOB_kineto[.i]; another job's are not ours to wait for), with their files.
// `visit_folder` sees each folder, `visit_file` each rank file.
template <typename Folder, typename File>
bool list_runs(const std::string& window_dir, const std::string& job_id, Folder visit_folder, File visit_file) {
  std::error_code ec;
  fs::directory_iterator it(window_dir, ec);
  if (ec) return false;
  for (const auto& entry : it) {
    std::error_code inner;
    if (!entry.is_directory(inner)) continue;
    const std::string folder = entry.path().filename().string();
    const auto f = parse_folder_name(folder);
    if (!f || f->job != job_id) continue;
    visit_folder(*f, folder);
    for (const auto& file : fs::directory_iterator(entry.path(), inner)) {
      std::error_code e;
      if (!file.is_regular_file(e)) continue;
      const std::string name = file.path().filename().string();
      RankFile r;
      r.index = f->index;
      r.kind = f->kind;
      r.partial = is_partial_name(name);
      // Only rank-R.json[.gz] is a rank's file; the shim writes nothing else there.
      if (name.rfind("rank-", 0) == 0) r.rank = rank_from_file_name(name);
      if (!r.partial && !r.rank) continue;
      r.path = file.path().string();
      visit_file(folder, r);
    }
  }
  return true;
}

}  // namespace

ExpectedRanks expected_ranks(const window::StepNote& note) {
  ExpectedRanks out;
  if (note.world_size < 0) {
    out.ranks.push_back(note.rank);
    return out;
  }
  std::optional<config::RankSet> filter;
  if (note.ranks) {
    filter = config::parse_rank_list(*note.ranks);
    // The job refuses a CHAKRA_RANKS it cannot parse, so this is a note
    // written by something else: wait for every rank rather than guess.
    if (!filter) out.note = "the job's rank list " + config::quote_for_log(*note.ranks) + " does not parse: waiting for all ranks";
  }
  for (std::uint64_t r = 0; r < static_cast<std::uint64_t>(note.world_size); ++r)
    if (!filter || filter->contains(r)) out.ranks.push_back(r);
  return out;
}

std::set<std::string> final_files_now(const std::string& window_dir, const std::string& job_id) {
  std::set<std::string> out;
  list_runs(
      window_dir, job_id, [](const FolderName&, const std::string&) {},
      [&](const std::string&, const RankFile& f) {
        if (!f.partial) out.insert(f.path);
      });
  return out;
}

WindowStatus window_status(const std::string& window_dir, const std::string& job_id,
                           const std::vector<std::uint64_t>& expected, const std::set<std::string>& earlier) {
  WindowStatus status;
  struct Finals {
    bool host = false, device = false;
  };
  struct Run {
    bool device_folder = false;
    std::map<std::uint64_t, Finals> finals;
  };
  std::map<std::uint64_t, Run> runs;
  std::set<std::uint64_t> partial_ranks;
  std::set<std::string> folders;
  std::uint64_t unranked_partials = 0;
  status.folder_exists = list_runs(
      window_dir, job_id,
      [&](const FolderName& f, const std::string&) {
        if (f.kind == FileKind::device) runs[f.index].device_folder = true;
      },
      [&](const std::string& folder, const RankFile& f) {
        if (!f.partial && earlier.count(f.path)) return;
        folders.insert(folder);
        if (f.partial) {
          if (f.rank) partial_ranks.insert(*f.rank);
          else ++unranked_partials;
          return;
        }
        Finals& finals = runs[f.index].finals[*f.rank];
        (f.kind == FileKind::device ? finals.device : finals.host) = true;
      });
  const std::set<std::uint64_t> wanted(expected.begin(), expected.end());
  status.other_partials = unranked_partials;
  for (const auto r : partial_ranks)
    if (!wanted.count(r)) ++status.other_partials;
  for (const auto r : expected) {
    bool done = false, some = false;
    for (const auto& [index, run] : runs) {
      const auto it = run.finals.find(r);
      if (it == run.finals.end()) continue;
      some = true;
      done = done || (run.device_folder ? it->second.device : it->second.host);
    }
    if (partial_ranks.count(r) || (some && !done)) status.writing.push_back(r);
    else if (done) status.done.push_back(r);
    else status.missing.push_back(r);
  }
  status.folders.assign(folders.begin(), folders.end());
  return status;
}

std::set<std::string> missed_notes_now(const std::string& control_dir, std::uint64_t first_step) {
  std::set<std::string> out;
  const std::string prefix = "missed-" + std::to_string(first_step) + "-rank-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(control_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.insert(entry.path().string());
  }
  return out;
}

WindowStatus window_status(const std::string& window_dir, const std::string& job_id,
                           const std::vector<std::uint64_t>& expected, const std::set<std::string>& earlier,
                           const std::string& control_dir, std::uint64_t first_step) {
  WindowStatus status = window_status(window_dir, job_id, expected, earlier);
  if (status.missing.empty()) return status;
  std::map<std::uint64_t, std::string> said;
  for (const auto& path : missed_notes_now(control_dir, first_step)) {
    if (earlier.count(path)) continue;
    std::string error;
    const auto text = files::read_small_file(path, 64 * 1024, error);
    const auto missed = text ? window::decode_missed(*text, error) : std::nullopt;
    if (missed && missed->first_step == first_step) said[missed->rank] = missed->why;
  }
  std::vector<std::uint64_t> still_missing;
  for (const auto r : status.missing) {
    const auto it = said.find(r);
    if (it == said.end()) still_missing.push_back(r);
    else status.missed.emplace_back(r, it->second);
  }
  status.missing = std::move(still_missing);
  return status;
}

WaitResult wait_for_window(const WaitOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto since_start = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  const auto unix_now = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  WaitResult result;
  double gone_at = -1;  // when step.json was first found missing; -1: it is there
  for (;;) {
    result.status = window_status(options.window_dir, options.job_id, options.expected, options.earlier,
                                  options.control_dir, options.first_step);
    result.waited_s = since_start();
    if (result.status.complete()) {
      result.end = WaitEnd::complete;
      return result;
    }
    if (result.status.settled()) {
      result.end = WaitEnd::missed;
      return result;
    }
    // Files still .partial are being written: whatever the job's state,
    // they may yet be finished, so the job's end waits for them (bounded).
    const bool in_progress = !result.status.writing.empty() || result.status.other_partials > 0;
    bool missing = false;
    std::string error;
    const auto note = read_step_note(options.control_dir, missing, error);
    if (missing) {
      if (gone_at < 0) gone_at = result.waited_s;
      if (!in_progress || result.waited_s - gone_at >= options.exit_grace_s) {
        result.end = WaitEnd::job_exited;
        return result;
      }
    } else {
      gone_at = -1;
      // A note caught mid-way is impossible (rename), so one that does not
      // decode is one a newer job wrote: keep the last good one and go on.
      if (note) {
        result.last_note = note;
        if (note->restart != options.restart) {
          result.end = WaitEnd::job_restarted;
          return result;
        }
        if ((unix_now() - note->time_s > kStaleAfterS || local_process_gone(*note, unix_now())) && !in_progress) {
          result.end = WaitEnd::job_stale;
          return result;
        }
      }
    }
    if (result.waited_s >= options.timeout_s) {
      result.end = WaitEnd::timed_out;
      return result;
    }
    if (options.on_poll) options.on_poll(result.status, result.last_note, result.waited_s);
    const double left = options.timeout_s - result.waited_s;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(options.poll_s, std::max(left, 0.0))));
  }
}

}  // namespace chakrashim::tools::trigger
