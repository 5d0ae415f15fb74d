#include "files/on_demand_files.h"

#include <nlohmann/json.hpp>

namespace chakrashim::window {

namespace {
constexpr std::string_view kStepFormat = "chakrashim-step/1";
constexpr std::string_view kTriggerFormat = "chakrashim-trigger/1";
constexpr std::string_view kMissedFormat = "chakrashim-missed/1";

bool unsigned_field(const nlohmann::json& j, const char* key, std::uint64_t& out,
                    std::string& error) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) {
    error = std::string("\"") + key + "\" is missing or not a whole number >= 0";
    return false;
  }
  out = it->get<std::uint64_t>();
  return true;
}

bool number_field(const nlohmann::json& j, const char* key, double& out, std::string& error) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) {
    error = std::string("\"") + key + "\" is missing or not a number";
    return false;
  }
  out = it->get<double>();
  return true;
}

std::optional<nlohmann::json> parse_object(std::string_view text, std::string_view format,
                                           std::string& error) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  const auto f = j.find("format");
  if (f == j.end() || !f->is_string() || f->get<std::string>() != format) {
    error = "\"format\" is not \"" + std::string(format) + "\"";
    return std::nullopt;
  }
  return j;
}
}  // namespace

std::string control_dir(const std::string& trace_dir, const std::string& job_id) {
  std::string dir = trace_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/.chakrashim/" + job_id;
}

std::string window_folder_name(std::uint64_t first_step) {
  return "step-" + std::to_string(first_step);
}

bool is_trigger_file_name(std::string_view name) {
  constexpr std::string_view prefix = "trigger-", suffix = ".json";
  return name.size() > prefix.size() + suffix.size() && name.substr(0, prefix.size()) == prefix &&
         name.substr(name.size() - suffix.size()) == suffix;
}

std::string trigger_file_name(std::int64_t time_ns, std::int64_t pid) {
  return "trigger-" + std::to_string(time_ns) + "-" + std::to_string(pid) + ".json";
}

std::string encode_step_note(const StepNote& n) {
  nlohmann::json j = {{"format", kStepFormat},     {"job_id", n.job_id},
                      {"rank", n.rank},            {"step", n.step},
                      {"time_s", n.time_s},        {"steps_per_s", n.steps_per_s},
                      {"pid", n.pid},              {"host", n.host},
                      {"restart", n.restart},      {"world_size", n.world_size},
                      {"warmup", n.warmup},        {"gzip", n.gzip}};
  j["ranks"] = n.ranks ? nlohmann::json(*n.ranks) : nlohmann::json(nullptr);
  return j.dump() + "\n";
}

std::optional<StepNote> decode_step_note(std::string_view text, std::string& error) {
  const auto j = parse_object(text, kStepFormat, error);
  if (!j) return std::nullopt;
  StepNote n;
  std::uint64_t pid = 0;
  if (!unsigned_field(*j, "rank", n.rank, error) || !unsigned_field(*j, "step", n.step, error) ||
      !number_field(*j, "time_s", n.time_s, error) ||
      !number_field(*j, "steps_per_s", n.steps_per_s, error) ||
      !unsigned_field(*j, "pid", pid, error) || !unsigned_field(*j, "restart", n.restart, error) ||
      !unsigned_field(*j, "warmup", n.warmup, error))
    return std::nullopt;
  n.pid = static_cast<std::int64_t>(pid);
  const auto str = [&](const char* key, std::string& out) {
    const auto it = j->find(key);
    if (it == j->end() || !it->is_string()) {
      error = std::string("\"") + key + "\" is missing or not text";
      return false;
    }
    out = it->get<std::string>();
    return true;
  };
  if (!str("job_id", n.job_id) || !str("host", n.host)) return std::nullopt;
  const auto ws = j->find("world_size");
  if (ws == j->end() || !ws->is_number_integer() || ws->get<std::int64_t>() < -1) {
    error = "\"world_size\" is missing or not a whole number >= -1";
    return std::nullopt;
  }
  n.world_size = ws->get<std::int64_t>();
  const auto ranks = j->find("ranks");
  if (ranks != j->end() && ranks->is_string()) n.ranks = ranks->get<std::string>();
  else if (ranks != j->end() && !ranks->is_null()) {
    error = "\"ranks\" is not text or null";
    return std::nullopt;
  }
  const auto gz = j->find("gzip");
  n.gzip = gz != j->end() && gz->is_boolean() && gz->get<bool>();
  return n;
}

std::string encode_trigger(const Trigger& t) {
  const nlohmann::json j = {{"format", kTriggerFormat},  {"first_step", t.first_step},
                            {"steps", t.steps},          {"restart", t.restart},
                            {"requested_s", t.requested_s}, {"requested_by", t.requested_by}};
  return j.dump() + "\n";
}

std::optional<Trigger> decode_trigger(std::string_view text, std::string& error) {
  const auto j = parse_object(text, kTriggerFormat, error);
  if (!j) return std::nullopt;
  Trigger t;
  if (!unsigned_field(*j, "first_step", t.first_step, error) ||
      !unsigned_field(*j, "steps", t.steps, error) ||
      !unsigned_field(*j, "restart", t.restart, error))
    return std::nullopt;
  if (t.steps == 0 || t.steps > kMaxTriggerSteps) {
    error = "\"steps\" must be 1 to " + std::to_string(kMaxTriggerSteps);
    return std::nullopt;
  }
  if (t.first_step > UINT64_MAX - t.steps - 1) {
    error = "\"first_step\" is too large";
    return std::nullopt;
  }
  if (const auto it = j->find("requested_s"); it != j->end() && it->is_number())
    t.requested_s = it->get<double>();
  if (const auto it = j->find("requested_by"); it != j->end() && it->is_string())
    t.requested_by = it->get<std::string>();
  return t;
}

std::string missed_file_name(std::uint64_t first_step, std::uint64_t rank) {
  return "missed-" + std::to_string(first_step) + "-rank-" + std::to_string(rank) + ".json";
}

std::string encode_missed(const Missed& m) {
  const nlohmann::json j = {{"format", kMissedFormat}, {"first_step", m.first_step},
                            {"rank", m.rank}, {"why", m.why}};
  return j.dump() + "\n";
}

std::optional<Missed> decode_missed(std::string_view text, std::string& error) {
  const auto j = parse_object(text, kMissedFormat, error);
  if (!j) return std::nullopt;
  Missed m;
  if (!unsigned_field(*j, "first_step", m.first_step, error) ||
      !unsigned_field(*j, "rank", m.rank, error))
    return std::nullopt;
  if (const auto it = j->find("why"); it != j->end() && it->is_string()) m.why = it->get<std::string>();
  return m;
}

}  // namespace chakrashim::window
