// Unit tests for the step window state machine (window/step_window.h)
// against docs/design.md section 3 ("Counting steps", "The window").
#include "window/step_window.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace chakrashim::window {

// Printers so that failures read well.
void PrintTo(Phase p, std::ostream* os) { *os << phase_name(p); }

namespace {

using Steps = std::vector<std::uint64_t>;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::string describe(const Schedule& s) {
  return "S=" + std::to_string(s.start) + " E=" + std::to_string(s.end) +
         " W=" + std::to_string(s.warmup) + " A=" + std::to_string(s.active);
}

void expect_same(const Boundary& a, const Boundary& b) {
  EXPECT_EQ(a.ended, b.ended);
  EXPECT_EQ(a.ended_phase, b.ended_phase);
  EXPECT_EQ(a.current, b.current);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.arm, b.arm);
  EXPECT_EQ(a.end_active, b.end_active);
  EXPECT_EQ(a.begin_active, b.begin_active);
  EXPECT_EQ(a.disarm, b.disarm);
}

bool any_flag(const Boundary& b) { return b.arm || b.end_active || b.begin_active || b.disarm; }

// ---- the documented example -----------------------------------------------------

// docs/design.md's example window: steps 2-9, warmup 1, active 2.
constexpr Schedule kDesignExample{.start = 2, .end = 9, .warmup = 1, .active = 2};

// The example's window, attached, once `ended` steps have ended (step
// `ended` in progress).
StepWindow design_example_after(int ended) {
  StepWindow w(kDesignExample);
  w.attach();
  for (int i = 0; i < ended; ++i) w.step_ended();
  return w;
}

TEST(StepWindow, KeepsStepsThreeFourSixSevenAndNineInTheDesignExample) {
  EXPECT_EQ(design_example_after(15).captured(), (Steps{3, 4, 6, 7, 9}));
}

TEST(StepWindow, RaisesEveryFlagAtTheRightBoundaryInTheDesignExample) {
  StepWindow w(kDesignExample);
  // boundaries[n] is the boundary where step n begins.
  std::vector<Boundary> boundaries{w.attach()};
  for (int i = 0; i < 13; ++i) boundaries.push_back(w.step_ended());

  const Phase B = Phase::before, W = Phase::warmup, A = Phase::active, X = Phase::after;
  const Phase phases[] = {B, B, W, A, A, W, A, A, W, A, X, X, X, X};
  for (std::uint64_t n = 0; n < boundaries.size(); ++n) {
    SCOPED_TRACE("entering step " + std::to_string(n));
    const Boundary& b = boundaries[n];
    EXPECT_EQ(b.current, n);
    EXPECT_EQ(b.phase, phases[n]);
    if (n == 0) {
      EXPECT_FALSE(b.ended);
    } else {
      EXPECT_EQ(b.ended, std::optional<std::uint64_t>(n - 1));
      EXPECT_EQ(b.ended_phase, phases[n - 1]);
    }
    EXPECT_EQ(b.arm, n == 2);
    EXPECT_EQ(b.begin_active, n == 3 || n == 6 || n == 9);
    EXPECT_EQ(b.end_active, n == 5 || n == 8 || n == 10);
    EXPECT_EQ(b.disarm, n == 10);
  }
}

TEST(StepWindow, ArmsAndBeginsActiveAtOnceWhenStartIsAnActiveStep) {
  StepWindow w({.start = 3, .end = 4, .warmup = 0, .active = 1});
  w.attach();
  w.step_ended();
  w.step_ended();
  const Boundary b = w.step_ended();  // entering 3
  EXPECT_EQ(b.current, 3u);
  EXPECT_TRUE(b.arm);
  EXPECT_TRUE(b.begin_active);
  EXPECT_FALSE(b.end_active);
  EXPECT_FALSE(b.disarm);
  const Boundary b4 = w.step_ended();  // entering 4: still active, no new run
  EXPECT_FALSE(any_flag(b4));
  const Boundary b5 = w.step_ended();  // entering 5
  EXPECT_TRUE(b5.end_active);
  EXPECT_TRUE(b5.disarm);
  EXPECT_FALSE(w.armed());
  EXPECT_EQ(w.captured(), (Steps{3, 4}));
}

// ---- START = 0 -----------------------------------------------------------------------

TEST(StepWindow, ArmsAtAttachWhenStartIsZero) {
  StepWindow w({.start = 0, .end = 2, .warmup = 0, .active = 1});
  EXPECT_FALSE(w.armed());
  const Boundary b = w.attach();
  EXPECT_FALSE(b.ended);
  EXPECT_EQ(b.current, 0u);
  EXPECT_EQ(b.phase, Phase::active);
  EXPECT_TRUE(b.arm);
  EXPECT_TRUE(b.begin_active);
  EXPECT_FALSE(b.end_active);
  EXPECT_FALSE(b.disarm);
  EXPECT_TRUE(w.armed());
}

TEST(StepWindow, ArmsAtAttachIntoWarmupWhenStartIsZeroWithWarmup) {
  StepWindow w({.start = 0, .end = 2, .warmup = 1, .active = 1});
  const Boundary b = w.attach();
  EXPECT_TRUE(b.arm);
  EXPECT_EQ(b.phase, Phase::warmup);
  EXPECT_FALSE(b.begin_active);
  EXPECT_TRUE(w.step_ended().begin_active);  // entering 1
}

TEST(StepWindow, DoesNotArmAtAttachWhenStartIsLater) {
  StepWindow w({.start = 1, .end = 1, .warmup = 0, .active = 1});
  const Boundary b = w.attach();
  EXPECT_FALSE(any_flag(b));
  EXPECT_EQ(b.phase, Phase::before);
  EXPECT_FALSE(w.armed());
}

// ---- the property test against a brute-force reference ---------------------------------

// The kept steps, found by walking the window one step at a time with a
// counter inside each cycle (no modular arithmetic, unlike the code).
Steps reference_kept(const Schedule& s) {
  Steps kept;
  std::uint64_t in_cycle = 0;
  for (std::uint64_t k = s.start; k <= s.end; ++k) {
    if (in_cycle >= s.warmup) kept.push_back(k);
    if (++in_cycle == s.warmup + s.active) in_cycle = 0;
  }
  return kept;
}

struct Reference {
  Schedule s;
  Steps kept;
  bool is_kept(std::uint64_t k) const {
    for (auto x : kept)
      if (x == k) return true;
    return false;
  }
  Phase phase(std::uint64_t k) const {
    if (k < s.start) return Phase::before;
    if (k > s.end) return Phase::after;
    return is_kept(k) ? Phase::active : Phase::warmup;
  }
  Steps kept_before(std::uint64_t n) const {  // kept steps k < n
    Steps out;
    for (auto x : kept)
      if (x < n) out.push_back(x);
    return out;
  }
  std::size_t runs() const {  // maximal runs of consecutive kept steps
    std::size_t r = 0;
    for (std::size_t i = 0; i < kept.size(); ++i)
      if (i == 0 || kept[i] != kept[i - 1] + 1) ++r;
    return r;
  }
};

void check_schedule(const Schedule& s) {
  SCOPED_TRACE(describe(s));
  const Reference ref{s, reference_kept(s)};
  StepWindow w(s);

  std::vector<Boundary> boundaries{w.attach()};
  EXPECT_EQ(w.armed(), s.start == 0);
  for (std::uint64_t k = 0; k <= s.end + 5; ++k) {
    boundaries.push_back(w.step_ended());
    const std::uint64_t n = k + 1;
    EXPECT_EQ(w.current(), n);
    EXPECT_EQ(w.armed(), n >= s.start && n <= s.end) << "entering " << n;
    EXPECT_EQ(w.captured(), ref.kept_before(n)) << "entering " << n;
  }
  EXPECT_EQ(w.captured(), ref.kept);

  int arms = 0, disarms = 0, begins = 0, ends = 0;
  bool in_run = false, disarmed = false;
  for (std::uint64_t n = 0; n < boundaries.size(); ++n) {
    SCOPED_TRACE("entering step " + std::to_string(n));
    const Boundary& b = boundaries[n];
    EXPECT_EQ(b.current, n);
    EXPECT_EQ(b.phase, ref.phase(n));
    if (n == 0) {
      EXPECT_FALSE(b.ended);
    } else {
      EXPECT_EQ(b.ended, std::optional<std::uint64_t>(n - 1));
      EXPECT_EQ(b.ended_phase, ref.phase(n - 1));
    }
    // Exact flags.
    const bool prev_kept = n > 0 && ref.is_kept(n - 1);
    EXPECT_EQ(b.arm, n == s.start);
    EXPECT_EQ(b.disarm, n == s.end + 1);
    EXPECT_EQ(b.begin_active, ref.is_kept(n) && !prev_kept);
    EXPECT_EQ(b.end_active, prev_kept && !ref.is_kept(n));
    // Aggregate properties.
    if (disarmed) {
      EXPECT_FALSE(any_flag(b)) << "a flag after disarm";
    }
    EXPECT_FALSE(b.begin_active && b.end_active);
    if (b.end_active) {
      EXPECT_TRUE(in_run) << "end_active without begin_active";
      in_run = false;
      ++ends;
    }
    if (b.begin_active) {
      EXPECT_FALSE(in_run) << "begin_active twice in a row";
      EXPECT_TRUE(arms == 1 || b.arm) << "begin_active before arm";
      in_run = true;
      ++begins;
    }
    if (b.arm) ++arms;
    if (b.disarm) {
      EXPECT_FALSE(in_run) << "disarm inside an active run";
      ++disarms;
      disarmed = true;
    }
  }
  EXPECT_EQ(arms, 1);
  EXPECT_EQ(disarms, 1);
  EXPECT_EQ(begins, static_cast<int>(ref.runs()));
  EXPECT_EQ(ends, begins);
  EXPECT_FALSE(in_run);

  const Cut after = w.cut();
  EXPECT_FALSE(after.cut_short);
  EXPECT_EQ(after.captured, ref.kept);
  EXPECT_EQ(after.phase, Phase::after);
}

TEST(StepWindow, MatchesABruteForceReferenceOverManySchedules) {
  int schedules = 0;
  for (std::uint64_t S = 0; S <= 6; ++S)
    for (std::uint64_t E = S; E <= S + 12; ++E)
      for (std::uint64_t W = 0; W <= 3; ++W)
        for (std::uint64_t A = 1; A <= 4; ++A) {
          check_schedule({S, E, W, A});
          ++schedules;
          if (HasFailure()) return;  // one schedule's failures are enough to read
        }
  EXPECT_EQ(schedules, 7 * 13 * 4 * 4);
}

TEST(StepWindow, ReferenceAgreesWithTheDesignExample) {
  // Guards the reference itself.
  EXPECT_EQ(reference_kept({2, 9, 1, 2}), (Steps{3, 4, 6, 7, 9}));
  EXPECT_EQ(reference_kept({0, 0, 0, 1}), (Steps{0}));
  EXPECT_EQ(reference_kept({1, 4, 3, 1}), (Steps{4}));
  EXPECT_EQ(reference_kept({1, 3, 3, 1}), (Steps{}));
}

TEST(StepWindow, KeepsNothingWhenTheWindowEndsInsideTheFirstWarmup) {
  StepWindow w({.start = 1, .end = 2, .warmup = 3, .active = 1});
  int begins = 0, disarms = 0;
  w.attach();
  for (int i = 0; i < 6; ++i) {
    const Boundary b = w.step_ended();
    begins += b.begin_active;
    disarms += b.disarm;
    EXPECT_FALSE(b.end_active);
  }
  EXPECT_EQ(begins, 0);
  EXPECT_EQ(disarms, 1);
  EXPECT_TRUE(w.captured().empty());
}

// ---- step_ended() before attach() --------------------------------------------------------

TEST(StepWindow, StepEndedWithoutAttachBehavesAsAttachFirst) {
  for (const Schedule s : {Schedule{2, 9, 1, 2}, Schedule{0, 3, 0, 1}, Schedule{1, 1, 0, 1}}) {
    SCOPED_TRACE(describe(s));
    StepWindow implicit(s), explicit_(s);
    explicit_.attach();
    for (int i = 0; i < 14; ++i) {
      SCOPED_TRACE("call " + std::to_string(i));
      const Boundary a = implicit.step_ended();
      const Boundary b = explicit_.step_ended();
      expect_same(a, b);
      EXPECT_EQ(implicit.current(), explicit_.current());
      EXPECT_EQ(implicit.armed(), explicit_.armed());
      EXPECT_EQ(implicit.captured(), explicit_.captured());
    }
  }
}

TEST(StepWindow, FirstStepEndedWithoutAttachEndsStepZero) {
  StepWindow w(kDesignExample);
  const Boundary b = w.step_ended();
  EXPECT_EQ(b.ended, std::optional<std::uint64_t>(0));
  EXPECT_EQ(b.current, 1u);
  EXPECT_EQ(w.current(), 1u);
}

// ---- cut() ----------------------------------------------------------------------------

TEST(StepWindow, CutMidWindowIsShortAndReportsWhatWasCaptured) {
  StepWindow w = design_example_after(5);  // steps 0..4 ended; 5 in progress
  const Cut c = w.cut();
  EXPECT_TRUE(c.cut_short);
  EXPECT_EQ(c.captured, (Steps{3, 4}));
  EXPECT_EQ(c.current, 5u);
  EXPECT_EQ(c.phase, Phase::warmup);

  w.step_ended();  // step 6 in progress, an active step
  const Cut c6 = w.cut();
  EXPECT_TRUE(c6.cut_short);
  EXPECT_EQ(c6.captured, (Steps{3, 4}));
  EXPECT_EQ(c6.current, 6u);
  EXPECT_EQ(c6.phase, Phase::active);
}

TEST(StepWindow, CutOnTheLastStepIsStillShort) {
  const Cut c = design_example_after(9).cut();  // step 9 in progress
  EXPECT_TRUE(c.cut_short);
  EXPECT_EQ(c.current, 9u);
  EXPECT_EQ(c.phase, Phase::active);
  EXPECT_EQ(c.captured, (Steps{3, 4, 6, 7}));
}

TEST(StepWindow, CutAfterTheWindowIsNotShort) {
  const Cut c = design_example_after(10).cut();  // step 10 in progress
  EXPECT_FALSE(c.cut_short);
  EXPECT_EQ(c.captured, (Steps{3, 4, 6, 7, 9}));
  EXPECT_EQ(c.current, 10u);
  EXPECT_EQ(c.phase, Phase::after);
}

TEST(StepWindow, CutBeforeTheWindowHasCapturedNothing) {
  const Cut c = design_example_after(1).cut();
  EXPECT_TRUE(c.cut_short) << "the window never reached END";
  EXPECT_TRUE(c.captured.empty());
  EXPECT_EQ(c.current, 1u);
  EXPECT_EQ(c.phase, Phase::before);
}

// ---- phase_of and large values --------------------------------------------------------------

TEST(StepWindowPhaseOf, FollowsTheScheduleAroundStartNearTwoToTheSixtyThree) {
  const std::uint64_t S = 1ULL << 63;
  const Schedule s{S, S + 10, 1, 2};
  EXPECT_EQ(StepWindow::phase_of(s, 0), Phase::before);
  EXPECT_EQ(StepWindow::phase_of(s, S - 1), Phase::before);
  EXPECT_EQ(StepWindow::phase_of(s, S), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(s, S + 1), Phase::active);
  EXPECT_EQ(StepWindow::phase_of(s, S + 2), Phase::active);
  EXPECT_EQ(StepWindow::phase_of(s, S + 3), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(s, S + 9), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(s, S + 10), Phase::active);
  EXPECT_EQ(StepWindow::phase_of(s, S + 11), Phase::after);
  EXPECT_EQ(StepWindow::phase_of(s, kMax), Phase::after);
}

TEST(StepWindowPhaseOf, HandlesAWindowThatReachesTheLargestStep) {
  const Schedule s{kMax - 3, kMax, 0, 1};
  EXPECT_EQ(StepWindow::phase_of(s, kMax - 4), Phase::before);
  EXPECT_EQ(StepWindow::phase_of(s, kMax - 3), Phase::active);
  EXPECT_EQ(StepWindow::phase_of(s, kMax), Phase::active);
}

TEST(StepWindowPhaseOf, DoesNotDivideByZeroWhenWarmupPlusActiveWraps) {
  // Both values are accepted by config (decimal digits, ACTIVE >= 1); their
  // sum wraps to 0 or to a small number in uint64_t.
  const Schedule wraps_to_zero{0, kMax, 1ULL << 63, 1ULL << 63};
  EXPECT_EQ(StepWindow::phase_of(wraps_to_zero, 0), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(wraps_to_zero, (1ULL << 63) - 1), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(wraps_to_zero, 1ULL << 63), Phase::active);
  EXPECT_EQ(StepWindow::phase_of(wraps_to_zero, kMax), Phase::active);

  const Schedule wraps_to_one{5, kMax, kMax, 2};
  EXPECT_EQ(StepWindow::phase_of(wraps_to_one, 5), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(wraps_to_one, 6), Phase::warmup);  // not 6 % 1 == 0
  EXPECT_EQ(StepWindow::phase_of(wraps_to_one, kMax), Phase::warmup);
}

TEST(StepWindowPhaseOf, StillCyclesWhenOnlyWarmupIsLarge) {
  const std::uint64_t W = (1ULL << 62);
  const Schedule s{0, kMax, W, W};  // cycle 2^63, no wrap
  EXPECT_EQ(StepWindow::phase_of(s, W - 1), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(s, W), Phase::active);
  EXPECT_EQ(StepWindow::phase_of(s, 2 * W), Phase::warmup);
  EXPECT_EQ(StepWindow::phase_of(s, 3 * W), Phase::active);
}

TEST(PhaseName, NamesEveryPhase) {
  EXPECT_STREQ(phase_name(Phase::before), "before");
  EXPECT_STREQ(phase_name(Phase::warmup), "warmup");
  EXPECT_STREQ(phase_name(Phase::active), "active");
  EXPECT_STREQ(phase_name(Phase::after), "after");
}

// Issue #54: a DeepSpeed job's inner optimizer steps were counted (one per
// parameter group) before its engine's step was known: recounted to the
// engine's global_steps, only well before the window.
TEST(StepWindow, RecountMovesTheStepInProgressBackWellBeforeTheWindow) {
  StepWindow w(Schedule{.start = 10, .end = 12, .warmup = 0, .active = 1});
  w.attach();
  for (int i = 0; i < 4; ++i) w.step_ended();  // 4 inner steps: 2 iterations of 2 groups
  ASSERT_EQ(w.current(), 4u);
  EXPECT_EQ(w.recount(2), StepWindow::Recount::moved);
  EXPECT_EQ(w.current(), 2u);
  Steps armed_at;
  for (int i = 0; i < 12; ++i)
    if (w.step_ended().arm) armed_at.push_back(w.current());
  EXPECT_EQ(armed_at, Steps{10});
  EXPECT_EQ(w.captured(), (Steps{10, 11, 12}));
}

TEST(StepWindow, RecountChangesNothingNearOrInTheWindowOrForward) {
  StepWindow w(Schedule{.start = 5, .end = 6, .warmup = 0, .active = 1});
  w.attach();
  w.step_ended();
  w.step_ended();  // in step 2: the window's first step is 3 away
  EXPECT_EQ(w.recount(2), StepWindow::Recount::not_needed) << "not below the step in progress";
  EXPECT_EQ(w.recount(3), StepWindow::Recount::not_needed) << "forward";
  EXPECT_EQ(w.recount(1), StepWindow::Recount::moved);
  w.step_ended();
  w.step_ended();  // in step 3: the window's first step is 2 away
  // Refused, which the capture says (the count stays higher than the
  // engine's): not the silence of a count that needed nothing.
  EXPECT_EQ(w.recount(1), StepWindow::Recount::refused);
  EXPECT_EQ(w.recount(3), StepWindow::Recount::not_needed);
  EXPECT_EQ(w.current(), 3u);
  w.step_ended();
  w.step_ended();  // armed, in step 5
  ASSERT_TRUE(w.armed());
  EXPECT_EQ(w.recount(0), StepWindow::Recount::refused);
  EXPECT_EQ(w.current(), 5u);
}

}  // namespace
}  // namespace chakrashim::window
