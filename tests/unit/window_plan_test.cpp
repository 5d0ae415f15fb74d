// Unit tests for the window plan (window/window_plan.h) and the on-demand
// files (common/files/on_demand_files.h): which windows a process captures, driven
// through a StepWindow the way the bridge drives it.
#include "window/window_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "files/on_demand_files.h"
#include "window/step_window.h"

namespace chakrashim::window {
namespace {

using Steps = std::vector<std::uint64_t>;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

PlanConfig config(PlanMode mode, Schedule first) {
  PlanConfig c;
  c.mode = mode;
  c.first = first;
  return c;
}
PlanConfig on_demand_config() { return config(PlanMode::on_demand, Schedule{}); }

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
  PlanConfig c = config(PlanMode::repeating, Schedule{3, 5, 1, 2});
  c.every = 10;
  WindowPlan plan(c);
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
  PlanConfig c = config(PlanMode::repeating, Schedule{0, 2, 0, 3});
  c.every = 5;
  c.until = 13;
  WindowPlan plan(c);
  const Driven run = drive(plan, 40);
  // 0-2, 5-7, 10-12; 15-17 would go past 13.
  ASSERT_EQ(run.windows.size(), 3u);
  EXPECT_EQ(run.windows[2], (Steps{10, 11, 12}));
}

TEST(WindowPlan, RepeatingFirstWindowPastUntilIsNone) {
  PlanConfig c = config(PlanMode::repeating, Schedule{10, 12, 0, 1});
  c.every = 5;
  c.until = 11;
  EXPECT_FALSE(WindowPlan(c).first());
}

TEST(WindowPlan, RepeatingAfterACutResumesAtTheNextStart) {
  PlanConfig c = config(PlanMode::repeating, Schedule{3, 5, 0, 1});
  c.every = 10;
  WindowPlan plan(c);
  // A window cut at step 4 (a flush signal): the next begins at 13.
  const auto next = plan.next(4);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->start, 13u);
  EXPECT_EQ(next->end, 15u);
  // At step 13 itself, the window that begins there has begun already.
  EXPECT_EQ(plan.next(13)->start, 23u);
}

TEST(WindowPlan, RepeatingNeverOverflows) {
  PlanConfig c = config(PlanMode::repeating, Schedule{kMax - 10, kMax - 8, 0, 1});
  c.every = 20;
  WindowPlan plan(c);
  EXPECT_FALSE(plan.next(kMax - 9));
}

TEST(WindowPlan, OnDemandWaitsForRequests) {
  PlanConfig c = on_demand_config();
  WindowPlan plan(c);
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
  const auto out = plan.request(kMax - 1, 5, 0, std::nullopt);
  EXPECT_EQ(out.window.end, kMax);
}

TEST(WindowPlan, StepsText) {
  EXPECT_EQ(steps_text(Schedule{3, 7, 0, 5}), "3-7");
  EXPECT_EQ(steps_text(Schedule{5, 5, 0, 1}), "5");
}

TEST(OnDemandFiles, Names) {
  EXPECT_EQ(control_dir("/t", "123"), "/t/.chakrashim/123");
  EXPECT_EQ(control_dir("/t/", "0"), "/t/.chakrashim/0");
  EXPECT_EQ(window_folder_name(1000), "step-1000");
  EXPECT_TRUE(is_trigger_file_name(trigger_file_name(1764633600123456789LL, 42)));
  EXPECT_TRUE(is_trigger_file_name("trigger-1.json"));
  EXPECT_FALSE(is_trigger_file_name("trigger-.json"));
  EXPECT_FALSE(is_trigger_file_name(".trigger-1.json.tmp"));
  EXPECT_FALSE(is_trigger_file_name("step.json"));
  EXPECT_FALSE(is_trigger_file_name("trigger-1.json~"));
}

TEST(OnDemandFiles, StepNoteRoundTrips) {
  StepNote n;
  n.job_id = "77";
  n.rank = 0;
  n.step = 1234;
  n.time_s = 1764633600.5;
  n.steps_per_s = 12.5;
  n.pid = 4242;
  n.host = "node-1";
  n.restart = 2;
  n.world_size = 512;
  n.ranks = "0-3";
  n.warmup = 1;
  n.gzip = true;
  std::string error;
  const auto back = decode_step_note(encode_step_note(n), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->job_id, "77");
  EXPECT_EQ(back->step, 1234u);
  EXPECT_DOUBLE_EQ(back->steps_per_s, 12.5);
  EXPECT_EQ(back->world_size, 512);
  EXPECT_EQ(back->ranks, "0-3");
  EXPECT_EQ(back->restart, 2u);
  EXPECT_EQ(back->warmup, 1u);
  EXPECT_TRUE(back->gzip);
  n.ranks.reset();
  n.world_size = -1;
  const auto again = decode_step_note(encode_step_note(n), error);
  ASSERT_TRUE(again) << error;
  EXPECT_FALSE(again->ranks);
  EXPECT_EQ(again->world_size, -1);
}

TEST(OnDemandFiles, TriggerRoundTripsAndBadOnesSayWhy) {
  Trigger t{100, 5, 1, 1764633600.0, "me@host"};
  std::string error;
  const auto back = decode_trigger(encode_trigger(t), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->first_step, 100u);
  EXPECT_EQ(back->steps, 5u);
  EXPECT_EQ(back->restart, 1u);
  EXPECT_EQ(back->requested_by, "me@host");

  const auto bad = [&](const std::string& text) {
    error.clear();
    EXPECT_FALSE(decode_trigger(text, error)) << text;
    EXPECT_FALSE(error.empty()) << text;
    return error;
  };
  bad("");
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":1");  // cut short
  bad("[1,2]");
  EXPECT_NE(bad("{\"format\":\"chakrashim-trigger/2\",\"first_step\":1,\"steps\":1,\"restart\":0}")
                .find("format"),
            std::string::npos);
  EXPECT_NE(bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":-1,\"steps\":1,\"restart\":0}")
                .find("first_step"),
            std::string::npos);
  EXPECT_NE(bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":1,\"steps\":0,\"restart\":0}")
                .find("steps"),
            std::string::npos);
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":1,\"steps\":1}");
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":\"5\",\"steps\":1,\"restart\":0}");
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":18446744073709551615,\"steps\":1,"
      "\"restart\":0}");
}

TEST(OnDemandFiles, MissedRoundTrips) {
  EXPECT_EQ(missed_file_name(1300, 7), "missed-1300-rank-7.json");
  std::string error;
  const auto back = decode_missed(encode_missed(Missed{1300, 7, "past: at step 1400"}), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->first_step, 1300u);
  EXPECT_EQ(back->rank, 7u);
  EXPECT_EQ(back->why, "past: at step 1400");
  EXPECT_FALSE(decode_missed(encode_trigger(Trigger{1, 1, 0, 0, ""}), error));
  EXPECT_FALSE(decode_missed("{\"format\":\"chakrashim-missed/1\",\"rank\":1}", error));
}

TEST(OnDemandFiles, StepNoteRejectsWhatIsNotOne) {
  std::string error;
  EXPECT_FALSE(decode_step_note("{}", error));
  EXPECT_FALSE(decode_step_note(encode_trigger(Trigger{1, 1, 0, 0, ""}), error));
  EXPECT_NE(error.find("format"), std::string::npos);
}

}  // namespace
}  // namespace chakrashim::window
