#include "files/output_paths.h"

#include <array>

namespace chakrashim::files {

namespace {
constexpr std::uint64_t kMaxIndexes = 10000;

std::string join(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Layout layout_at(const LayoutRequest& r, std::uint64_t index) {
  Layout l;
  l.index = index;
  l.host_dir = join(r.root, folder_name(r.job_id, TraceKind::host, index));
  l.device_dir = join(r.root, folder_name(r.job_id, TraceKind::device, index));
  l.host_path = join(l.host_dir, rank_file_name(r.rank, false));
  l.device_path = join(l.device_dir, rank_file_name(r.rank, r.gzip));
  l.run_id = r.run_id;
  l.overwrite = r.overwrite;
  return l;
}
}  // namespace

std::string folder_name(const std::string& job_id, TraceKind kind, std::uint64_t index) {
  std::string name = job_id + (kind == TraceKind::host ? "_chakra" : "_kineto");
  if (index > 0) name += "." + std::to_string(index);
  return name;
}

std::string rank_file_name(std::uint64_t rank, bool gzip) {
  return "rank-" + std::to_string(rank) + (gzip ? ".json.gz" : ".json");
}

std::string partial_path(const std::string& final_path) { return final_path + ".partial"; }

std::optional<Layout> choose_layout(const LayoutRequest& request,
                                    const std::function<bool(const std::string&)>& exists,
                                    const FolderRefusal& refused,
                                    const OtherRunsFolder& other_run) {
  const std::uint64_t first = request.restart_count;
  std::string passed_over;
  for (std::uint64_t i = first; i - first < kMaxIndexes; ++i) {
    Layout l = layout_at(request, i);
    l.passed_over = passed_over;
    std::string why;
    for (const std::string* dir : {&l.host_dir, &l.device_dir})
      if (const std::string r = refused ? refused(*dir) : std::string(); !r.empty() && why.empty())
        why = *dir + " " + r;
    if (!why.empty()) {
      passed_over += (passed_over.empty() ? "" : "; ") + why;
      continue;
    }
    if (request.overwrite) return l;
    const std::string device_plain = join(l.device_dir, rank_file_name(request.rank, false));
    const std::string device_gz = join(l.device_dir, rank_file_name(request.rank, true));
    const std::array<std::string, 6> taken = {
        l.host_path,  partial_path(l.host_path), device_plain,
        partial_path(device_plain), device_gz, partial_path(device_gz)};
    bool free = true;
    for (const auto& p : taken) free = free && !exists(p);
    if (other_run) free = free && !other_run(l.host_dir) && !other_run(l.device_dir);
    if (free) return l;
  }
  return std::nullopt;
}

}  // namespace chakrashim::files
