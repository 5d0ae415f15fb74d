#include "nemo_profile.h"

#include <cctype>
#include <map>
#include <optional>

#include "config/value_grammar.h"

namespace chakrashim::tools {

namespace {

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

// A scalar as YAML writes it: quotes removed, a trailing comment dropped.
std::string scalar(std::string_view raw) {
  std::string v = trim(raw);
  if (!v.empty() && (v[0] == '"' || v[0] == '\'')) {
    const auto close = v.find(v[0], 1);
    return close == std::string::npos ? v.substr(1) : v.substr(1, close - 1);
  }
  if (const auto hash = v.find(" #"); hash != std::string::npos) v = trim(v.substr(0, hash));
  return v;
}

// Each line's indent, key and value (empty for a mapping's own line);
// comments and blank lines skipped.
struct Line {
  std::size_t indent = 0;
  std::string key, value;
};

std::vector<Line> lines_of(std::string_view text) {
  std::vector<Line> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view l = text.substr(at, end - at);
    at = end + 1;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    std::size_t indent = 0;
    while (indent < l.size() && l[indent] == ' ') ++indent;
    const std::string body = trim(l);
    if (body.empty() || body[0] == '#' || body[0] == '-' || body == "---") continue;
    const auto colon = body.find(':');
    if (colon == std::string::npos) continue;
    out.push_back({indent, trim(std::string_view(body).substr(0, colon)), scalar(std::string_view(body).substr(colon + 1))});
    if (end == text.size()) break;
  }
  return out;
}

// The scalars right under the mapping at `path` ("model.chakra_profile"), or
// nullopt when there is no such mapping. Keys are unique in a mapping, so
// leaving a matched mapping without finding the next key means it is not
// there.
std::optional<std::map<std::string, std::string>> section(const std::vector<Line>& lines,
                                                          const std::vector<std::string>& path) {
  std::size_t matched = 0;          // keys of `path` found so far
  std::size_t matched_indent = 0;   // the last one's indent
  std::optional<std::size_t> child;  // the indent of the mapping under it
  std::map<std::string, std::string> out;
  for (const Line& l : lines) {
    if (matched > 0 && l.indent <= matched_indent) {
      if (matched == path.size()) return out;  // the section ended
      return std::nullopt;
    }
    if (matched > 0 && !child) child = l.indent;
    const std::size_t level = matched == 0 ? 0 : *child;
    if (l.indent != level) continue;
    if (matched == path.size()) {
      out[l.key] = l.value;
    } else if (l.key == path[matched] && l.value.empty()) {
      ++matched;
      matched_indent = l.indent;
      child.reset();
    }
  }
  if (matched == path.size()) return out;
  return std::nullopt;
}

}  // namespace

NemoProfile nemo_profile(std::string_view yaml_text) {
  NemoProfile p;
  const auto lines = lines_of(yaml_text);
  std::optional<std::map<std::string, std::string>> keys = section(lines, {"chakra_profile"});
  p.where = "chakra_profile";
  if (!keys) {
    keys = section(lines, {"model", "chakra_profile"});
    p.where = "model.chakra_profile";
  }
  if (!keys) {
    p.error = "no chakra_profile section (at the top, or under model:)";
    return p;
  }
  const auto& k = *keys;
  for (const auto& [key, value] : k) {
    if (value.find("${") != std::string::npos) {
      p.error = p.where + "." + key + " is an interpolation (" + value +
                "), which only the job resolves: give its value with the matching chakra-run option";
      return p;
    }
  }
  const auto number = [&](const char* key, std::optional<std::uint64_t>& into) {
    const auto it = k.find(key);
    if (it == k.end() || it->second.empty() || it->second == "null") return true;
    const auto n = config::parse_decimal(it->second);
    if (!n) {
      p.error = p.where + "." + key + " is '" + it->second + "', not a whole number";
      return false;
    }
    into = *n;
    return true;
  };
  std::optional<std::uint64_t> start, end, warmup, active;
  if (!number("start_step", start) || !number("end_step", end) || !number("warmup_steps", warmup) ||
      !number("active_steps", active))
    return p;
  if (const auto it = k.find("enabled"); it != k.end()) {
    const std::string& v = it->second;
    if (v == "true" || v == "True" || v == "1") p.enabled = true;
    else if (!(v == "false" || v == "False" || v == "0" || v.empty() || v == "null")) {
      p.error = p.where + ".enabled is '" + v + "', not true or false";
      return p;
    }
  }
  if (!start || !end) {
    p.error = p.where + " has no " + std::string(!start ? "start_step" : "end_step") +
              ": it says which steps to capture";
    return p;
  }
  if (*end < *start) {
    p.error = p.where + ": end_step " + std::to_string(*end) + " is before start_step " + std::to_string(*start);
    return p;
  }
  if (active && *active == 0) {
    p.error = p.where + ".active_steps is 0: no step would be kept";
    return p;
  }
  const auto add = [&p](const char* key, const char* var, const std::string& value) {
    p.assignments.emplace_back(var, value);
    p.said += (p.said.empty() ? "" : ", ") + std::string(key) + " " + value + " -> " + var;
  };
  add("start_step", "CHAKRA_START_STEP", std::to_string(*start));
  add("end_step", "CHAKRA_END_STEP", std::to_string(*end));
  if (warmup) add("warmup_steps", "CHAKRA_WARMUP_STEPS", std::to_string(*warmup));
  if (active) add("active_steps", "CHAKRA_ACTIVE_STEPS", std::to_string(*active));
  if (const auto it = k.find("trace_dir"); it != k.end() && !it->second.empty() && it->second != "null")
    add("trace_dir", "CHAKRA_TRACE_DIR", it->second);
  return p;
}

}  // namespace chakrashim::tools
