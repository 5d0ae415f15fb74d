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

int run_et_check(const std::vector<std::string>& paths, const EtCheckOptions& options) {
  std::vector<EtFile> files;
  std::vector<EtFileFigures> figures;
  std::vector<EtFinding> findings;
  std::vector<std::size_t> first_of_file;  // findings' start per file
  for (const auto& p : paths) {
    files.push_back(convert::read_et_file(p));
    figures.emplace_back();
    first_of_file.push_back(findings.size());
    auto found = check_et_file(files.back(), &figures.back());
    findings.insert(findings.end(), found.begin(), found.end());
  }
  first_of_file.push_back(findings.size());
  const auto across = check_et_set(files);
  std::size_t errors = 0, warnings = 0;
  for (const auto* list : {static_cast<const std::vector<EtFinding>*>(&findings), &across})
    for (const auto& f : *list) ++(f.severity == EtSeverity::error ? errors : warnings);
  const int status = errors > 0 || (options.strict && warnings > 0) ? 1 : 0;
  if (options.json) {
    nlohmann::ordered_json doc;
    auto finding_json = [](const EtFinding& f) {
      nlohmann::ordered_json j;
      if (f.rank) j["rank"] = *f.rank;
      j["severity"] = f.severity == EtSeverity::error ? "error" : "warning";
      j["rule"] = f.rule;
      j["detail"] = f.detail;
      j["fix"] = f.fix;
      return j;
    };
    doc["files"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < files.size(); ++i) {
      nlohmann::ordered_json f;
      f["path"] = files[i].path;
      if (files[i].rank) f["rank"] = *files[i].rank;
      f["nodes"] = figures[i].nodes;
      f["collectives"] = figures[i].collectives;
      f["sends"] = figures[i].sends;
      f["receives"] = figures[i].receives;
      f["findings"] = nlohmann::ordered_json::array();
      for (std::size_t k = first_of_file[i]; k < first_of_file[i + 1]; ++k) f["findings"].push_back(finding_json(findings[k]));
      doc["files"].push_back(f);
    }
    doc["across_files"] = nlohmann::ordered_json::array();
    for (const auto& f : across) doc["across_files"].push_back(finding_json(f));
    doc["errors"] = errors;
    doc["warnings"] = warnings;
    doc["exit_status"] = status;
    std::printf("%s\n", doc.dump(2).c_str());
    return status;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t k = first_of_file[i]; k < first_of_file[i + 1]; ++k) std::printf("%s\n", line(findings[k]).c_str());
    if (options.quiet) continue;
    const std::size_t mine = first_of_file[i + 1] - first_of_file[i];
    const std::string name = files[i].rank ? "rank " + std::to_string(*files[i].rank) : files[i].path;
    std::printf("%s: %s; %s\n", name.c_str(), mine == 0 ? "ok" : (std::to_string(mine) + " finding(s)").c_str(),
                figures_text(figures[i]).c_str());
  }
  for (const auto& f : across) std::printf("%s\n", line(f).c_str());
  if (!options.quiet)
    std::printf("chakrashim check: %zu .et file%s, %zu error%s, %zu warning%s\n", files.size(),
                files.size() == 1 ? "" : "s", errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  return status;
}

}  // namespace chakrashim::tools::check
