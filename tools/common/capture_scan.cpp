#include "common/capture_scan.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <system_error>

#include "files/byte_stream.h"

namespace chakrashim::tools {

namespace fs = std::filesystem;

namespace {

std::optional<std::uint64_t> to_u64(const std::string& digits) {
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  return std::stoull(digits);
}

FileKind kind_from_folder(const fs::path& path) {
  const auto folder = parse_folder_name(path.parent_path().filename().string());
  return folder ? folder->kind : FileKind::unknown;
}

// Files of one kind into the rank table; a second file for the same rank and
// kind is kept as unknown rather than silently replacing the first.
void add_file(std::map<std::uint64_t, RankFiles>& ranks, CaptureGroup& group, FileKind kind,
              std::optional<std::uint64_t> rank, const std::string& path) {
  RankFiles& r = ranks[rank.value_or(0)];
  r.rank = rank.value_or(0);
  r.rank_from_name = rank.has_value();
  auto& slot = kind == FileKind::host ? r.host_path : r.device_path;
  if (slot) group.unknown.push_back(path);
  else slot = path;
}

void finish_group(std::map<std::uint64_t, RankFiles>& ranks, CaptureGroup& group) {
  for (auto& [rank, files] : ranks) group.ranks.push_back(std::move(files));
  std::sort(group.partials.begin(), group.partials.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
}

std::vector<fs::path> files_in(const std::string& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (dir.empty()) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

CaptureGroup scan_pair(const std::string& label, const std::string& host_dir,
                       const std::string& device_dir) {
  CaptureGroup group{label, host_dir, device_dir, {}, {}, {}};
  std::map<std::uint64_t, RankFiles> ranks;
  for (const auto& [dir, kind] : {std::pair{host_dir, FileKind::host}, std::pair{device_dir, FileKind::device}}) {
    for (const auto& path : files_in(dir)) {
      const std::string name = path.filename().string();
      const auto rank = rank_from_file_name(name);
      if (is_partial_name(name)) group.partials.push_back({rank, path.string()});
      else if (rank && name.rfind("rank-", 0) == 0) add_file(ranks, group, kind, *rank, path.string());
      else group.unknown.push_back(path.string());
    }
  }
  finish_group(ranks, group);
  return group;
}

std::string sibling_dir(const fs::path& parent, const FolderName& f, FileKind kind) {
  std::string name = f.job + (kind == FileKind::host ? "_chakra" : "_kineto");
  if (f.index > 0) name += "." + std::to_string(f.index);
  const fs::path p = parent / name;
  std::error_code ec;
  return fs::is_directory(p, ec) ? p.string() : std::string();
}

CaptureGroup scan_folder_pair(const fs::path& parent, const FolderName& f) {
  const std::string label = f.index > 0 ? f.job + "." + std::to_string(f.index) : f.job;
  return scan_pair(label, sibling_dir(parent, f, FileKind::host), sibling_dir(parent, f, FileKind::device));
}

}  // namespace

std::optional<FolderName> parse_folder_name(const std::string& name) {
  static const std::regex kPattern(R"(^(.+)_(chakra|kineto)(?:\.(\d+))?$)");
  std::smatch m;
  if (!std::regex_match(name, m, kPattern)) return std::nullopt;
  FolderName f;
  f.job = m[1];
  f.kind = m[2] == "chakra" ? FileKind::host : FileKind::device;
  if (m[3].matched) {
    const auto index = to_u64(m[3]);
    if (!index) return std::nullopt;
    f.index = *index;
  }
  return f;
}

bool is_partial_name(const std::string& name) {
  constexpr std::string_view kSuffix = ".partial";
  return name.size() >= kSuffix.size() && name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::optional<std::uint64_t> rank_from_file_name(const std::string& name) {
  static const std::regex kRank(R"(^rank-(\d+)\.json)");
  static const std::regex kOther(R"([._-](\d+)\.json)");
  std::smatch m;
  if (std::regex_search(name, m, kRank)) return to_u64(m[1]);
  if (std::regex_search(name, m, kOther)) return to_u64(m[1]);
  return std::nullopt;
}

FileKind sniff_kind(const std::string& path) {
  // The head is enough: both formats name their first key within a few bytes
  // (deviceProperties can be long, but schemaVersion comes before it).
  files::ByteStream stream(path);
  std::string head(4096, '\0');
  const auto n = stream.sgetn(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(n, 0)));
  static const std::regex kKey(R"re("([A-Za-z_]+)"\s*:)re");
  for (std::sregex_iterator it(head.begin(), head.end(), kKey), end; it != end; ++it) {
    const std::string key = (*it)[1];
    if (key == "schemaVersion" || key == "deviceProperties" || key == "distributedInfo" ||
        key == "traceEvents")
      return FileKind::device;
    if (key == "schema" || key == "nodes" || key == "start_ts") return FileKind::host;
  }
  return FileKind::unknown;
}

ScanResult scan_directory(const std::string& dir) {
  ScanResult result;
  std::error_code ec;
  const fs::path root = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (!fs::is_directory(root, ec)) {
    result.error = "not a folder";
    return result;
  }
  const fs::path self = root.has_filename() ? root : root.parent_path();
  if (const auto f = parse_folder_name(self.filename().string())) {
    result.groups.push_back(scan_folder_pair(self.parent_path(), *f));
    return result;
  }
  std::map<std::pair<std::string, std::uint64_t>, FolderName> runs;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (!entry.is_directory(ec)) continue;
    if (const auto f = parse_folder_name(entry.path().filename().string())) {
      runs.emplace(std::pair{f->job, f->index}, *f);
    }
  }
  if (runs.empty()) {
    std::vector<std::string> paths;
    for (const auto& p : files_in(root.string())) paths.push_back(p.string());
    return group_files(paths);
  }
  for (const auto& [key, f] : runs) result.groups.push_back(scan_folder_pair(root, f));
  return result;
}

namespace {
// Runs of digits compare as numbers: "step-7" before "step-12", as a user
// reads the windows of one run (docs/on-demand.md).
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      // Without leading zeros, the longer run is the larger number.
      std::size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      const int c = a.compare(si, ei - si, b, sj, ej - sj);
      if (c != 0) return c < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}
}  // namespace

std::vector<std::string> capture_roots_below(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    std::error_code inner;
    for (const auto& sub : fs::directory_iterator(entry.path(), inner)) {
      if (sub.is_directory(inner) && parse_folder_name(sub.path().filename().string())) {
        out.push_back(entry.path().string());
        break;
      }
    }
  }
  std::sort(out.begin(), out.end(), natural_less);
  return out;
}

namespace {
// "a, b, c and 4 more"
std::string first_few(const std::vector<std::string>& items) {
  std::string list;
  for (std::size_t i = 0; i < items.size() && i < 5; ++i) list += (i ? ", " : "") + items[i];
  if (items.size() > 5) list += " and " + std::to_string(items.size() - 5) + " more";
  return list;
}

// What a folder holds, for a user who gave the wrong one:
//   "it holds 2 folders (a/, b/) and 1 file (notes.txt)"   "it is empty"
std::string contents_of(const std::string& dir) {
  std::vector<std::string> folders, files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(ec)) folders.push_back(name + "/");
    else files.push_back(name);
  }
  if (folders.empty() && files.empty()) return "it is empty";
  std::sort(folders.begin(), folders.end(), natural_less);
  std::sort(files.begin(), files.end(), natural_less);
  const auto counted = [](const std::vector<std::string>& v, const char* what) {
    return std::to_string(v.size()) + " " + what + (v.size() == 1 ? "" : "s") + " (" + first_few(v) + ")";
  };
  std::string out = "it holds ";
  if (!folders.empty()) out += counted(folders, "folder");
  if (!folders.empty() && !files.empty()) out += " and ";
  if (!files.empty()) out += counted(files, "file");
  return out;
}
}  // namespace

std::string nothing_found(const std::string& dir) {
  // The capture's own folders, there and empty: the capture wrote nothing
  // (issue #49: after a full disk, check asked for folders that were there).
  std::vector<std::string> empty_ours;
  std::error_code ec0;
  for (const auto& entry : fs::directory_iterator(dir, ec0)) {
    const auto folder = parse_folder_name(entry.path().filename().string());
    std::error_code ec;
    if (folder && entry.is_directory(ec) && fs::is_empty(entry.path(), ec))
      empty_ours.push_back(entry.path().filename().string() + "/");
  }
  if (!empty_ours.empty()) {
    std::sort(empty_ours.begin(), empty_ours.end(), natural_less);
    return "no capture in " + dir + ": " + first_few(empty_ours) + (empty_ours.size() == 1 ? " is" : " are") +
           " empty: the capture made them and wrote nothing there (a full or unwritable disk, a window that kept no "
           "step, or a job that died before its window ended: its log says which)";
  }
  const auto below = capture_roots_below(dir);
  // Trace roots of repeated or on-demand captures lie two levels down
  // (ROOT/step-S/JOB_chakra): name them too, as the commands take them.
  std::vector<std::string> window_roots;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec) && !window_folders(entry.path().string()).empty())
      window_roots.push_back(entry.path().string());
  std::sort(window_roots.begin(), window_roots.end(), natural_less);
  const std::string expected = "expected JOB_chakra/ and JOB_kineto/ folders (or step-S/ folders of them), or "
                               "trace files, in it";
  if (below.empty() && window_roots.empty())
    return "no capture in " + dir + ": " + contents_of(dir) + "; " + expected + " or one level down";
  std::string where;
  if (!below.empty()) where += "captures one level down: " + first_few(below);
  if (!window_roots.empty())
    where += std::string(where.empty() ? "" : "; ") + "windows of repeated or on-demand captures in " +
             first_few(window_roots);
  return "no capture in " + dir + " itself (" + expected + "); " + where + " (give one of them)";
}

std::string describe_unknown_file(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".et") == 0)
    return "is a Chakra protobuf trace (what `chakrashim convert` writes for ASTRA-sim), not a capture file";
  files::ByteStream stream(path);
  if (!stream.ok()) return "cannot be read (" + stream.error() + ")";
  std::string head(256, '\0');
  const auto n = stream.sgetn(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(n, 0)));
  if (!stream.ok()) return "cannot be read (" + stream.error() + ")";
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "is empty";
  if (head[first] != '{') return "is not JSON, so neither an ET nor a device trace";
  return "is JSON, but neither an ET (keys schema, nodes) nor a device trace (key traceEvents)";
}

std::vector<std::string> window_folders(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  const ScanResult here = scan_directory(dir);
  if (!here.error.empty()) return {};
  for (const auto& g : here.groups)
    if (!g.ranks.empty() || !g.partials.empty() || !g.unknown.empty()) return {};  // a capture of its own
  std::vector<std::string> below = capture_roots_below(dir);
  static const std::regex kWindow(R"(^step-[0-9]+$)");
  for (const auto& b : below)
    if (!std::regex_match(fs::path(b).filename().string(), kWindow)) return {};
  return below;
}

ScanResult scan_capture(const std::string& dir) {
  const auto windows = window_folders(dir);
  if (windows.empty()) return scan_directory(dir);
  ScanResult all;
  for (const auto& w : windows) {
    ScanResult one = scan_directory(w);
    const std::string window = fs::path(w).filename().string();
    for (auto& g : one.groups) {
      g.label = window + "/" + g.label;
      all.groups.push_back(std::move(g));
    }
  }
  return all;
}

ScanResult group_files(const std::vector<std::string>& paths) {
  ScanResult result;
  CaptureGroup group;
  std::map<std::uint64_t, RankFiles> ranks;
  for (const auto& path : paths) {
    const std::string name = fs::path(path).filename().string();
    if (is_partial_name(name)) {
      group.partials.push_back({rank_from_file_name(name), path});
      continue;
    }
    FileKind kind = kind_from_folder(fs::path(path));
    if (kind == FileKind::unknown) kind = sniff_kind(path);
    if (kind == FileKind::unknown) {
      group.unknown.push_back(path);
      continue;
    }
    add_file(ranks, group, kind, rank_from_file_name(name), path);
  }
  finish_group(ranks, group);
  result.groups.push_back(std::move(group));
  return result;
}

}  // namespace chakrashim::tools
