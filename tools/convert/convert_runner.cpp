#include "convert/convert_runner.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <system_error>

#include "common/capture_scan.h"
#include "common/chunk_pipe.h"
#include "common/joining_thread.h"
#include "common/rank_totals.h"
#include "common/trace_tail.h"
#include "convert/et_encoding.h"
#include "convert/et_file_writer.h"
#include "convert/et_plus_reader.h"
#include "convert/network_fit.h"
#include "convert/link_steps.h"
#include "convert/linked_join.h"
#include "convert/node_rules.h"
#include "files/publish.h"

namespace chakrashim::tools::convert {

namespace fs = std::filesystem;

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool write_et(const std::string& output, const EtPlus& trace, const ChakraGraph& graph, NodeEncoder& encoder,
              std::string& error) {
  const fs::path target(output);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  if (const auto made = files::make_dirs(dir); !made.ok) {
    error = made.error;
    return false;
  }
  const auto produce = [&](files::ByteSink& sink) { return write_chakra_et(sink, trace, graph, encoder); };
  // Like chakra_converter, an existing output is replaced.
  const auto published = files::publish_file(output, produce, nullptr, true);
  if (!published.ok) error = published.error;
  return published.ok;
}

std::string et_name(const std::string& prefix, std::uint64_t rank) { return prefix + "." + std::to_string(rank) + ".et"; }

// A JOB_linked[.i] folder: its rank-R.json[.gz] files are the ET+ inputs.
bool plan_linked_folder(const fs::path& folder, const std::string& prefix, ConvertPlan& plan) {
  static const std::regex kLinked(R"(^(.+)_linked(\.\d+)?$)");
  std::smatch m;
  const std::string name = folder.filename().string();
  if (!std::regex_match(name, m, kLinked)) return false;
  const std::string out_prefix =
      prefix.empty() ? (folder.parent_path() / (m[1].str() + "_et" + m[2].str()) / "rank").string() : prefix;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string file = f.filename().string();
    if (is_partial_name(file) || file.rfind("rank-", 0) != 0) continue;
    const auto rank = rank_from_file_name(file);
    if (!rank) continue;
    plan.jobs.push_back({*rank, f.string(), et_name(out_prefix, *rank), std::nullopt, {}, {}});
    // The device trace link read, for its recording cost: JOB_kineto[.i]/
    // beside JOB_linked[.i]/, plain or gzip whichever the ET+ is.
    const std::string json_name = file.size() > 3 && file.compare(file.size() - 3, 3, ".gz") == 0
                                      ? file.substr(0, file.size() - 3)
                                      : file;
    for (const char* suffix : {"", ".gz"}) {
      const fs::path device = folder.parent_path() / (m[1].str() + "_kineto" + m[2].str()) / (json_name + suffix);
      if (fs::is_regular_file(device, ec)) {
        plan.jobs.back().device_path = device.string();
        break;
      }
    }
  }
  if (plan.jobs.empty()) plan.error = folder.string() + ": no rank-R.json ET+ files";
  return true;
}

std::vector<ProcessGroup> groups_of(const EtPlus& trace, const ChakraGraph& graph) {
  for (const ChakraNode& c : graph.nodes) {
    if (!is_metadata_name(trace.nodes[c.index].name)) continue;
    const auto groups = process_groups_of(inputs_values_of(trace.nodes[c.index].tail));
    if (groups) return *groups;
  }
  return {};
}

}  // namespace

void link_then_read(const ConvertJob& job, EtPlusRead& read, ConvertResult& out, const LinkStep& link_rank) {
  ChunkPipe pipe;
  // Should link throw, the reader, waiting for the rest of the ET+, is told
  // that no more comes (abandon: it reads an end), then joined.
  JoiningThread reader(
      [&] {
        read = read_et_plus(pipe.source());
        pipe.abandon();
      },
      [&] { pipe.abandon(); });
  link::RankJob link_job = *job.link_first;
  link_job.tee = &pipe.sink();
  const link::RankResult linked = link_rank(link_job);
  pipe.close();
  reader.join();
  out.linked = true;
  out.link_seconds = linked.seconds;
  out.link_warnings = linked.warnings;
  out.left_out = linked.left_out;
  out.window_ns = linked.window_ns;
  out.window_steps = linked.window_steps;
  if (!linked.ok) out.error = "link: " + linked.error;
}

bool join_in_memory(const ConvertJob& job, NodeEncoder& encoder, EtPlusRead& read, ConvertResult& out,
                    const PlanStep& plan_rank) {
  const link::RankJob& link_job = *job.link_first;
  HostEtRead host;
  // Reads a file: should plan throw, the reader ends by itself, and is joined.
  JoiningThread reader([&] { host = read_host_et(link_job.host_path); });
  link::RankPlan planned = plan_rank(link_job);
  reader.join();
  if (!planned.result.ok) {
    out.linked = true;
    out.link_seconds = planned.result.seconds;
    out.error = "link: " + planned.result.error;
    return false;
  }
  std::optional<EtPlus> joined = join_linked(host, planned.plan, planned.device, encoder);
  if (!joined) return false;
  out.linked = true;
  out.in_memory = true;
  out.input.clear();  // no ET+ file
  out.link_seconds = planned.result.seconds;
  out.link_warnings = planned.result.warnings;
  out.left_out = planned.result.left_out;
  out.window_ns = planned.result.window_ns;
  out.window_steps = planned.result.window_steps;
  read.ok = true;
  read.trace = std::move(*joined);
  return true;
}

// The job's options, with the recording cost its capture measured where
// it was asked for and there is one (a device trace of ours, linked here).
ConvertOptions options_for(const ConvertJob& job) {
  ConvertOptions o = job.options;
  o.rank = job.rank;
  const std::string& device = job.link_first ? job.link_first->device_path : job.device_path;
  if (o.op_cost_from_capture && !device.empty()) {
    const std::string tail = read_tail(device);
    const auto cost = recording_cost_from_tail(tail);
    o.op_cost_ns = cost.value_or(0);
    o.op_cost_from_capture = cost.has_value();
    if (cost) o.op_cost_refused = recording_cost_refusal_from_tail(tail);
  } else {
    o.op_cost_from_capture = false;
  }
  return o;
}

ConvertResult convert_one(const ConvertJob& job, std::atomic<std::uint64_t>* progress) {
  const auto start = std::chrono::steady_clock::now();
  ConvertResult out;
  out.rank = job.rank;
  out.input = job.input;
  out.output = job.output;
  EtPlusRead read;
  NodeEncoder encoder;
  if (job.link_first) {
    if (!join_in_memory(job, encoder, read, out) && out.error.empty()) link_then_read(job, read, out);
    if (!out.error.empty()) {
      out.seconds = since(start);
      return out;
    }
  } else {
    read = read_et_plus(job.input, progress);
    // An ET+ link wrote beside a capture: the window from its device trace,
    // as link read it (the partial step left out, link's default).
    if (read.ok && !job.options.chakra_exact && !job.device_path.empty()) {
      if (const auto w = link::captured_window(job.device_path)) {
        out.window_ns = w->window_ns;
        out.window_steps = w->window_steps;
      }
    }
  }
  // What errors name: the ET+, or the pair that was linked in memory.
  const std::string source =
      out.in_memory ? job.link_first->host_path + " (linked in memory with " + job.link_first->device_path + ")"
                    : job.input;
  if (!read.ok) {
    out.error = source + ": " + read.error;
  } else {
    out.nodes_read = read.trace.nodes.size();
    ChakraGraph graph = build_chakra_graph(read.trace, encoder);
    const ConvertOptions options = options_for(job);
    make_sim_ready(read.trace, graph, encoder, options, &out.sim);
    if (!options.chakra_exact) {
      // What `chakrashim simulate` compares the simulation with, in the
      // file itself (Chakra's bytes stay exact under --chakra-exact).
      if (out.window_steps > 0) {
        read.trace.meta.window_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(out.window_ns, 0));
        read.trace.meta.window_steps = out.window_steps;
      }
      read.trace.meta.cost_taken_ns = out.sim.cost_ns;
    }
    if (graph.ok) out.process_groups = groups_of(read.trace, graph);
    out.stats = graph.stats;
    if (!graph.ok) out.error = source + ": " + graph.error;
    else out.ok = write_et(job.output, read.trace, graph, encoder, out.error);
  }
  out.seconds = since(start);
  return out;
}

ConvertPlan plan_convert(const std::string& dir, const std::string& prefix, bool keep_partial_step) {
  ConvertPlan plan;
  std::error_code ec;
  const fs::path root = fs::absolute(fs::path(dir), ec).lexically_normal();
  const fs::path self = root.has_filename() ? root : root.parent_path();
  if (plan_linked_folder(self, prefix, plan)) return plan;
  const link::CapturePlan captured = link::plan_capture(dir, "", false, keep_partial_step);
  plan.skipped = captured.skipped;
  plan.warnings = captured.warnings;
  if (!captured.error.empty()) {
    plan.error = captured.error;
    return plan;
  }
  // One output prefix per run (JOB or JOB.i); --prefix takes one run only.
  std::vector<std::string> run_dirs;
  for (const link::RankJob& j : captured.jobs) {
    const std::string linked_dir = fs::path(j.output_path).parent_path().string();
    if (std::find(run_dirs.begin(), run_dirs.end(), linked_dir) == run_dirs.end()) run_dirs.push_back(linked_dir);
  }
  if (!prefix.empty() && run_dirs.size() > 1) {
    plan.error = dir + " holds " + std::to_string(run_dirs.size()) + " runs; --prefix takes one: give one run's folder";
    return plan;
  }
  for (const link::RankJob& j : captured.jobs) {
    const fs::path linked_dir = fs::path(j.output_path).parent_path();
    std::string out_prefix = prefix;
    if (out_prefix.empty()) {
      // JOB_linked[.i] -> JOB_et[.i]; loose files' "linked" -> "et".
      std::string name = linked_dir.filename().string();
      const auto at = name.find("_linked");
      name = at == std::string::npos ? "et" : name.substr(0, at) + "_et" + name.substr(at + 7);
      out_prefix = (linked_dir.parent_path() / name / "rank").string();
    }
    // Always linked by this run, in memory: as fast as reading an ET+ that
    // `chakrashim link` left, which may be out of date.
    plan.jobs.push_back({j.rank, j.output_path, et_name(out_prefix, j.rank), j, {}, {}});
  }
  return plan;
}

namespace {

// PREFIX.R.et -> PREFIX + suffix: a file for ASTRA-sim beside the ranks' .et.
std::string beside_ets(const ConvertResult& r, const std::string& suffix) {
  std::string prefix = r.output;
  const std::string tail = "." + std::to_string(r.rank) + ".et";
  if (prefix.size() > tail.size() && prefix.compare(prefix.size() - tail.size(), tail.size(), tail) == 0)
    prefix.resize(prefix.size() - tail.size());
  return prefix + suffix;
}

// Complete and valid, or absent (publish.h); false with `error`.
bool publish_text(const std::string& path, const std::string& text, std::string& error) {
  const auto produce = [&text](files::ByteSink& sink) { return sink.write(text); };
  const auto published = files::publish_file(path, produce, nullptr, true);
  if (!published.ok) error = published.error;
  return published.ok;
}

}  // namespace

std::string write_comm_groups(const std::vector<ConvertResult>& results, std::string& error) {
  // Every rank's groups together: a rank's ET lists only the groups it is
  // in (rank 0 of a 2x2 mesh: dp [0, 2] and tp [0, 1]; rank 3: [1, 3] and
  // [2, 3]), and ASTRA-sim needs each group a collective names.
  const ConvertResult* first = nullptr;
  std::vector<ProcessGroup> groups;
  for (const auto& r : results) {
    if (!r.ok || r.process_groups.empty()) continue;
    if (first == nullptr) first = &r;
    for (const auto& g : r.process_groups) {
      const auto same = std::find_if(groups.begin(), groups.end(), [&g](const ProcessGroup& h) { return h.name == g.name; });
      if (same == groups.end()) groups.push_back(g);
    }
  }
  if (first == nullptr || groups.size() < 2) return {};
  const std::string path = beside_ets(*first, ".comm_groups.json");
  std::uint64_t world = results.size();
  for (const auto& g : groups) world = std::max(world, g.size);
  if (!publish_text(path, comm_group_json(groups, world), error)) return {};
  return std::to_string(groups.size()) + " process groups -> " + path + " (ASTRA-sim's --comm-group-configuration)";
}

std::string write_network(const std::vector<ConvertResult>& results, std::string& error, std::string* fit_warning) {
  // The same op on every rank: the least time any rank measured (the rank
  // that arrived last waited for no other).
  std::map<std::string, CommSample> merged;
  std::uint64_t world = 0;
  const ConvertResult* first = nullptr;
  for (const auto& r : results) {
    if (!r.ok) continue;
    if (first == nullptr) first = &r;
    world = std::max(world, r.rank + 1);
    for (const auto& g : r.process_groups) world = std::max(world, g.size);
    for (const auto& [key, sample] : r.sim.comm_samples) {
      auto [it, added] = merged.emplace(key, sample);
      if (!added) it->second.took_ns = std::min(it->second.took_ns, sample.took_ns);
    }
  }
  if (first == nullptr || merged.empty() || world < 2) return {};
  std::vector<CommSample> samples;
  for (auto& [key, s] : merged) {
    if (s.npus == 0) s.npus = world;
    samples.push_back(s);
  }
  const auto net = fit_network(samples);
  if (!net) return {};
  const std::string path = beside_ets(*first, ".network.yml");
  if (!publish_text(path, network_yml(*net, world), error)) return {};
  char figures[320];
  std::snprintf(figures, sizeof figures,
                "latency %.1f us, bandwidth %.3g GB/s%s, within %.0f%% of each kind's mean time (single ones varied "
                "%.0f%% around it, median)",
                net->latency_ns / 1e3, net->bandwidth_gbs, net->bandwidth_fitted ? "" : " (held: one message size)",
                net->median_error * 100, net->spread * 100);
  std::string line = "network fitted to " + std::to_string(net->samples) + " captured collectives and messages: " +
                     figures + " -> " + path + " (ASTRA-sim's --network-configuration)";
  if (net->median_error > kFitWarnError && fit_warning != nullptr) {
    char warning[240];
    std::snprintf(warning, sizeof warning,
                  "one ring misses the captured communication times by %.0f%% (median over each kind's mean): "
                  "the simulated communication will be off by about as much (docs/simulate.md, \"The fitted "
                  "network\")",
                  net->median_error * 100);
    *fit_warning = warning;
  }
  return line;
}

std::vector<std::string> unmatched_p2p_lines(const std::vector<ConvertResult>& results) {
  // A message's send and its receive are written by two ranks: both must
  // be in this conversion, the same in number (ASTRA-sim matches the k-th
  // send to the k-th receive of the same src, dst, tag and size; one with
  // no partner leaves its rank waiting for ever).
  std::map<std::array<std::int64_t, 4>, SimReadyStats::P2pCount> all;
  std::set<std::int64_t> converted;
  for (const auto& r : results) {
    if (!r.ok) continue;
    converted.insert(static_cast<std::int64_t>(r.rank));
    for (const auto& [key, count] : r.sim.p2p_messages) {
      all[key].sends += count.sends;
      all[key].receives += count.receives;
    }
  }
  std::vector<std::string> out;
  std::uint64_t more = 0;
  for (const auto& [key, count] : all) {
    if (count.sends == count.receives) continue;
    const auto& [src, dst, tag, bytes] = key;
    // The partner's rank was not converted here: not this set's fault.
    if (!converted.count(count.sends > count.receives ? dst : src)) continue;
    if (out.size() == 3) {
      ++more;
      continue;
    }
    out.push_back("rank " + std::to_string(src) + " sends " + std::to_string(count.sends) + " and rank " +
                  std::to_string(dst) + " receives " + std::to_string(count.receives) + " message(s) of " +
                  std::to_string(bytes) + " bytes, tag " + std::to_string(tag) +
                  ": ASTRA-sim will wait for ever on the unmatched ones (a capture whose windows did not cover "
                  "the same steps on every rank, or a partial step: `chakrashim check` says more)");
  }
  if (more > 0) out.push_back("... and " + std::to_string(more) + " more unmatched point-to-point message kinds");
  return out;
}

std::vector<std::string> world_warnings(const std::vector<ConvertResult>& results, bool missing_said) {
  std::uint64_t world = 0, comm = 0;
  std::vector<std::uint64_t> ranks;
  for (const auto& r : results) {
    if (!r.ok) continue;
    ranks.push_back(r.rank);
    world = std::max(world, r.rank + 1);
    for (const auto& g : r.process_groups) world = std::max(world, g.size);
    comm += r.stats.collectives + r.stats.sends + r.stats.receives;
  }
  std::vector<std::string> out;
  if (ranks.empty()) return out;
  // torch's ET records a c10d op's process group as "<Object>" (ours names
  // it): with more than one group, such a host collective's own is not
  // known.
  for (const auto& r : results) {
    if (!r.ok || r.sim.unnamed_collectives == 0 || r.process_groups.size() < 2) continue;
    out.push_back("rank " + std::to_string(r.rank) + ": " + std::to_string(r.sim.unnamed_collectives) +
                  " host collectives in a job of " + std::to_string(r.process_groups.size()) +
                  " process groups are written for the default group: the ET does not record which group a c10d "
                  "op ran in (torch's own ET recorder; chakrashim's names it)");
    break;
  }
  for (const auto& r : results) {
    if (!r.ok || r.sim.p2p_unmapped == 0) continue;
    out.push_back("rank " + std::to_string(r.rank) + ": " + std::to_string(r.sim.p2p_unmapped) +
                  " point-to-point ops are left as compute, so ASTRA-sim will not couple this rank to its peers: " +
                  r.sim.p2p_unmapped_why);
  }
  for (const std::string& line : unmatched_p2p_lines(results)) out.push_back(line);
  if (world > 1 && comm == 0) {
    out.push_back("a world of " + std::to_string(world) +
                  " ranks converted without any collective: ASTRA-sim will simulate no communication "
                  "(with --chakra-exact, a CPU job's c10d collectives stay compute)");
  }
  std::vector<std::uint64_t> missing;
  for (std::uint64_t r = 0; r < world; ++r) {
    if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) missing.push_back(r);
  }
  if (!missing.empty() && !missing_said) {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 8; ++i) list += (i ? "," : "") + std::to_string(missing[i]);
    if (missing.size() > 8) list += ",... (" + std::to_string(missing.size()) + " in all)";
    out.push_back("rank" + std::string(missing.size() > 1 ? "s " : " ") + list + " of world size " +
                  std::to_string(world) + " not converted: ASTRA-sim needs PREFIX.R.et for every NPU");
  }
  return out;
}

std::string default_output_for(const std::string& input) {
  std::string base = input;
  for (const char* suffix : {".gz", ".json"}) {
    const std::string s(suffix);
    if (base.size() > s.size() && base.compare(base.size() - s.size(), s.size(), s) == 0) base.resize(base.size() - s.size());
  }
  return base + ".et";
}

std::string totals_line(const std::vector<ConvertResult>& results, double seconds) {
  RankTotals totals{"convert", "converted", 0, 0, {}, ".et", {}};
  std::uint64_t in_memory = 0, linked = 0, nodes = 0;
  for (const auto& r : results) {
    if (!r.ok) {
      ++totals.failed;
      continue;
    }
    ++totals.done;
    in_memory += r.in_memory;
    linked += r.linked && !r.in_memory;  // through an ET+ file (linked_join.h's exceptions)
    nodes += r.stats.written;
    totals.add_output(r.output);
  }
  if (in_memory > 0) totals.figures.push_back(std::to_string(in_memory) + " linked in memory");
  if (linked > 0) totals.figures.push_back(std::to_string(linked) + " linked through an ET+ file");
  totals.figures.push_back(std::to_string(nodes) + " nodes written");
  return tools::totals_line(totals, seconds);
}

std::string unconnected_text(const GraphStats& s) {
  // chakra_converter's "dangling" nodes, said in words a user can judge.
  const std::uint64_t n = s.dropped_dangling, roots = s.dropped_roots;
  std::string out = std::to_string(n) + (n == 1 ? " node" : " nodes") +
                    " left out, as chakra_converter does (no dependency to or from " +
                    (n == 1 ? "it" : "them") + ")";
  if (roots == n) return out + (n == 1 ? ": the ET's root, harmless" : ": roots, harmless");
  return out + ": " + std::to_string(n - roots) + " op" + (n - roots == 1 ? "" : "s") +
         " that ASTRA-sim will not run (docs/convert.md)";
}

std::string summary_line(const ConvertResult& r) {
  const std::string who = "rank " + std::to_string(r.rank) + ": ";
  if (!r.ok) return who + "error: " + r.error;
  char time[48];
  std::string line = who;
  if (r.linked) {
    std::snprintf(time, sizeof time, "%.2f s", r.link_seconds);
    line += (r.in_memory ? std::string("linked in memory (") : "linked -> " + r.input + " (") + time + "), ";
  }
  const GraphStats& s = r.stats;
  line += std::to_string(s.written) + " nodes (" + std::to_string(s.collectives) + " collectives, " +
          std::to_string(s.sends) + " sends, " + std::to_string(s.receives) + " receives)";
  if (s.host_collectives > 0) line += ", " + std::to_string(s.host_collectives) + " from host c10d ops";
  if (r.sim.nccl_group_kernels > 0) {
    line += ", " + std::to_string(r.sim.nccl_group_messages) + " of them from " +
            std::to_string(r.sim.nccl_group_kernels) + " NCCL kernels that each ran a batch_isend_irecv group";
  }
  if (s.dropped_dangling > 0) line += ", " + unconnected_text(s);
  if (r.sim.threads > 0) {
    std::snprintf(time, sizeof time, "%.3f ms", static_cast<double>(r.sim.gap_ns) / 1e6);
    line += std::string(", ") + time + " of gaps kept";
    if (r.sim.comm_wait_ns > 0) {
      std::snprintf(time, sizeof time, "%.3f ms", static_cast<double>(r.sim.comm_wait_ns) / 1e6);
      line += std::string(" (") + time + " waiting for communication left to the comm nodes)";
    }
    if (r.sim.cost_ns > 0) {
      std::snprintf(time, sizeof time, "%.3f ms", static_cast<double>(r.sim.cost_ns) / 1e6);
      line += std::string(", ") + time + " of recording cost taken out (" + std::to_string(r.sim.op_cost_ns) +
              " ns an op, " + (r.sim.cost_from_capture ? "as the capture measured it" : "--op-cost-ns") +
              (r.sim.cost_refused.empty() ? "" : " between ops: " + r.sim.cost_refused) + ")";
    }
  }
  std::snprintf(time, sizeof time, "%.2f s", r.seconds);
  return line + " -> " + r.output + " (" + time + ")";
}

}  // namespace chakrashim::tools::convert
