#include "check/et_check.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "check/et_file_rules.h"
#include "convert/et_file_reader.h"

namespace chakrashim::tools::check {

namespace {

namespace fs = std::filesystem;

bool et_name(const fs::path& p) { return p.extension() == ".et"; }

std::string who(const EtFinding& f) {
  return f.rank ? "rank " + std::to_string(*f.rank) : std::string(".et files");
}

std::string line(const EtFinding& f) {
  std::string text = who(f) + ": " + (f.severity == EtSeverity::error ? "error" : "warning") + " [" + f.rule + "] " +
                     f.detail;
  if (!f.fix.empty()) text += ": " + f.fix;
  return text;
}

std::string figures_text(const EtFileFigures& fig) {
  return std::to_string(fig.nodes) + " nodes (" + std::to_string(fig.collectives) + " collectives, " +
         std::to_string(fig.sends) + " sends, " + std::to_string(fig.receives) + " receives)";
}

}  // namespace

std::vector<std::string> et_files_in(const std::vector<std::string>& paths) {
  std::error_code ec;
  std::vector<std::string> out;
  if (paths.size() == 1 && fs::is_directory(paths[0], ec)) {
    for (const auto& e : fs::directory_iterator(paths[0], ec)) {
      if (e.is_regular_file(ec) && et_name(e.path())) out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      const auto ra = convert::et_file_rank(a), rb = convert::et_file_rank(b);
      return ra && rb && *ra != *rb ? *ra < *rb : a < b;
    });
    return out;
  }
  for (const auto& p : paths) {
    if (!et_name(p)) return {};
    out.push_back(p);
  }
  return out;
}

namespace {

// One file's verdict: its findings and figures.
struct FileVerdict {
  EtFile file;
  EtFileFigures figures;
  std::vector<EtFinding> findings;
};

struct Verdict {
  std::vector<FileVerdict> files;
  std::vector<EtFinding> across;  // check_et_set's
  std::size_t errors = 0, warnings = 0;
  int status = 0;
};

Verdict judge(const std::vector<std::string>& paths, bool strict) {
  Verdict v;
  std::vector<EtFile> files;
  for (const auto& p : paths) {
    FileVerdict f;
    f.file = convert::read_et_file(p);
    f.findings = check_et_file(f.file, &f.figures);
    // The nodes stay only for the rules across files.
    files.push_back(f.file);
    f.file.nodes = {};
    v.files.push_back(std::move(f));
  }
  v.across = check_et_set(files);
  const auto count = [&v](const EtFinding& f) { ++(f.severity == EtSeverity::error ? v.errors : v.warnings); };
  for (const auto& f : v.files) std::for_each(f.findings.begin(), f.findings.end(), count);
  std::for_each(v.across.begin(), v.across.end(), count);
  v.status = v.errors > 0 || (strict && v.warnings > 0) ? 1 : 0;
  return v;
}

nlohmann::ordered_json finding_json(const EtFinding& f) {
  nlohmann::ordered_json j;
  if (f.rank) j["rank"] = *f.rank;
  j["severity"] = f.severity == EtSeverity::error ? "error" : "warning";
  j["rule"] = f.rule;
  j["detail"] = f.detail;
  j["fix"] = f.fix;
  return j;
}

nlohmann::ordered_json verdict_json(const Verdict& v) {
  nlohmann::ordered_json doc;
  doc["files"] = nlohmann::ordered_json::array();
  for (const FileVerdict& fv : v.files) {
    nlohmann::ordered_json f;
    f["path"] = fv.file.path;
    if (fv.file.rank) f["rank"] = *fv.file.rank;
    f["nodes"] = fv.figures.nodes;
    f["collectives"] = fv.figures.collectives;
    f["sends"] = fv.figures.sends;
    f["receives"] = fv.figures.receives;
    f["findings"] = nlohmann::ordered_json::array();
    for (const auto& finding : fv.findings) f["findings"].push_back(finding_json(finding));
    doc["files"].push_back(f);
  }
  doc["across_files"] = nlohmann::ordered_json::array();
  for (const auto& f : v.across) doc["across_files"].push_back(finding_json(f));
  doc["errors"] = v.errors;
  doc["warnings"] = v.warnings;
  doc["exit_status"] = v.status;
  return doc;
}

void print_text(const Verdict& v, bool quiet) {
  for (const FileVerdict& fv : v.files) {
    for (const auto& f : fv.findings) std::printf("%s\n", line(f).c_str());
    if (quiet) continue;
    const std::string name = fv.file.rank ? "rank " + std::to_string(*fv.file.rank) : fv.file.path;
    const std::string verdict = fv.findings.empty() ? "ok" : std::to_string(fv.findings.size()) + " finding(s)";
    std::printf("%s: %s; %s\n", name.c_str(), verdict.c_str(), figures_text(fv.figures).c_str());
  }
  for (const auto& f : v.across) std::printf("%s\n", line(f).c_str());
  if (quiet) return;
  const auto plural = [](std::size_t n) { return n == 1 ? "" : "s"; };
  std::printf("chakrashim check: %zu .et file%s, %zu error%s, %zu warning%s\n", v.files.size(),
              plural(v.files.size()), v.errors, plural(v.errors), v.warnings, plural(v.warnings));
}

}  // namespace

int run_et_check(const std::vector<std::string>& paths, const EtCheckOptions& options,
                 nlohmann::ordered_json* json_out) {
  const Verdict v = judge(paths, options.strict);
  if (json_out) *json_out = verdict_json(v);
  else if (options.json) std::printf("%s\n", verdict_json(v).dump(2).c_str());
  else print_text(v, options.quiet);
  return v.status;
}

}  // namespace chakrashim::tools::check
