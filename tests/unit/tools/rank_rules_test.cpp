// Unit tests for the per-rank rules (tools/check/rank_rules.h) on facts
// built in memory.
#include "check/rank_rules.h"
#include "check/step_match.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/builders.h"

namespace chakrashim::tools::check {
namespace {

using nlohmann::json;
using testing_support::complete_event;
using testing_support::et_node;
using testing_support::int_arg;

bool has(const std::vector<Finding>& out, RuleId id) {
  return std::any_of(out.begin(), out.end(), [id](const Finding& f) { return f.rule == id; });
}

struct Device {
  TraceSummary summary;
  DeviceFacts facts{nullptr, {}};
  DeviceInput input() { return {"d.json", {}, &summary, &facts, std::nullopt, std::nullopt}; }
};

Device parsed_device() {
  Device d;
  d.summary.parse.ok = true;
  d.summary.has_trace_events = true;
  d.summary.keys_before_events = {"schemaVersion", "deviceProperties", "distributedInfo"};
  return d;
}

TEST(ParseMeta, ReadsOurMetadataObject) {
  const auto meta = parse_meta(json::parse(R"({"steps": {"captured": [3, 4], "cut_short": true,
      "partial_last_step": 4, "reason": "signal:SIGTERM"}, "ranks": {"filter": "0,2", "world_size": 4},
      "host_trace": "off", "device_trace": {"dropped_records": 7, "truncated_at": 12.5}})"));
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->captured, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_TRUE(meta->cut_short);
  EXPECT_EQ(meta->partial_last_step, 4u);
  EXPECT_EQ(meta->reason, "signal:SIGTERM");
  EXPECT_EQ(meta->ranks_filter, "0,2");
  EXPECT_EQ(meta->world_size, 4u);
  EXPECT_EQ(meta->host_trace, "off");
  EXPECT_EQ(meta->dropped_records, 7u);
  EXPECT_TRUE(meta->truncated);
  EXPECT_FALSE(parse_meta(json::array()));
}

TEST(DeviceRules, ACompactRankIsAnErrorEvenForRankZero) {
  auto d = parsed_device();
  d.summary.distributed_info = json::parse(R"({"rank": 0})");
  auto in = d.input();
  in.expected_rank = 0;  // and the regex found nothing
  RankFigures fig;
  std::vector<Finding> out;
  device_rules(in, std::nullopt, fig, out);
  EXPECT_TRUE(has(out, RuleId::device_rank));
}

TEST(DeviceRules, NoRankAnywhereIsOnlyInformationForRankZero) {
  auto d = parsed_device();
  auto in = d.input();
  in.expected_rank = 0;
  RankFigures fig;
  std::vector<Finding> out;
  device_rules(in, std::nullopt, fig, out);
  EXPECT_FALSE(has(out, RuleId::device_rank));
  EXPECT_TRUE(has(out, RuleId::device_no_rank));
  in.expected_rank = 2;
  out.clear();
  device_rules(in, std::nullopt, fig, out);
  EXPECT_TRUE(has(out, RuleId::device_rank));
}

TEST(DeviceRules, HostOnlyTraceWarnsAndMetadataWarningsFollowTheMetadata) {
  auto d = parsed_device();
  CaptureMeta meta;
  meta.partial_last_step = 4;
  meta.dropped_records = 1;
  meta.cut_short = true;
  RankFigures fig;
  std::vector<Finding> out;
  device_rules(d.input(), meta, fig, out);
  EXPECT_TRUE(fig.host_only);
  for (auto id : {RuleId::link_host_only, RuleId::steps_partial_last, RuleId::device_dropped,
                  RuleId::device_truncated, RuleId::device_profiler_step})
    EXPECT_TRUE(has(out, id)) << rule(id).name;
  EXPECT_FALSE(has(out, RuleId::device_no_metadata));
}

TEST(DeviceRules, HostOnlyIsANoteWithoutCudaAndAWarningWithIt) {
  const auto severity = [](const std::optional<CaptureMeta>& meta, std::uint64_t devices) {
    auto d = parsed_device();
    d.summary.devices = devices;
    RankFigures fig;
    std::vector<Finding> out;
    device_rules(d.input(), meta, fig, out);
    for (const auto& f : out)
      if (f.rule == RuleId::link_host_only) return severity_of(f);
    ADD_FAILURE() << "no link.host_only";
    return Severity::error;
  };
  CaptureMeta cpu, gpu;
  cpu.cupti = "absent";
  gpu.cupti = "ok";
  EXPECT_EQ(severity(cpu, 0), Severity::info);
  EXPECT_EQ(severity(std::nullopt, 0), Severity::info);
  EXPECT_EQ(severity(gpu, 0), Severity::warning);
  EXPECT_EQ(severity(std::nullopt, 1), Severity::warning);  // a GPU in deviceProperties
}

TEST(DeviceRules, ACutOffTraceStopsAtTheJsonError) {
  auto d = parsed_device();
  d.summary.parse = {false, true, "unexpected end of input"};
  RankFigures fig;
  std::vector<Finding> out;
  device_rules(d.input(), std::nullopt, fig, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule, RuleId::device_json);
  EXPECT_NE(out[0].detail.find("ends early"), std::string::npos);
}

// An ET of `ops` op nodes with rf_ids 1..ops (each `copies` times: what a
// forked child flushing its copy of the stream into the file leaves).
EtFacts et_with(std::uint64_t ops, int copies = 1, std::uint64_t first_id = 2) {
  EtFacts et("Optimizer.step#");
  for (int c = 0; c < copies; ++c)
    for (std::uint64_t i = 0; i < ops; ++i) et.add(et_node(first_id + i, "aten::x", std::nullopt, i + 1));
  et.finish();
  return et;
}

// A device trace of `spans` cpu_op spans with Record function ids 1..spans.
DeviceFacts device_with(const EtFacts& et, std::int64_t spans) {
  DeviceFacts dev(&et.op_rf_ids(), {});
  for (std::int64_t rf = 1; rf <= spans; ++rf) {
    TraceEvent e;  // untimed: the join reads only the id
    e.ph = "X";
    e.cat = "cpu_op";
    e.name = "aten::x";
    e.record_function_id = int_arg(rf);
    dev.add(e);
  }
  dev.finish();
  return dev;
}

TEST(PairRules, JoinBelowThresholdIsAnError) {
  const EtFacts et = et_with(100);
  const DeviceFacts dev = device_with(et, 98);
  RankFigures fig;
  std::vector<Finding> out;
  pair_rules(et, dev, std::nullopt, "Optimizer.step#", fig, out);
  EXPECT_EQ(fig.join_matched, 98u);
  EXPECT_EQ(fig.join_total, 100u);
  ASSERT_TRUE(has(out, RuleId::join_rf_id));
  EXPECT_NE(out[0].detail.find("98 of 100"), std::string::npos);
}

// et_rules' findings on `et`, read from "e.json", which parsed.
std::vector<Finding> et_findings(const EtFacts& et) {
  EtSummary sum;
  sum.parse.ok = true;
  EtInput in{"e.json", false, "", &sum, &et};
  RankFigures fig;
  std::vector<Finding> out;
  et_rules(in, fig, out);
  return out;
}

TEST(EtRules, RepeatedNodeIdsAreAnError) {
  // Seen: a fork DataLoader in a relative trace folder left 763 repeated ids
  // in a file that was valid JSON and joined 100%.
  const EtFacts et = et_with(50, 2);
  EXPECT_EQ(et.duplicate_ids(), 50u);
  EXPECT_EQ(et.duplicate_rf_ids(), 50u);
  const std::vector<Finding> out = et_findings(et);
  ASSERT_TRUE(has(out, RuleId::et_duplicates));
  const auto f = std::find_if(out.begin(), out.end(), [](const Finding& f) { return f.rule == RuleId::et_duplicates; });
  EXPECT_NE(f->detail.find("50 repeated node ids and 50 repeated op rf_ids, e.g. node id 2"), std::string::npos)
      << f->detail;
  EXPECT_FALSE(has(et_findings(et_with(50)), RuleId::et_duplicates));
}

TEST(PairRules, AnEtWithFarMoreOpsThanTheDeviceTracesSpansIsNotItsPair) {
  const EtFacts et = et_with(300);
  RankFigures fig;
  std::vector<Finding> out;
  pair_rules(et, device_with(et, 100), std::nullopt, "Optimizer.step#", fig, out);
  EXPECT_TRUE(has(out, RuleId::join_op_count));
  out.clear();
  // Equal counts, or a few more ET ops (ops open when a cut landed): fine.
  pair_rules(et, device_with(et, 300), std::nullopt, "Optimizer.step#", fig, out);
  EXPECT_FALSE(has(out, RuleId::join_op_count));
  out.clear();
  pair_rules(et, device_with(et, 280), std::nullopt, "Optimizer.step#", fig, out);
  EXPECT_FALSE(has(out, RuleId::join_op_count));
}

TEST(PairRules, AWindowCutInsideItsFirstStepHoldsOnlyThePartialStep) {
  const EtFacts et = et_with(3);
  DeviceFacts dev(&et.op_rf_ids(), {});
  dev.add(complete_event("user_annotation", "ProfilerStep#2", 1000, 5000));
  dev.finish();
  CaptureMeta meta;
  meta.partial_last_step = 2;
  RankFigures fig;
  std::vector<Finding> out;
  pair_rules(et, dev, meta, "Optimizer.step#", fig, out);
  EXPECT_FALSE(has(out, RuleId::steps_match));
  out.clear();
  pair_rules(et, dev, std::nullopt, "Optimizer.step#", fig, out);
  EXPECT_TRUE(has(out, RuleId::steps_match));
}

// Issue #34 item 3: a job's own torch.profiler opens ProfilerStep#N in every
// step; kept under that name beside ours, the device trace held
// 3,4,5,6,3,4,5 (the same numbers) or 3,0,4,1,5 (its profiler counting from
// another step), and check said 0 errors.
TraceEvent step_event(std::uint64_t n, std::int64_t ts, std::int64_t dur, std::int64_t rf_id = 0) {
  TraceEvent e = complete_event("user_annotation", "ProfilerStep#" + std::to_string(n), ts, dur);
  if (rf_id) e.record_function_id = int_arg(rf_id);
  return e;
}

const Finding* find(const std::vector<Finding>& out, RuleId id) {
  const auto it = std::find_if(out.begin(), out.end(), [id](const Finding& f) { return f.rule == id; });
  return it == out.end() ? nullptr : &*it;
}

TEST(DeviceRules, TwoProfilerStepsForOneStepAreAnErrorWithTheJobsProfilerAsTheCause) {
  // Ours 3..6 (no Record function id), then the job's 3..5 each starting
  // a little later (with one), in file order as the old writer put them.
  for (const auto& [job, text] : {std::pair<std::vector<std::uint64_t>, std::string>{{3, 4, 5}, "3,3,4,4,5,5,6: 3,4,5 more than once"},
                                  {{0, 1, 2}, "3,0,4,1,5,2,6: out of order"}}) {
    auto d = parsed_device();
    for (std::uint64_t i = 0; i < 4; ++i) d.facts.add(step_event(3 + i, 1000 * (i + 1), 1000));
    for (std::uint64_t i = 0; i < 3; ++i) d.facts.add(step_event(job[i], 1000 * (i + 1) + 10, 1000, 100 + i));
    d.facts.finish();
    RankFigures fig;
    std::vector<Finding> out;
    device_rules(d.input(), std::nullopt, fig, out);
    const Finding* f = find(out, RuleId::steps_profiler_step);
    ASSERT_NE(f, nullptr) << text;
    EXPECT_EQ(severity_of(*f), Severity::error);
    EXPECT_EQ(f->detail, "d.json: ProfilerStep#N by start time " + text);
    EXPECT_NE(rule(RuleId::steps_profiler_step).fix.find("job:ProfilerStep#N"), std::string::npos);
    EXPECT_NE(rule(RuleId::steps_profiler_step).fix.find("torch.profiler"), std::string::npos);
  }
}

TEST(DeviceRules, OneProfilerStepPerStepAndTheJobsRenamedOnesPass) {
  auto d = parsed_device();
  for (std::uint64_t i = 0; i < 3; ++i) {
    d.facts.add(step_event(3 + i, 1000 * (i + 1), 1000));
    TraceEvent job = step_event(i, 1000 * (i + 1) + 10, 1000, 100 + i);
    job.name = "job:" + job.name;
    d.facts.add(job);
  }
  d.facts.finish();
  EXPECT_EQ(d.facts.steps_by_time(), (std::vector<std::uint64_t>{3, 4, 5}));
  RankFigures fig;
  std::vector<Finding> out;
  device_rules(d.input(), std::nullopt, fig, out);
  EXPECT_FALSE(has(out, RuleId::steps_profiler_step));
  EXPECT_FALSE(has(out, RuleId::device_rf_id));  // the job's carry their Record function id
}

TEST(EtRules, RepeatedOrUnorderedProfilerStepNodesAreAnError) {
  const auto et_rules_on = [](const std::vector<std::uint64_t>& steps) {
    EtFacts et("Optimizer.step#");
    std::uint64_t id = 2;
    for (const auto n : steps) {  // ids 2, 3, ... with rf_ids one more
      et.add(et_node(id, "ProfilerStep#" + std::to_string(n), std::nullopt, id + 1));
      et.add(et_node(id + 1, "aten::x", std::nullopt, id + 2));
      id += 2;
    }
    et.finish();
    const std::vector<Finding> out = et_findings(et);
    const Finding* f = find(out, RuleId::steps_profiler_step);
    return f ? f->detail : std::string();
  };
  EXPECT_EQ(et_rules_on({}), "");
  // torch.profiler beside torch's own ET observer: one node per step.
  EXPECT_EQ(et_rules_on({4, 5, 6}), "");
  EXPECT_EQ(et_rules_on({4, 5, 4}), "e.json: ProfilerStep#N nodes by id 4,5,4: 4 more than once");
  EXPECT_EQ(et_rules_on({5, 4}), "e.json: ProfilerStep#N nodes by id 5,4: out of order");
}

TEST(PairRules, StepsMatchStaysQuietWhenTheStepSpansThemselvesAreWrong) {
  // Which of two ProfilerStep#3 holds a marker says nothing;
  // steps.profiler_step names the cause, steps.match would blame the window.
  EtFacts et("Optimizer.step#");
  et.add(et_node(2, "Optimizer.step#SGD.step", std::nullopt, 50));
  et.finish();
  DeviceFacts dev(&et.op_rf_ids(), {50});
  dev.add(step_event(3, 1000, 1000));
  dev.add(step_event(0, 1010, 1000, 7));
  TraceEvent op = complete_event("user_annotation", "Optimizer.step#SGD.step", 1500, 100);
  op.record_function_id = int_arg(50);
  dev.add(op);
  dev.finish();
  RankFigures fig;
  std::vector<Finding> out;
  pair_rules(et, dev, std::nullopt, "Optimizer.step#", fig, out);
  EXPECT_FALSE(has(out, RuleId::steps_match));
}

TEST(PairRules, FilesOfAnotherRankOrProcessAreNotOnePair) {
  const EtFacts et = et_with(30);
  std::vector<Finding> out;
  PairIdentity id;
  id.et_rank = 0;
  id.device_rank = 0;
  identity_rule("e.json", "d.json", id, et, device_with(et, 30), out);
  EXPECT_TRUE(out.empty());
  id.device_rank = 1;
  identity_rule("e.json", "d.json", id, et, device_with(et, 30), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule, RuleId::pair_mismatch);
  EXPECT_EQ(out[0].detail, "e.json and d.json are not one rank's pair: the ET is rank 0's by its name, "
                           "the device trace says rank 1");
  // The overlap comes from the join: 10 of the ET's 30 rf_ids.
  out.clear();
  identity_rule("e.json", "d.json", PairIdentity{}, et, device_with(et, 10), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].detail.find("only 10 of the ET's 30 rf_ids are in the device trace"), std::string::npos)
      << out[0].detail;
}

TEST(StepList, JoinsWithCommas) {
  EXPECT_EQ(step_list({}), "none");
  EXPECT_EQ(step_list({3, 4}), "3-4");
  EXPECT_EQ(step_list({3, 4, 5, 8, 10, 11}), "3-5,8,10-11");
}

}  // namespace
}  // namespace chakrashim::tools::check
