// Unit tests for the window plan (window/window_plan.h): which windows a
// process captures, driven through a StepWindow the way the bridge drives it.
#include "window/window_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "window/step_window.h"

namespace chakrashim::window {
namespace {

using Steps = std::vector<std::uint64_t>;
constexpr std::uint64_t kMaxStep = std::numeric_limits<std::uint64_t>::max();

PlanConfig config(PlanMode mode, Schedule first) {
  PlanConfig c;
  c.mode = mode;
  c.first = first;
  return c;
}
PlanConfig on_demand_config() { return config(PlanMode::on_demand, Schedule{}); }
PlanConfig repeating(Schedule first, std::uint64_t every, std::optional<std::uint64_t> until = std::nullopt) {
  PlanConfig c = config(PlanMode::repeating, first);
  c.every = every;
  c.until = until;
  return c;
}

// What the bridge does: one StepWindow; when a window ends, the plan names
// the next. Returns, per window, the steps it kept; `requests` are made at
// the end of the given step (first_step, steps).
struct Driven {
  std::vector<Steps> windows;
  std::vector<Steps> arms;  // the step at which each window armed
};

Driven drive(WindowPlan& plan, std::uint64_t steps,
          const std::vector<std::pair<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>>>&
              requests = {},
          std::vector<Verdict>* verdicts = nullptr) {
  Driven run;
  bool planned = false;
  StepWindow w(plan.first().value_or(WindowPlan::never()));
  planned = plan.first().has_value();
  w.attach();
  for (std::uint64_t s = 0; s < steps; ++s) {
    for (const auto& [at, req] : requests) {
      if (at != s) continue;
      const auto out = plan.request(req.first, req.second, w.current(),
                                    planned ? std::optional<Schedule>(w.schedule()) : std::nullopt);
      if (verdicts) verdicts->push_back(out.verdict);
      if (!planned) {
        if (auto next = plan.next(w.current())) {
          w.replan(*next);
          planned = true;
        }
      }
    }
    const Boundary b = w.step_ended();
    if (b.arm) run.arms.push_back({b.current});
    if (b.disarm) {
      run.windows.push_back(w.captured());
      planned = false;
      if (auto next = plan.next(w.current())) {
        w.replan(*next);
        planned = true;
      }
    }
  }
  return run;
}

TEST(WindowPlan, FixedIsOneWindow) {
  WindowPlan plan(config(PlanMode::fixed, Schedule{2, 4, 0, 1}));
  EXPECT_FALSE(plan.many_windows());
  const Driven run = drive(plan, 20);
  ASSERT_EQ(run.windows.size(), 1u);
  EXPECT_EQ(run.windows[0], (Steps{2, 3, 4}));
}

TEST(WindowPlan, RepeatingWindowsEveryKSteps) {
  WindowPlan plan(repeating(Schedule{3, 5, 1, 2}, 10));
  EXPECT_TRUE(plan.many_windows());
  const Driven run = drive(plan, 40);
  // 3 warmup, 4 5 kept; 13 warmup, 14 15; 23, 24 25; 33, 34 35.
  ASSERT_EQ(run.windows.size(), 4u);
  EXPECT_EQ(run.windows[0], (Steps{4, 5}));
  EXPECT_EQ(run.windows[1], (Steps{14, 15}));
  EXPECT_EQ(run.windows[3], (Steps{34, 35}));
  EXPECT_EQ(run.arms, (std::vector<Steps>{{3}, {13}, {23}, {33}}));
}

TEST(WindowPlan, RepeatingStopsAtUntilWithWholeWindowsOnly) {
  WindowPlan plan(repeating(Schedule{0, 2, 0, 3}, 5, 13));
  const Driven run = drive(plan, 40);
  // 0-2, 5-7, 10-12; 15-17 would go past 13.
  ASSERT_EQ(run.windows.size(), 3u);
  EXPECT_EQ(run.windows[2], (Steps{10, 11, 12}));
}

TEST(WindowPlan, RepeatingFirstWindowPastUntilIsNone) {
  EXPECT_FALSE(WindowPlan(repeating(Schedule{10, 12, 0, 1}, 5, 11)).first());
}

TEST(WindowPlan, RepeatingAfterACutResumesAtTheNextStart) {
  WindowPlan plan(repeating(Schedule{3, 5, 0, 1}, 10));
  // A window cut at step 4 (a flush signal): the next begins at 13.
  const auto next = plan.next(4);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->start, 13u);
  EXPECT_EQ(next->end, 15u);
  // At step 13 itself, the window that begins there has begun already.
  EXPECT_EQ(plan.next(13)->start, 23u);
}

TEST(WindowPlan, RepeatingNeverOverflows) {
  WindowPlan plan(repeating(Schedule{kMaxStep - 10, kMaxStep - 8, 0, 1}, 20));
  EXPECT_FALSE(plan.next(kMaxStep - 9));
}

TEST(WindowPlan, OnDemandWaitsForRequests) {
  WindowPlan plan(on_demand_config());
  EXPECT_FALSE(plan.first());
  std::vector<Verdict> verdicts;
  // At step 5, ask for 3 steps from 10; at step 20, 2 steps from 25.
  const Driven run = drive(plan, 40, {{5, {10, 3}}, {20, {25, 2}}}, &verdicts);
  EXPECT_EQ(verdicts, (std::vector<Verdict>{Verdict::queued, Verdict::queued}));
  ASSERT_EQ(run.windows.size(), 2u);
  EXPECT_EQ(run.windows[0], (Steps{10, 11, 12}));
  EXPECT_EQ(run.windows[1], (Steps{25, 26}));
}

TEST(WindowPlan, OnDemandWarmupComesBeforeTheKeptSteps) {
  PlanConfig c = on_demand_config();
  c.warmup = 2;
  WindowPlan plan(c);
  const Driven run = drive(plan, 30, {{1, {5, 3}}});
  ASSERT_EQ(run.windows.size(), 1u);
  EXPECT_EQ(run.arms, (std::vector<Steps>{{5}}));
  EXPECT_EQ(run.windows[0], (Steps{7, 8, 9}));
}

TEST(WindowPlan, OnDemandRequestForAStepBegunIsPast) {
  WindowPlan plan(on_demand_config());
  // The step in progress is 7: a window from 7 has begun without us.
  EXPECT_EQ(plan.request(7, 2, 7, std::nullopt).verdict, Verdict::past);
  EXPECT_EQ(plan.request(3, 2, 7, std::nullopt).verdict, Verdict::past);
  EXPECT_EQ(plan.request(8, 2, 7, std::nullopt).verdict, Verdict::queued);
}

TEST(WindowPlan, OnDemandOverlapsAreRefusedNamingTheWindowInTheWay) {
  WindowPlan plan(on_demand_config());
  const Schedule open{10, 14, 0, 5};
  auto out = plan.request(12, 5, 11, open);
  EXPECT_EQ(out.verdict, Verdict::overlaps);
  ASSERT_TRUE(out.conflict);
  EXPECT_EQ(out.conflict->start, 10u);
  // Touching: no step between the windows.
  EXPECT_EQ(plan.request(15, 1, 11, open).verdict, Verdict::overlaps);
  EXPECT_EQ(plan.request(16, 1, 11, open).verdict, Verdict::queued);
  // And against a queued one.
  out = plan.request(17, 1, 11, open);
  EXPECT_EQ(out.verdict, Verdict::overlaps);
  EXPECT_EQ(out.conflict->start, 16u);
  // Before the open one, but it has begun: past.
  EXPECT_EQ(plan.request(5, 1, 11, open).verdict, Verdict::past);
}

TEST(WindowPlan, OnDemandQueueKeepsOrderAndDropsWhatWasMissed) {
  WindowPlan plan(on_demand_config());
  EXPECT_EQ(plan.request(40, 1, 0, std::nullopt).verdict, Verdict::queued);
  EXPECT_EQ(plan.request(20, 1, 0, std::nullopt).verdict, Verdict::queued);
  EXPECT_EQ(plan.request(30, 1, 0, std::nullopt).verdict, Verdict::queued);
  ASSERT_EQ(plan.queued().size(), 3u);
  EXPECT_EQ(plan.queued().front().start, 20u);
  std::vector<Schedule> missed;
  const auto next = plan.next(25, &missed);
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0].start, 20u);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->start, 30u);
}

TEST(WindowPlan, OnDemandHugeRequestsSaturate) {
  WindowPlan plan(on_demand_config());
  const auto out = plan.request(kMaxStep - 1, 5, 0, std::nullopt);
  EXPECT_EQ(out.window.end, kMaxStep);
}

TEST(WindowPlan, StepsText) {
  EXPECT_EQ(steps_text(Schedule{3, 7, 0, 5}), "3-7");
  EXPECT_EQ(steps_text(Schedule{5, 5, 0, 1}), "5");
}

}  // namespace
}  // namespace chakrashim::window
