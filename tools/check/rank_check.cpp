#include "check/rank_check.h"

#include <cstdio>
#include <filesystem>
#include <istream>

#include "chakrashim/trace_schema.h"
#include "check/device_facts.h"
#include "check/et_facts.h"
#include "check/rank_rules.h"
#include "files/byte_stream.h"
#include "common/et_reader.h"
#include "common/hta_rank_scan.h"
#include "common/trace_reader.h"

namespace chakrashim::tools::check {

namespace {

bool is_gzip(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char magic[2] = {0, 0};
  const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::fclose(f);
  return gz;
}

// Counts on-disk bytes into the shared progress counter.
files::ByteStream::ChunkObserver progress_observer(std::atomic<std::uint64_t>* progress,
                                            std::function<void(std::string_view)> also = {}) {
  return [progress, also = std::move(also), last = std::uint64_t{0}](std::string_view chunk,
                                                                     std::uint64_t pos) mutable {
    if (also) also(chunk);
    if (progress != nullptr && pos > last) progress->fetch_add(pos - last, std::memory_order_relaxed);
    last = pos;
  };
}

}  // namespace

std::string display_path(const std::string& path, const std::string& root) {
  if (root.empty()) return path;
  std::error_code ec;
  const auto abs = std::filesystem::absolute(path, ec).lexically_normal();
  const auto rel = abs.lexically_relative(std::filesystem::absolute(root, ec).lexically_normal());
  if (rel.empty() || rel.native().rfind("..", 0) == 0) return path;
  return rel.string();
}

RankReport check_rank(const std::string& group, const RankFiles& files,
                      const CheckOptions& options, std::atomic<std::uint64_t>* progress) {
  RankReport report;
  report.group = group;
  report.rank = files.rank;
  report.host_path = files.host_path;
  report.device_path = files.device_path;

  EtFacts et(options.step_marker);
  EtSummary et_summary;
  PairIdentity identity;  // whose files these are, for identity_rule
  if (files.host_path) {
    EtInput in{display_path(*files.host_path, options.display_root), is_gzip(*files.host_path), {}, &et_summary, &et};
    files::ByteStream stream(*files.host_path, progress_observer(progress));
    if (!stream.ok()) {
      in.read_error = stream.error();
    } else {
      std::istream is(&stream);
      et_summary = read_execution_trace(is, [&](const EtNode& n) { et.add(n); });
      if (!et_summary.parse.ok && !stream.error().empty()) in.read_error = stream.error();
    }
    et.finish();
    report.et_world_size = et.world_size();
    if (et_summary.chakrashim && et_summary.chakrashim->is_object()) {
      const auto it = et_summary.chakrashim->find("device_trace");
      if (it != et_summary.chakrashim->end() && it->is_string()) report.et_device_trace = it->get<std::string>();
      const auto run = et_summary.chakrashim->find("run");
      if (run != et_summary.chakrashim->end() && run->is_string()) report.et_run = run->get<std::string>();
      const auto world = et_summary.chakrashim->find("world_size");
      if (world != et_summary.chakrashim->end() && world->is_number_unsigned())
        report.et_meta_world_size = world->get<std::uint64_t>();
    }
    note_et(identity, *files.host_path, et_summary);
    et_rules(in, report.figures, report.findings);
  }

  if (!files.device_path) return report;
  std::vector<std::uint64_t> marker_rf_ids;
  for (const auto& m : et.outermost_markers()) marker_rf_ids.push_back(m.rf_id);
  const bool have_et = files.host_path.has_value() && et_summary.parse.ok;
  DeviceFacts device(have_et ? &et.op_rf_ids() : nullptr, std::move(marker_rf_ids));
  TraceSummary summary;
  HtaRankScan scan;
  DeviceInput in{display_path(*files.device_path, options.display_root), {}, &summary, &device, {}, {}};
  files::ByteStream stream(*files.device_path,
                    progress_observer(progress, [&scan](std::string_view chunk) { scan.feed(chunk); }));
  if (!stream.ok()) {
    in.read_error = stream.error();
  } else {
    std::istream is(&stream);
    summary = read_device_trace(is, [&](const TraceEvent& e) {
      note_device_event(identity, e);
      device.add(e);
    });
    if (!summary.parse.ok && !stream.error().empty()) in.read_error = stream.error();
  }
  scan.finish();
  device.finish();
  in.hta_rank = scan.rank();
  if (files.rank_from_name) {
    in.expected_rank = files.rank;
  } else if (summary.distributed_info && summary.distributed_info->is_object()) {
    const auto it = summary.distributed_info->find(chakrashim::schema::kRank);
    if (it != summary.distributed_info->end() && it->is_number_unsigned()) in.expected_rank = it->get<std::uint64_t>();
  }
  if (summary.chakrashim) report.meta = parse_meta(*summary.chakrashim);
  device_rules(in, report.meta, report.figures, report.findings);
  if (have_et && summary.parse.ok && in.read_error.empty()) {
    // Ahead of pair_rules: when the files are not one rank's, the join and
    // step findings that follow are only its consequences.
    note_device(identity, summary);
    // torch.profiler's last cycle beside its whole ET is said as such
    // (pair_rules), not as files of two processes.
    if (!torch_last_cycle(et, device, report.meta))
      identity_rule(display_path(*files.host_path, options.display_root), in.path, identity, et, device,
                    report.findings);
    pair_rules(et, device, report.meta, options.step_marker, report.figures, report.findings);
  }
  return report;
}

}  // namespace chakrashim::tools::check
