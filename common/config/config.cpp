#include "config/config.h"

#include <regex.h>
#include <signal.h>

#include <algorithm>

#include "config/config_vars.h"
#include "config/nearest_name.h"

namespace chakrashim::config {

namespace {

const VarSpec& spec(std::string_view name) {
  for (const auto& v : kConfigVars)
    if (v.name == name) return v;
  return kConfigVars[0];  // unreachable: every caller names a table entry
}

// Collects errors while reading one variable at a time.
class Reader {
 public:
  explicit Reader(const EnvSnapshot& env) : env_(env) {}

  std::optional<std::string_view> raw(std::string_view name) const { return env_.get(name); }

  void fail(std::string_view name, std::string_view value, std::string_view why = {}) {
    std::string line = std::string(name) + "=" + quote_for_log(value) + " is not accepted: ";
    line += why.empty() ? "expected " + std::string(spec(name).grammar) : std::string(why);
    errors_.push_back(std::move(line));
  }

  template <typename T, typename Parse>
  void read(std::string_view name, T& out, Parse parse) {
    const auto value = raw(name);
    if (!value) return;
    if (auto parsed = parse(*value)) {
      out = *parsed;
    } else {
      fail(name, *value);
    }
  }

  std::vector<std::string> take_errors() { return std::move(errors_); }

 private:
  const EnvSnapshot& env_;
  std::vector<std::string> errors_;
};

std::optional<std::string> non_empty(std::string_view v) {
  if (v.empty()) return std::nullopt;
  return std::string(v);
}

// For a variable whose Config field is optional: a parsed value sets the
// field (an optional holding a value); nullopt is the parse error.
template <typename T>
std::optional<std::optional<T>> set_field(std::optional<T> parsed) {
  if (!parsed) return std::nullopt;
  return std::optional<std::optional<T>>(std::move(parsed));
}

std::optional<std::optional<std::uint64_t>> optional_decimal(std::string_view v) {
  return set_field(parse_decimal(v));
}

std::optional<LogLevel> parse_level(std::string_view v) {
  const std::string w = ascii_lower(v);
  if (w == "error") return LogLevel::error;
  if (w == "warn") return LogLevel::warn;
  if (w == "info") return LogLevel::info;
  if (w == "debug") return LogLevel::debug;
  return std::nullopt;
}

// CHAKRA_ET_RECORDER: true for native.
std::optional<bool> parse_et_recorder(std::string_view v) {
  const std::string w = ascii_lower(v);
  if (w == "native") return true;
  if (w == "torch") return false;
  return std::nullopt;
}

std::optional<int> parse_signal(std::string_view v) {
  std::string w = ascii_lower(v);
  if (w == "none") return 0;
  if (w.rfind("sig", 0) == 0) w.erase(0, 3);
  if (w == "usr1") return SIGUSR1;
  if (w == "usr2") return SIGUSR2;
  return std::nullopt;
}

std::optional<std::string> parse_regex(std::string_view v) {
  if (v.empty()) return std::nullopt;
  regex_t re;
  const std::string pattern(v);
  if (regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return std::nullopt;
  regfree(&re);
  return pattern;
}

void warn_unknown(const EnvSnapshot& env, std::vector<std::string>& warnings) {
  for (const auto& [name, value] : env.all()) {
    if (name.rfind("CHAKRA_", 0) != 0) continue;
    const auto known = std::find_if(kConfigVars.begin(), kConfigVars.end(),
                                    // clang before 16 cannot capture a structured binding.
                                    [&name = name](const VarSpec& v) { return v.name == name; });
    if (known != kConfigVars.end()) continue;
    std::string line = "unknown variable " + name + " is ignored";
    std::vector<std::string_view> names;
    for (const auto& v : kConfigVars) names.push_back(v.name);
    if (const auto best = nearest_name(name, names)) line += " (did you mean " + std::string(*best) + "?)";
    warnings.push_back(std::move(line));
  }
}

// The rules between the window variables (docs/on-demand.md): one mode at a
// time, repeated windows that do not touch, two signals that differ.
template <typename HasError>
void check_window_modes(const Config& c, Reader& r, const HasError& has_error) {
  const auto set_ok = [&](std::string_view name) { return r.raw(name) && !has_error(name); };
  if (c.on_demand) {
    for (std::string_view name : {"CHAKRA_START_STEP", "CHAKRA_END_STEP", "CHAKRA_REPEAT_EVERY",
                                  "CHAKRA_REPEAT_UNTIL"}) {
      if (set_ok(name))
        r.fail(name, *r.raw(name),
               "not with CHAKRA_ON_DEMAND=1, where each trigger names its steps; unset it, or "
               "unset CHAKRA_ON_DEMAND for a window fixed at launch");
    }
  }
  if (set_ok("CHAKRA_REPEAT_EVERY")) {
    const std::uint64_t length = c.end_step >= c.start_step ? c.end_step - c.start_step + 1 : 1;
    if (c.repeat_every <= length)
      r.fail("CHAKRA_REPEAT_EVERY", *r.raw("CHAKRA_REPEAT_EVERY"),
             "expected more than the window's " + std::to_string(length) +
                 " steps (CHAKRA_START_STEP=" + std::to_string(c.start_step) +
                 " to CHAKRA_END_STEP=" + std::to_string(c.end_step) +
                 "): windows need a step between them");
  }
  if (set_ok("CHAKRA_REPEAT_UNTIL")) {
    if (!r.raw("CHAKRA_REPEAT_EVERY"))
      r.fail("CHAKRA_REPEAT_UNTIL", *r.raw("CHAKRA_REPEAT_UNTIL"),
             "it bounds repeated windows: set CHAKRA_REPEAT_EVERY too");
    else if (*c.repeat_until < c.end_step)
      r.fail("CHAKRA_REPEAT_UNTIL", *r.raw("CHAKRA_REPEAT_UNTIL"),
             "expected a step at or after CHAKRA_END_STEP=" + std::to_string(c.end_step) +
                 ", the first window's last step");
  }
  if (set_ok("CHAKRA_TRIGGER_SIGNAL") && c.trigger_signal != 0) {
    if (!c.on_demand)
      r.fail("CHAKRA_TRIGGER_SIGNAL", *r.raw("CHAKRA_TRIGGER_SIGNAL"),
             "it triggers on-demand windows: set CHAKRA_ON_DEMAND=1 too");
    else if (c.trigger_signal == c.flush_signal)
      r.fail("CHAKRA_TRIGGER_SIGNAL", *r.raw("CHAKRA_TRIGGER_SIGNAL"),
             "CHAKRA_FLUSH_SIGNAL is the same signal; give them different ones");
  }
  if (set_ok("CHAKRA_TRIGGER_STEPS") && !c.on_demand)
    r.fail("CHAKRA_TRIGGER_STEPS", *r.raw("CHAKRA_TRIGGER_STEPS"),
           "it sizes on-demand windows: set CHAKRA_ON_DEMAND=1 too");
}

}  // namespace

ParseResult parse_config(const EnvSnapshot& env) {
  ParseResult result;
  Reader r(env);
  const auto profile = r.raw("CHAKRA_PROFILE");
  if (!profile) return result;
  const auto on = parse_bool(*profile);
  if (!on) {
    // Neither on nor off: the user meant something, so say it, but stay inert.
    result.enabled = true;
    r.fail("CHAKRA_PROFILE", *profile);
    result.errors = r.take_errors();
    return result;
  }
  if (!*on) return result;
  result.enabled = true;
  warn_unknown(env, result.warnings);

  Config c;
  r.read("CHAKRA_START_STEP", c.start_step, parse_decimal);
  c.end_step = c.start_step;
  r.read("CHAKRA_END_STEP", c.end_step, parse_decimal);
  r.read("CHAKRA_WARMUP_STEPS", c.warmup_steps, parse_decimal);
  r.read("CHAKRA_ACTIVE_STEPS", c.active_steps, parse_decimal);
  r.read("CHAKRA_REPEAT_EVERY", c.repeat_every, parse_decimal);
  r.read("CHAKRA_REPEAT_UNTIL", c.repeat_until, optional_decimal);
  r.read("CHAKRA_ON_DEMAND", c.on_demand, parse_bool);
  r.read("CHAKRA_TRIGGER_SIGNAL", c.trigger_signal, parse_signal);
  r.read("CHAKRA_TRIGGER_STEPS", c.trigger_steps, [](std::string_view v) {
    auto n = parse_decimal(v);
    return n && *n >= 1 && *n <= 100000 ? n : std::nullopt;
  });
  r.read("CHAKRA_TRACE_DIR", c.trace_dir, non_empty);
  r.read("CHAKRA_RANKS", c.ranks, [](std::string_view v) { return set_field(parse_rank_list(v)); });
  if (c.ranks) c.ranks_text = std::string(*r.raw("CHAKRA_RANKS"));
  r.read("CHAKRA_RANK", c.rank_override, optional_decimal);
  r.read("CHAKRA_JOB_ID", c.job_id_override, [](std::string_view v) { return set_field(parse_job_id(v)); });
  r.read("CHAKRA_RUN_ID", c.run_id_override, [](std::string_view v) { return set_field(parse_run_id(v)); });
  r.read("CHAKRA_OVERWRITE", c.overwrite, parse_bool);
  r.read("CHAKRA_HOST_TRACE", c.host_trace, parse_bool);
  r.read("CHAKRA_ET_RECORDER", c.et_native, parse_et_recorder);
  r.read("CHAKRA_DEVICE_TRACE", c.device_trace, parse_bool);
  r.read("CHAKRA_MODULE_SCOPES", c.module_scopes, parse_bool);
  r.read("CHAKRA_STEP_MARKER", c.step_marker, non_empty);
  r.read("CHAKRA_LOG_LEVEL", c.log_level, parse_level);
  r.read("CHAKRA_PROCESS_FILTER", c.process_filter, [](std::string_view v) { return set_field(parse_regex(v)); });
  r.read("CHAKRA_GZIP", c.gzip, parse_bool);
  r.read("CHAKRA_MAX_MEMORY", c.max_memory, parse_byte_size);
  r.read("CHAKRA_EXIT_TIMEOUT", c.exit_timeout_s, [](std::string_view v) {
    auto n = parse_decimal(v);
    return n && *n <= 3600 ? n : std::nullopt;
  });
  r.read("CHAKRA_FLUSH_SIGNAL", c.flush_signal, parse_signal);
  r.read("CHAKRA_CUPTI_LIB", c.cupti_lib, [](std::string_view v) { return set_field(non_empty(v)); });
  r.read("CHAKRA_CUPTI_BUFFERS", c.cupti_buffers, [](std::string_view v) {
    auto n = parse_byte_size(v);
    return n && *n >= (128u << 10) ? n : std::nullopt;
  });
  std::pair<bool, bool> extra{false, false};
  r.read("CHAKRA_CUPTI_EXTRA", extra, parse_cupti_extra);
  c.cupti_sync = extra.first;
  c.cupti_overhead = extra.second;
  if (const auto home = env.get("CUDA_HOME"); home && !home->empty()) c.cuda_home = std::string(*home);
  else if (const auto path = env.get("CUDA_PATH"); path && !path->empty()) c.cuda_home = std::string(*path);
  c.et_integral_tensors = env.get("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE").has_value() ||
                          env.get("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_DATA").has_value();

  // Rules across variables, checked only on values that parsed.
  auto errors = r.take_errors();
  const auto has_error = [&](std::string_view name) {
    return std::any_of(errors.begin(), errors.end(), [&](const std::string& e) {
      return e.compare(0, name.size() + 1, std::string(name) + "=") == 0;
    });
  };
  if (!r.raw("CHAKRA_TRACE_DIR")) {
    errors.push_back(
        "CHAKRA_TRACE_DIR is not set: it is required when CHAKRA_PROFILE is on; "
        "give the directory the traces go to");
  }
  if (c.active_steps == 0 && !has_error("CHAKRA_ACTIVE_STEPS")) {
    r.fail("CHAKRA_ACTIVE_STEPS", *r.raw("CHAKRA_ACTIVE_STEPS"), "expected at least 1");
  }
  if (c.end_step < c.start_step && !has_error("CHAKRA_END_STEP") &&
      !has_error("CHAKRA_START_STEP")) {
    r.fail("CHAKRA_END_STEP", *r.raw("CHAKRA_END_STEP"),
           "expected a step at or after CHAKRA_START_STEP=" + std::to_string(c.start_step));
  }
  check_window_modes(c, r, has_error);
  // A fixed window whose every step is warm-up keeps nothing: refused here,
  // naming the variables, rather than found out at the window's end. (On
  // demand, the warm-up steps come before each triggered window instead.)
  if (!c.on_demand && c.end_step >= c.start_step && c.warmup_steps > 0 &&
      c.warmup_steps >= c.end_step - c.start_step + 1 && !has_error("CHAKRA_WARMUP_STEPS") &&
      !has_error("CHAKRA_START_STEP") && !has_error("CHAKRA_END_STEP")) {
    const std::uint64_t length = c.end_step - c.start_step + 1;
    r.fail("CHAKRA_WARMUP_STEPS", *r.raw("CHAKRA_WARMUP_STEPS"),
           "expected fewer than the window's " + std::to_string(length) +
               " steps (CHAKRA_START_STEP=" + std::to_string(c.start_step) +
               " to CHAKRA_END_STEP=" + std::to_string(c.end_step) +
               "): a window of warm-up steps only keeps nothing; raise CHAKRA_END_STEP or "
               "lower CHAKRA_WARMUP_STEPS");
  }
  // Step 0 runs the job's setup (first calls compile and allocate, the data
  // loader starts): it can take 50 times a normal step and makes the
  // window's means mislead. Allowed, but said at launch.
  if (c.start_step == 0 && r.raw("CHAKRA_START_STEP") && !has_error("CHAKRA_START_STEP")) {
    result.warnings.push_back(
        "CHAKRA_START_STEP=0 captures step 0, which holds the job's setup (first-call compilation, "
        "allocations, data loader start) and is often many times longer than a normal step; "
        "start at 1 or later to capture steady steps (`chakrashim report` marks step 0)");
  }
  for (auto& e : r.take_errors()) errors.push_back(std::move(e));
  result.errors = std::move(errors);
  if (result.errors.empty()) result.config = std::move(c);
  return result;
}

}  // namespace chakrashim::config
