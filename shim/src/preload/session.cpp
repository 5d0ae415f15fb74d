#include "preload/session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <new>

#include "preload/log.h"
#include "config/value_grammar.h"
#include "chakrashim/immortal.h"
#include "target/target_decision.h"

namespace chakrashim::preload {

namespace {

void core_log(int level, const char* message) {
  if (level < 0 || level > 3 || !message) return;
  log::line(static_cast<config::LogLevel>(level), message);
}

}  // namespace

Session& Session::instance() { return immortal<Session>(); }

void Session::start(const chakrashim_stub_view& view) {
  if (state() != State::not_started) return;
  const config::EnvSnapshot env = config::EnvSnapshot::from_entries(view.vars, view.var_count);
  own_dir_ = view.own_dir ? view.own_dir : "";
  real_dlopen_ = view.real_dlopen;
  config::ParseResult parsed = config::parse_config(env);
  if (!parsed.enabled) {
    state_.store(State::inert, std::memory_order_release);
    return;
  }
  const config::Config& effective = parsed.config ? *parsed.config : config::Config{};
  if (parsed.config) log::set_level(parsed.config->log_level);
  identity_ = target::resolve_identity(env, effective);
  log::set_rank(identity_.rank);
  // At 512 ranks, 512 capture lines say one thing: at the default level only
  // the lowest capturing rank speaks at info (target::speaking_rank); the
  // others print warnings and errors (a rank that fails to write still says
  // so). CHAKRA_LOG_LEVEL, when set, is taken as asked on every rank.
  if (identity_.rank != target::speaking_rank(effective) && !env.get("CHAKRA_LOG_LEVEL") &&
      effective.log_level == config::LogLevel::info)
    log::set_level(config::LogLevel::warn);

  process_ = current_process();
  const target::TargetDecision decision = target::decide_target(effective, identity_, process_);
  if (!decision.target) {
    log::debug("inert: " + decision.reason);
    state_.store(State::inert, std::memory_order_release);
    return;
  }
  python_ = find_python_api();
  // chakra-run printed the configuration's warnings once, at launch.
  if (!env.get(config::kConfigShownVar)) warnings_ = std::move(parsed.warnings);
  for (auto& note : identity_.notes) warnings_.push_back(std::move(note));
  if (!parsed.errors.empty()) {
    config_errors_ = std::move(parsed.errors);
    state_.store(State::reporting, std::memory_order_release);
    return;
  }
  config_ = std::move(parsed.config);
  const std::string cwd = view.cwd ? view.cwd : "";
  if (config_->trace_dir.front() != '/' && !cwd.empty()) {
    // Resolved against the folder the process started in (the stub read it
    // at load), so that a job that changes folders still writes there.
    config_->trace_dir = cwd + "/" + config_->trace_dir;
  }
  state_.store(State::watching, std::memory_order_release);
}

void Session::on_dlopen() {
  const State s = state();
  if (s != State::watching && s != State::reporting) return;
  if (call_scheduled_.load(std::memory_order_relaxed)) return;
  if (!python_.usable()) {
    // Python may be embedded and loaded after us; look again.
    python_ = find_python_api();
    if (!python_.usable()) return;
  }
  if (!python_.is_initialized()) return;
  if (call_scheduled_.exchange(true)) return;
  if (python_.add_pending_call(&Session::pending_call, this) != 0)
    call_scheduled_.store(false);  // Python's queue is full: try at the next dlopen
}

int Session::pending_call(void* self) {
  // Runs on Python's main thread, between bytecodes, after the dlopen that
  // scheduled it has returned. Always returns 0: -1 would raise in the job.
  auto* session = static_cast<Session*>(self);
  try {
    session->after_libtorch_seen();
  } catch (...) {
    session->state_.store(State::refused);
  }
  return 0;
}

void Session::after_libtorch_seen() {
  if (!libtorch_loaded()) {
    call_scheduled_.store(false);  // not yet: a later dlopen schedules again
    return;
  }
  for (const auto& w : warnings_) log::warn(w);
  warnings_.clear();
  if (state() == State::reporting) {
    for (const auto& e : config_errors_) log::error(e + "; chakrashim stays off in this process");
    config_errors_.clear();
    state_.store(State::inert);
    return;
  }
  attach_bridge();
}

void Session::attach_bridge() {
  const std::string path = own_dir_ + "/" CHAKRASHIM_BRIDGE_LIBRARY;
  // The real dlopen: ours would only pass through (and call us again).
  void* handle = real_dlopen_ ? real_dlopen_(path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!handle) {
    const char* why = ::dlerror();
    log::error("cannot load the torch bridge " + path + ": " + (why ? why : "?") +
               "; capture is off");
    state_.store(State::refused);
    return;
  }
  auto attach = reinterpret_cast<chakrashim_bridge_attach_fn>(
      ::dlsym(handle, CHAKRASHIM_BRIDGE_ATTACH_SYMBOL));
  if (!attach) {
    log::error(path + " has no " CHAKRASHIM_BRIDGE_ATTACH_SYMBOL "; capture is off");
    state_.store(State::refused);
    return;
  }
  fill_capture_config();
  core_api_ = {CHAKRASHIM_ABI_VERSION, sizeof(chakrashim_core_api), CHAKRASHIM_VERSION,
               &capture_config_, &core_log};
  bridge_api_ = {};
  const int status = attach(&core_api_, &bridge_api_);
  if (status != CHAKRASHIM_ATTACH_OK) {
    // The bridge said why in one line. It stays mapped: unloading a library
    // that touched libtorch is not worth the risk.
    state_.store(State::refused);
    return;
  }
  state_.store(State::attached);
}

void Session::fill_capture_config() {
  // Pointers into config_, identity_ and process_, which live as long as the
  // process (the Session is never destroyed and these are never changed again).
  const config::Config& c = *config_;
  chakrashim_capture_config& out = capture_config_;
  out.start_step = c.start_step;
  out.end_step = c.end_step;
  out.warmup_steps = c.warmup_steps;
  out.active_steps = c.active_steps;
  out.trace_dir = c.trace_dir.c_str();
  out.job_id = identity_.job_id.c_str();
  out.rank = identity_.rank;
  out.world_size = identity_.world_size ? static_cast<std::int64_t>(*identity_.world_size) : -1;
  out.restart_count = identity_.restart_count;
  run_id_ = identity_.run_id;
  if (run_id_.empty() && (!identity_.world_size || *identity_.world_size <= 1)) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    run_id_ = "pid:" + std::to_string(::getpid()) + "@" + host;
    if (!config::parse_run_id(run_id_)) run_id_ = "pid:" + std::to_string(::getpid());
  }
  out.run_id = run_id_.c_str();
  out.ranks_filter = c.ranks_text ? c.ranks_text->c_str() : nullptr;
  out.step_marker = c.step_marker.c_str();
  out.exe_name = process_.exe_basename.c_str();
  out.host_trace = c.host_trace;
  out.device_trace = c.device_trace;
  out.gzip = c.gzip;
  out.overwrite = c.overwrite;
  out.max_memory = c.max_memory;
  out.exit_timeout_s = c.exit_timeout_s;
  out.flush_signal = c.flush_signal;
  out.cupti_lib = c.cupti_lib ? c.cupti_lib->c_str() : nullptr;
  out.cupti_buffers = c.cupti_buffers;
  out.cupti_sync = c.cupti_sync;
  out.cupti_overhead = c.cupti_overhead;
  out.log_level = static_cast<int>(c.log_level);
  out.et_native = c.et_native;
  out.repeat_every = c.repeat_every;
  out.repeat_until = c.repeat_until.value_or(0);
  out.has_repeat_until = c.repeat_until.has_value();
  out.on_demand = c.on_demand;
  out.trigger_signal = c.trigger_signal;
  out.trigger_steps = c.trigger_steps;
  out.cuda_home = c.cuda_home ? c.cuda_home->c_str() : nullptr;
  out.et_integral_tensors = c.et_integral_tensors;
  out.module_scopes = c.module_scopes;
}

}  // namespace chakrashim::preload
