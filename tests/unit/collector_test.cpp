// The collector's pure parts: the window join, demangling, where libcupti
// is looked for, and the buffer pool.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "buffer_pool.h"
#include "chakrashim/collector.h"
#include "cupti_locate.h"
#include "support/device_builders.h"

namespace chakrashim::collector {
namespace {

// A launch of 10 ns; a runtime record's stream is CUPTI's thread id.
DeviceEvent launch(std::int64_t start, std::uint32_t corr, std::uint32_t cupti_tid = 11) {
  DeviceEvent e = testing_support::device_event(DeviceEventKind::runtime, start, start + 10, corr, 0, cupti_tid);
  e.context = 211;
  return e;
}

// A kernel of 50 ns on stream 7.
DeviceEvent kernel(std::int64_t start, std::uint32_t corr) {
  return testing_support::device_event(DeviceEventKind::kernel, start, start + 50, corr, 0, 7);
}

TEST(JoinDeviceCapture, KeepsLaunchesInCapturedStepsAndTheirGpuOps) {
  DeviceCapture c;
  for (const auto& e : {launch(50, 1), kernel(60, 1),    // before the window: warmup
                        launch(150, 2), kernel(400, 2),   // step 1, kernel runs after the step
                        launch(320, 3), kernel(330, 3),   // between steps (not captured)
                        launch(520, 4), kernel(530, 4),   // step 2
                        kernel(540, 9)})                  // no launch recorded, inside the window
    c.events.push_back(e);
  for (const auto& l : {CorrelationLink{2, 1002}, CorrelationLink{4, 1004}, CorrelationLink{9, 1009},
                        CorrelationLink{3, 1003}})
    c.correlations.push_back(l);
  c.threads = {{11, 4242}};
  join_device_capture(c, {{500, 600}, {100, 300}});
  std::set<std::uint32_t> kept;
  for (const auto& e : c.events) kept.insert(e.correlation);
  EXPECT_EQ(kept, (std::set<std::uint32_t>{2, 4, 9}));
  ASSERT_EQ(c.events.size(), 5u);
  EXPECT_EQ(c.unattributed_gpu_ops, 0u);
  for (const auto& e : c.events) {
    EXPECT_EQ(e.external_id, 1000u + e.correlation) << e.correlation;
    if (e.kind == DeviceEventKind::runtime) {
      EXPECT_EQ(e.tid, 4242);
      EXPECT_TRUE(e.flow);
    } else {
      EXPECT_EQ(e.flow, e.correlation != 9);  // only a pair gets a flow
    }
  }
}

TEST(JoinDeviceCapture, LeavesOutAndCountsGpuOpsNoOpClaims) {
  DeviceCapture c;
  // Kernel 2's correlation record was dropped; kernel 3 has no launch and
  // no correlation record.
  for (const auto& e : {launch(150, 1), kernel(160, 1), launch(170, 2), kernel(180, 2), kernel(190, 3)})
    c.events.push_back(e);
  c.correlations.push_back(CorrelationLink{1, 7});
  join_device_capture(c, {{100, 300}});
  EXPECT_EQ(c.unattributed_gpu_ops, 2u);
  std::size_t kernels = 0;
  for (const auto& e : c.events) {
    if (e.kind == DeviceEventKind::kernel) {
      ++kernels;
      EXPECT_EQ(e.external_id, 7u);
    }
    if (e.kind == DeviceEventKind::runtime) {
      EXPECT_EQ(e.flow, e.correlation == 1) << e.correlation;
    }
  }
  EXPECT_EQ(kernels, 1u);
}

TEST(JoinDeviceCapture, UnknownThreadKeepsCuptisIdAndNoStepsKeepsNothing) {
  DeviceCapture c;
  c.events.push_back(launch(150, 2, 99));
  join_device_capture(c, {{100, 200}});
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].tid, 99);
  EXPECT_EQ(c.events[0].external_id, 0u);
  EXPECT_FALSE(c.events[0].flow);
  join_device_capture(c, {});
  EXPECT_TRUE(c.events.empty());
}

TEST(JoinDeviceCapture, DemanglesKernelNamesOnly) {
  DeviceCapture c;
  c.names = {"_Z9fake_gemmPKfS0_Pfi", "cudaLaunchKernel", "Memcpy HtoD (Pinned -> Device)", "_Zbroken"};
  join_device_capture(c, {{0, 1}});
  EXPECT_EQ(c.names[0], "fake_gemm(float const*, float const*, float*, int)");
  EXPECT_EQ(c.names[1], "cudaLaunchKernel");
  EXPECT_EQ(c.names[2], "Memcpy HtoD (Pinned -> Device)");
  EXPECT_EQ(c.names[3], "_Zbroken");
}

TEST(CuptiLocate, OverrideAloneThenLoadedThenTorchsThenToolkit) {
  LocateInput in;
  in.override_path = "/x/libcupti.so";
  auto c = cupti_candidates(in);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].path, "/x/libcupti.so");
  EXPECT_FALSE(c[0].noload);

  in.override_path.reset();
  in.torch_lib_dir = "/venv/lib/python3.12/site-packages/torch/lib";
  in.cuda_home = "/opt/cuda";
  c = cupti_candidates(in);
  ASSERT_GE(c.size(), 4u);
  EXPECT_TRUE(c[0].noload);
  EXPECT_EQ(c[0].path, "libcupti.so.13");
  EXPECT_TRUE(c[1].noload);
  EXPECT_EQ(c[2].path, "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  EXPECT_FALSE(c[2].noload);
  const auto pos = [&](const std::string& p) {
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i].path == p) return static_cast<long>(i);
    return -1L;
  };
  EXPECT_GT(pos("/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12"), 1);
  EXPECT_GT(pos("/opt/cuda/extras/CUPTI/lib64/libcupti.so.13"),
            pos("/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12"));
  EXPECT_GT(pos("/usr/local/cuda/lib64/libcupti.so.12"), pos("/opt/cuda/lib64/libcupti.so.12"));
  EXPECT_EQ(c.back().path, "libcupti.so.12");
}

TEST(BufferPool, RecyclesAndRefusesBeyondItsBuffers) {
  BufferPool pool(100000, 2);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool.buffer_size() % 4096, 0u);
  auto* a = pool.acquire();
  auto* b = pool.acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.refusals(), 1u);
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);
  pool.release(reinterpret_cast<std::uint8_t*>(&pool));  // not ours: ignored
  EXPECT_EQ(pool.in_use(), 2u);
}

TEST(BufferPool, ShapeForCapKeepsTwoBuffersAndTheCap) {
  auto [size, count] = BufferPool::shape_for_cap(64ULL << 20);
  EXPECT_EQ(size, 8u << 20);
  EXPECT_EQ(count, 8u);
  std::tie(size, count) = BufferPool::shape_for_cap(128ULL << 10);
  EXPECT_EQ(count, 2u);
  EXPECT_LE(size * count, 128u << 10);
}

TEST(BufferPool, ThreadsShareItSafely) {
  BufferPool pool(4096, 4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (auto* b = pool.acquire()) {
          b[0] = 1;
          pool.release(b);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace chakrashim::collector
