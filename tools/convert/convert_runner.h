// `chakrashim convert` jobs: one ET+ into one Chakra ET (written as a
// .partial, renamed when complete), and every rank of a capture, in
// parallel, each linked by the run (in memory where linked_join.h can).
// Messages only; the command prints them.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convert/chakra_graph.h"
#include "convert/comm_groups.h"
#include "convert/sim_ready.h"
#include "link/link_runner.h"

namespace chakrashim::tools::convert {

struct ConvertJob {
  std::uint64_t rank = 0;
  std::string input;   // the ET+
  std::string output;  // the .et
  // Set when the ET+ must be made first: `input` is then link's output.
  std::optional<link::RankJob> link_first;
  ConvertOptions options;
  // The rank's device trace where `input` is an ET+ that link wrote beside
  // a capture (JOB_linked/ beside JOB_kineto/): its metadata has the
  // recording cost (link_first's device_path otherwise). Empty: none known.
  std::string device_path = {};
};

struct ConvertResult {
  std::uint64_t rank = 0;
  bool ok = false;
  std::string error;  // one line naming the file, when !ok
  std::string input, output;
  bool linked = false;  // the ET+ was made by this run
  bool in_memory = false;  // ... in memory only (linked_join.h): no ET+ file, `input` empty
  double link_seconds = 0, seconds = 0;
  std::vector<std::string> link_warnings;
  std::optional<link::LeftOutStep> left_out;  // the partial step link left out
  // The rank's captured window (link::RankResult's), when this run linked it.
  std::int64_t window_ns = 0;
  std::uint64_t window_steps = 0;
  std::uint64_t nodes_read = 0;
  GraphStats stats;
  SimReadyStats sim;
  // From the "## process_group:init ##" node written.
  std::vector<ProcessGroup> process_groups;
};

ConvertResult convert_one(const ConvertJob& job, std::atomic<std::uint64_t>* progress = nullptr);

struct ConvertPlan {
  std::vector<ConvertJob> jobs;
  std::vector<std::string> skipped;  // ranks that cannot be converted, as lines
  std::vector<std::string> warnings;  // ranks the capture should hold and lacks (missing_ranks.h)
  std::string error;
};

// The ranks of a capture folder (a trace root, one JOB_chakra/JOB_kineto
// folder, or a JOB_linked folder of ET+ files). A capture's ranks are linked
// by the run (link_first, in memory where linked_join.h can; otherwise
// through JOB_linked/rank-R.json). Outputs are PREFIX.R.et; `prefix` empty:
// JOB_et/rank beside the capture's folders.
ConvertPlan plan_convert(const std::string& dir, const std::string& prefix, bool keep_partial_step = false);

// ASTRA-sim's communicator-group file for a job with more than one process
// group: PREFIX.comm_groups.json beside the ranks' PREFIX.R.et (from the
// first converted rank's groups). Returns the line to print ("" when no
// file is needed); `error` set when it could not be written.
std::string write_comm_groups(const std::vector<ConvertResult>& results, std::string& error);
// A world above 1 whose ranks measured their collectives or messages:
// PREFIX.network.yml beside the .et files, ASTRA-sim's network fitted to
// them (network_fit.h); returns the line that says so, or "" (nothing to
// fit), or "" with `error`. `fit_warning` gets a line when one ring fits the
// captured times badly (network_fit.h kFitWarnError).
std::string write_network(const std::vector<ConvertResult>& results, std::string& error,
                          std::string* fit_warning = nullptr);

// What a simulation of the converted ranks would miss, as warning lines
// (check's et.no_collectives and et.rank_missing, said at convert time): a
// world above 1 (the process groups' size, else the ranks converted)
// without any collective, and ranks below the world size not converted.
//   "a world of 2 ranks converted without any collective: ASTRA-sim will simulate no communication (...)"
// `missing_said`: the capture's plan already named the ranks without files
// (missing_ranks.h): then the missing ranks are not said a second time.
// One line per kind of point-to-point message (src, dst, tag, bytes) whose
// sends and receives differ in number between ranks both converted (at most
// 3, then a count).
std::vector<std::string> unmatched_p2p_lines(const std::vector<ConvertResult>& results);
std::vector<std::string> world_warnings(const std::vector<ConvertResult>& results, bool missing_said = false);

// The .et name for a single ET+ without --output: "linked.0.json.gz" ->
// "linked.0.et".
std::string default_output_for(const std::string& input);

// The end of a capture's conversion, in one line (common/rank_totals.h):
//   "chakrashim convert: 512 ranks converted, 0 failed; 512 linked in memory; 9216 nodes written; 3.10 s; .et in /t/0_et"
std::string totals_line(const std::vector<ConvertResult>& results, double seconds);

// "rank 0: 18050 nodes (21 collectives, 0 sends, 0 receives), 1 node left out, as chakra_converter
//  does (no dependency to or from it): the ET's root, harmless -> OUT (0.9 s)"
std::string summary_line(const ConvertResult& r);

// chakra_converter's "dangling" nodes, in words a user can judge:
//   {1 dropped, 1 root}  -> "1 node left out, as chakra_converter does (no dependency to or
//                            from it): the ET's root, harmless"
//   {3 dropped, 1 root}  -> "... (no dependency to or from them): 2 ops that ASTRA-sim will not run
//                            (docs/convert.md)"
std::string unconnected_text(const GraphStats& s);

}  // namespace chakrashim::tools::convert
