#include "window/step_window.h"

namespace chakrashim::window {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::before: return "before";
    case Phase::warmup: return "warmup";
    case Phase::active: return "active";
    case Phase::after: return "after";
  }
  return "?";
}

Phase StepWindow::phase_of(const Schedule& s, std::uint64_t step) {
  if (step < s.start) return Phase::before;
  if (step > s.end) return Phase::after;
  const std::uint64_t offset = step - s.start;
  const std::uint64_t cycle = s.warmup + s.active;
  // If warmup + active wraps, one cycle is longer than any offset.
  const std::uint64_t in_cycle = cycle < s.warmup ? offset : offset % cycle;
  return in_cycle < s.warmup ? Phase::warmup : Phase::active;
}

Boundary StepWindow::attach() {
  attached_ = true;
  return enter(std::nullopt, 0);
}

Boundary StepWindow::step_ended() {
  if (!attached_) attach();
  const std::uint64_t ended = current_;
  if (phase_of(schedule_, ended) == Phase::active && armed_) captured_.push_back(ended);
  return enter(ended, ended + 1);
}

StepWindow::Recount StepWindow::recount(std::uint64_t step) {
  if (step >= current_) return Recount::not_needed;
  if (armed_ || done_ || !captured_.empty() || current_ + 3 > schedule_.start) return Recount::refused;
  current_ = step;
  return Recount::moved;
}

Boundary StepWindow::enter(std::optional<std::uint64_t> ended, std::uint64_t next) {
  Boundary b;
  b.ended = ended;
  b.ended_phase = ended ? phase_of(schedule_, *ended) : Phase::before;
  b.current = next;
  b.phase = phase_of(schedule_, next);
  current_ = next;
  if (done_) {
    b.phase = Phase::after;
    return b;
  }
  const bool was_active = ended && armed_ && b.ended_phase == Phase::active;
  const bool in_window = b.phase == Phase::warmup || b.phase == Phase::active;
  if (in_window && !armed_) {
    armed_ = true;
    b.arm = true;
  }
  if (was_active && b.phase != Phase::active) b.end_active = true;
  if (b.phase == Phase::active && !was_active) b.begin_active = true;
  if (armed_ && b.phase == Phase::after) {
    armed_ = false;
    done_ = true;
    b.disarm = true;
  }
  return b;
}

void StepWindow::replan(Schedule next) {
  schedule_ = next;
  armed_ = false;
  done_ = false;
  captured_.clear();
}

Cut StepWindow::cut() const {
  Cut c;
  c.captured = captured_;
  c.current = current_;
  c.phase = done_ ? Phase::after : phase_of(schedule_, current_);
  c.cut_short = !done_;
  return c;
}

}  // namespace chakrashim::window
