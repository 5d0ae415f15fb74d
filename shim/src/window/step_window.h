// The step window and its schedule (docs/design.md section 3), as a pure state
// machine. A step boundary goes in; what to do at that boundary comes out.
//
// Steps are numbered from 0. Step S runs from the end of optimizer step S-1
// (or from attach, for S = 0) to the end of optimizer step S. Collection is
// armed from the start of step START to the end of step END. Inside, cycles
// of WARMUP steps (collectors running, records dropped) and ACTIVE steps
// (kept) repeat until END:
//   START=2 END=9 WARMUP=1 ACTIVE=2 -> 2 warmup, 3 4 active, 5 warmup,
//   6 7 active, 8 warmup, 9 active: steps 3 4 6 7 9 are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace chakrashim::window {

struct Schedule {
  std::uint64_t start = 2;
  std::uint64_t end = 2;  // inclusive, >= start
  std::uint64_t warmup = 0;
  std::uint64_t active = 1;  // >= 1
};

enum class Phase { before, warmup, active, after };
const char* phase_name(Phase phase);

// What one boundary means. Several flags can hold at once: entering START as
// an active step both arms and begins active.
struct Boundary {
  std::optional<std::uint64_t> ended;  // the step that just ended; none at attach
  Phase ended_phase = Phase::before;
  std::uint64_t current = 0;  // the step that begins now
  Phase phase = Phase::before;
  bool arm = false;           // collection starts now
  bool end_active = false;    // the kept run of steps stops: ET disable
  bool begin_active = false;  // a kept run of steps starts: ET enable
  bool disarm = false;        // the window is over: stop and write the files
};

// Where the window stands when the process ends or a signal cuts it.
struct Cut {
  std::vector<std::uint64_t> captured;  // completed active steps
  std::uint64_t current = 0;           // the step in progress
  Phase phase = Phase::before;         // its phase
  bool cut_short = false;              // the window had not reached END
};

class StepWindow {
 public:
  explicit StepWindow(Schedule schedule) : schedule_(schedule) {}

  static Phase phase_of(const Schedule& schedule, std::uint64_t step);

  // Step 0 begins (the bridge attached).
  Boundary attach();
  // The current step ended; the next one begins. Calls before attach() act
  // as if attach() came first.
  Boundary step_ended();
  // The process ends or a signal cuts the window, in the middle of a step.
  Cut cut() const;
  // The next window (window_plan.h), once the last one ended or was cut, or
  // while none was planned. Steps go on counting; `next.start` must lie
  // after the step in progress (it arms at a later boundary).
  void replan(Schedule next);

  // The steps counted so far were too many (a DeepSpeed job's inner
  // optimizer steps, counted one per parameter group before the engine's
  // step was known, issue #54): the step in progress becomes `step`
  // (moved). Nothing changes when `step` is not below the step in progress
  // (not_needed), nor, refused, once a window was armed or captured or when
  // the window's first step is less than three steps away (its folders may
  // be prepared at the step before): the caller then flags the count.
  enum class Recount { moved, not_needed, refused };
  Recount recount(std::uint64_t step);

  std::uint64_t current() const { return current_; }
  Phase phase() const { return phase_of(schedule_, current_); }
  bool armed() const { return armed_; }
  const std::vector<std::uint64_t>& captured() const { return captured_; }
  const Schedule& schedule() const { return schedule_; }

 private:
  Boundary enter(std::optional<std::uint64_t> ended, std::uint64_t next);

  Schedule schedule_;
  bool attached_ = false;
  bool armed_ = false;
  bool done_ = false;
  std::uint64_t current_ = 0;
  std::vector<std::uint64_t> captured_;
};

}  // namespace chakrashim::window
