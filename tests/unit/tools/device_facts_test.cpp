// Unit tests for DeviceFacts (tools/check/device_facts.h): what the check
// keeps of each device-trace event, and the cross-event rules it resolves.
#include "check/device_facts.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/builders.h"

namespace chakrashim::tools::check {
namespace {

using testing_support::int_arg;

// Times in us; process 1.
TraceEvent event(const char* cat, const char* name, std::int64_t ts_us, std::int64_t dur_us,
                 std::int64_t tid = 2) {
  return testing_support::complete_event(cat, name, ts_us * 1000, dur_us * 1000, 1, tid);
}

TEST(DeviceFacts, CountsHostOpsWithoutRecordFunctionIdButNotProfilerSteps) {
  DeviceFacts f(nullptr, {});
  f.add(event("user_annotation", "ProfilerStep#3", 0, 100));
  auto op = event("cpu_op", "aten::mm", 1, 5);
  f.add(op);
  op.record_function_id = int_arg(0);  // RecordFunction's "no handle"
  f.add(op);
  op.record_function_id = int_arg(8);
  f.add(op);
  f.finish();
  EXPECT_EQ(f.missing_rf_id.count, 2u);
  EXPECT_EQ(f.missing_rf_id.example, "cpu_op 'aten::mm' at ts 1.000");
  ASSERT_EQ(f.steps.size(), 1u);
  EXPECT_EQ(f.steps[0].step, 3u);
  EXPECT_EQ(f.steps[0].end_ns, 100000);
}

TEST(DeviceFacts, JoinsEtRfIdsAndRecordsMarkerHits) {
  const std::vector<std::uint64_t> et_ids = {5, 6, 7, 7};
  DeviceFacts f(&et_ids, {7});
  for (std::int64_t rf : {5, 7, 99}) {
    auto e = event("cpu_op", "x", rf, 1);
    e.record_function_id = int_arg(rf);
    f.add(e);
  }
  f.finish();
  EXPECT_EQ(f.et_ops_matched(), 3u);  // 5 and both 7s
  ASSERT_EQ(f.marker_hits.size(), 1u);
  EXPECT_EQ(f.marker_hits[0].rf_id, 7u);
  EXPECT_EQ(f.marker_hits[0].ts_ns, 7000);
}

TEST(DeviceFacts, FindsAChildWithExactlyItsParentsSpanOnTheSameThreadOnly) {
  DeviceFacts f(nullptr, {});
  f.add(event("cpu_op", "parent", 10, 5));
  f.add(event("cpu_op", "child", 10, 5));
  f.add(event("cpu_op", "shares one end", 10, 3));
  f.add(event("cpu_op", "other thread", 10, 5, 3));
  f.finish();
  EXPECT_EQ(f.equal_spans, 1u);
  EXPECT_NE(f.equal_span_example.find("from ts 10.000 to 15.000"), std::string::npos);
}

TEST(DeviceFacts, ChecksGpuIdsStreamsAndLaunches) {
  DeviceFacts f(nullptr, {});
  auto launch = event("cuda_runtime", "cudaLaunchKernel", 1, 1);
  launch.correlation = int_arg(50);
  f.add(launch);
  launch.correlation = int_arg(50);  // a duplicate
  f.add(launch);
  auto suffixed = event("cuda_runtime", "cudaMemcpyAsync_v3020", 3, 1);
  suffixed.correlation = int_arg(51);
  f.add(suffixed);
  auto kernel = event("kernel", "k", 5, 1, 7);
  kernel.stream = int_arg(7);
  kernel.correlation = int_arg(50);
  f.add(kernel);  // no External id
  auto memcpy = event("gpu_memcpy", "m", 6, 1, 7);
  memcpy.external_id = int_arg(1);
  memcpy.correlation = int_arg(51);
  memcpy.stream = int_arg(0);
  f.add(memcpy);
  auto memset = event("gpu_memset", "s", 7, 1, 7);  // memsets need no External id
  memset.stream = int_arg(7);
  f.add(memset);
  auto op = event("cpu_op", "aten::mm", 0, 10);
  op.record_function_id = int_arg(1);
  op.stream = int_arg(7);
  f.add(op);
  f.finish();
  EXPECT_EQ(f.cuda_runtime, 3u);
  EXPECT_EQ(f.gpu_ops(), 3u);
  EXPECT_EQ(f.gpu_missing_external_id.count, 1u);
  EXPECT_EQ(f.launch_suffix.count, 1u);
  EXPECT_EQ(f.gpu_bad_stream.count, 1u);
  EXPECT_EQ(f.cpu_with_stream.count, 1u);
  EXPECT_EQ(f.duplicate_correlations, 1u);
  EXPECT_EQ(f.gpu_ops_unlinked, 1u);  // the memcpy's launch has a suffixed name
}

TEST(DeviceFacts, IgnoresEventsThatAreNotCompleteSpans) {
  DeviceFacts f(nullptr, {});
  auto flow = event("cpu_op", "x", 1, 1);
  flow.ph = "f";
  f.add(flow);
  f.finish();
  EXPECT_EQ(f.missing_rf_id.count, 0u);
}

TEST(ProfilerStepNumber, ParsesOnlyTheExactForm) {
  EXPECT_EQ(profiler_step_number("ProfilerStep#12"), 12u);
  EXPECT_EQ(profiler_step_number("ProfilerStep#"), std::nullopt);
  EXPECT_EQ(profiler_step_number("ProfilerStep#1a"), std::nullopt);
  EXPECT_EQ(profiler_step_number("Optimizer.step#SGD.step"), std::nullopt);
}

TEST(StripVersionSuffix, RemovesCuptisSuffixOnly) {
  EXPECT_EQ(strip_version_suffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_version_suffix("cudaStreamGetCaptureInfo_v2"), "cudaStreamGetCaptureInfo");
  EXPECT_EQ(strip_version_suffix("cudaLaunchKernel"), "cudaLaunchKernel");
  EXPECT_EQ(strip_version_suffix("my_vector"), "my_vector");
}

}  // namespace
}  // namespace chakrashim::tools::check
