#include "bridge/window_scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "bridge/bridge_log.h"
#include "bridge/signal_relay.h"
#include "config/value_grammar.h"

namespace chakrashim::bridge {

void WindowScheduler::configure(const chakrashim_capture_config* config) {
  config_ = config;
  window::PlanConfig plan;
  plan.first = window::Schedule{config->start_step, config->end_step, config->warmup_steps,
                                config->active_steps};
  if (config->on_demand) {
    plan.mode = window::PlanMode::on_demand;
    plan.warmup = config->warmup_steps;
  } else if (config->repeat_every > 0) {
    plan.mode = window::PlanMode::repeating;
    plan.every = config->repeat_every;
    if (config->has_repeat_until) plan.until = config->repeat_until;
  }
  plan_.emplace(plan);
  const auto first = plan_->first();
  window_.emplace(first.value_or(window::WindowPlan::never()));
  planned_ = first.has_value();
  done_ = !first && !on_demand();
}

bool WindowScheduler::window_begins_after(std::uint64_t current) const {
  return planned_ && !done_ && current + 1 == window_->schedule().start;
}

std::string WindowScheduler::window_trace_dir() const {
  std::string dir = config_->trace_dir;
  if (!many_windows()) return dir;
  // Many windows: each a capture folder of its own, named by its first step.
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/" + window::window_folder_name(window_->schedule().start);
}

void WindowScheduler::before_step_end(bool armed) {
  if (!on_demand()) return;
  // The first completed step: a process that never steps never looks.
  if (!triggers_.started()) start_trigger_watch();
  triggers_.note_step(window_->current() + 1);
  if (triggers_.has_triggers() || TriggerSignal::pending()) take_requests(armed);
}

void WindowScheduler::start_trigger_watch() {
  TriggerWatch::Params p;
  p.trace_dir = config_->trace_dir;
  p.job_id = config_->job_id;
  // The lowest rank that captures publishes the step.
  std::uint64_t publisher = 0;
  if (config_->ranks_filter) {
    if (const auto set = config::parse_rank_list(config_->ranks_filter)) {
      publisher = UINT64_MAX;
      for (const auto& [lo, hi] : set->ranges()) publisher = std::min(publisher, lo);
    }
  }
  p.publisher = config_->rank == publisher;
  auto& n = p.note;
  n.job_id = config_->job_id;
  n.rank = config_->rank;
  n.pid = static_cast<std::int64_t>(::getpid());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) n.host = host;
  n.restart = config_->restart_count;
  n.world_size = config_->world_size;
  if (config_->ranks_filter) n.ranks = config_->ranks_filter;
  n.warmup = config_->warmup_steps;
  n.gzip = config_->gzip != 0;
  triggers_.start(std::move(p));
}

void WindowScheduler::take_requests(bool armed) {
  for (const auto& [name, t] : triggers_.take()) {
    if (t.restart != config_->restart_count) {
      log_info("the trigger " + name + " is for restart " + std::to_string(t.restart) +
               " of the job, and this is restart " + std::to_string(config_->restart_count) +
               ": ignored");
      continue;
    }
    request_window(t.first_step, t.steps, "the trigger " + name, armed);
  }
  if (TriggerSignal::take()) {
    request_window(window_->current() + 1, config_->trigger_steps,
                   signal_name(config_->trigger_signal) + " (CHAKRA_TRIGGER_SIGNAL)", armed);
  }
  if (!planned_) plan_next();
}

void WindowScheduler::request_window(std::uint64_t first_step, std::uint64_t steps,
                                     const std::string& origin, bool armed) {
  const std::uint64_t current = window_->current();
  const auto out = plan_->request(first_step, steps, current,
                                  planned_ ? std::optional(window_->schedule()) : std::nullopt);
  const std::string asked = origin + " asks for steps " + window::steps_text(out.window);
  switch (out.verdict) {
    case window::Verdict::queued:
      log_info(asked + ": they go to " + std::string(config_->trace_dir) + "/" +
               window::window_folder_name(out.window.start) + "/");
      break;
    case window::Verdict::past: {
      const std::string why = asked + ", but this rank is at step " + std::to_string(current) +
                              " already: it captures nothing for it (trigger further ahead, e.g. a "
                              "larger --in)";
      log_warn(why);
      triggers_.note_missed(window::Missed{out.window.start, config_->rank, why});
      break;
    }
    case window::Verdict::overlaps: {
      const bool open = armed && out.conflict && planned_ &&
                        out.conflict->start == window_->schedule().start;
      const std::string why = asked + ": refused, it overlaps the window of steps " +
                              window::steps_text(*out.conflict) + (open ? ", open now" : ", planned") +
                              "; trigger again for steps after " + std::to_string(out.conflict->end);
      log_warn(why);
      triggers_.note_missed(window::Missed{out.window.start, config_->rank, why});
      break;
    }
  }
}

void WindowScheduler::plan_next() {
  std::vector<window::Schedule> missed;
  const auto next = plan_->next(window_->current(), &missed);
  for (const auto& m : missed) {
    const std::string why = "the window of steps " + window::steps_text(m) +
                            " could not begin: this rank was at step " +
                            std::to_string(window_->current()) + " when the window before it ended";
    log_warn(why);
    triggers_.note_missed(window::Missed{m.start, config_->rank, why});
  }
  if (next) {
    window_->replan(*next);
    planned_ = true;
    done_ = false;
    log_debug("next window: steps " + window::steps_text(*next));
    return;
  }
  planned_ = false;
  if (on_demand()) {
    window_->replan(window::WindowPlan::never());
    done_ = false;
  } else {
    done_ = true;
  }
}

}  // namespace chakrashim::bridge
