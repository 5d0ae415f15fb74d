// `chakrashim check` on Chakra .et files (check/et_file_rules.h): which
// arguments are such files, reading them, and the lines or JSON printed.
// Built where `convert` is (it decodes with convert's protobuf schema).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chakrashim::tools::check {

struct EtCheckOptions {
  bool strict = false, quiet = false, json = false;
};

// The .et files the arguments name: FILE.et arguments, or a folder holding
// PREFIX.R.et files (a JOB_et/ folder that convert wrote). Empty when the
// arguments are something else (a capture).
std::vector<std::string> et_files_in(const std::vector<std::string>& paths);

// Checks them, prints, and returns the exit status. With `json_out`, the
// JSON verdict goes there instead of being printed (a root that holds a
// capture beside its .et files prints one document for both).
int run_et_check(const std::vector<std::string>& files, const EtCheckOptions& options,
                 nlohmann::ordered_json* json_out = nullptr);

}  // namespace chakrashim::tools::check
