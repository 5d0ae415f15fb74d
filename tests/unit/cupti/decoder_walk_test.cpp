// The record decoder on buffers built here and walked with the real
// cuptiActivityGetNextRecord of the libcupti named by
// CHAKRASHIM_TEST_CUPTI_LIB: CUDA 13's (toolkit or PyPI) and CUDA 12's (PyPI
// nvidia-cuda-cupti-cu12), one CTest test each. CUPTI's walk needs no GPU:
// it sizes each record by its kind, the way the loaded version writes it.
// A buffer laid out with the wrong version's sizes walks into garbage, so
// these tests also pin which record versions each CUPTI release emits.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>
#include <gtest/gtest.h>

#include "record_decoder.h"

namespace chakrashim::collector {
namespace {

struct RealCupti {
  void* handle = nullptr;
  CUptiResult (*next)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*version)(uint32_t*) = nullptr;
  uint32_t api_version = 0;

  static const RealCupti& get() {
    static RealCupti r = [] {
      RealCupti c;
      const char* path = std::getenv("CHAKRASHIM_TEST_CUPTI_LIB");
      if (!path || !*path) return c;
      c.handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (!c.handle) return c;
      c.next = reinterpret_cast<decltype(c.next)>(::dlsym(c.handle, "cuptiActivityGetNextRecord"));
      c.version = reinterpret_cast<decltype(c.version)>(::dlsym(c.handle, "cuptiGetVersion"));
      if (c.version) c.version(&c.api_version);
      return c;
    }();
    return r;
  }
};

// A CUPTI-style buffer: records back to back, each 8-byte aligned.
class Buffer {
 public:
  template <typename T>
  T& add(CUpti_ActivityKind kind) {
    const std::size_t at = (size_ + 7) & ~std::size_t{7};
    size_ = at + sizeof(T);
    bytes_.resize(size_ + 64, 0);
    auto* rec = reinterpret_cast<T*>(data() + at);
    std::memset(rec, 0, sizeof(T));
    reinterpret_cast<CUpti_Activity*>(rec)->kind = kind;
    return *rec;
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage()); }
  std::size_t size() const { return size_; }

 private:
  // 8-byte alignment for the whole buffer, as CUPTI requires.
  std::uint64_t* storage() {
    aligned_.resize((bytes_.size() + 7) / 8);
    return aligned_.data();
  }
  std::vector<uint8_t> bytes_;
  std::vector<std::uint64_t> aligned_;
  std::size_t size_ = 0;
};

class DecoderWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& c = RealCupti::get();
    ASSERT_NE(c.handle, nullptr) << "CHAKRASHIM_TEST_CUPTI_LIB must name a loadable libcupti "
                                    "(scripts/setup.sh installs them): "
                                 << (std::getenv("CHAKRASHIM_TEST_CUPTI_LIB") ? std::getenv("CHAKRASHIM_TEST_CUPTI_LIB") : "unset")
                                 << " " << (::dlerror() ? ::dlerror() : "");
    ASSERT_NE(c.next, nullptr);
    ASSERT_TRUE(RecordDecoder::supported(c.api_version)) << c.api_version;
    cuda13_ = c.api_version >= kCuda13CuptiApiVersion;
  }

  // Walks with the real CUPTI, decodes each record.
  std::vector<Decoded> walk(Buffer& b, std::size_t* records = nullptr) {
    const auto& c = RealCupti::get();
    RecordDecoder decoder(c.api_version, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
    std::vector<Decoded> out;
    CUpti_Activity* rec = nullptr;
    std::size_t n = 0;
    while (c.next(b.data(), b.size(), &rec) == CUPTI_SUCCESS) {
      ++n;
      out.push_back(decoder.decode(rec));
    }
    if (records) *records = n;
    return out;
  }

  // A kernel record of the version this CUPTI writes.
  template <typename K>
  void fill_kernel(K& k, uint64_t start, uint64_t end, uint32_t corr, const char* name) {
    k.start = start;
    k.end = end;
    k.completed = end;
    k.deviceId = 1;
    k.contextId = 2;
    k.streamId = 7;
    k.gridX = 4, k.gridY = 5, k.gridZ = 6;
    k.blockX = 128, k.blockY = 2, k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 512;
    k.correlationId = corr;
    k.name = name;
    k.queued = start - 300;
  }
  void add_kernel(Buffer& b, uint64_t start, uint64_t end, uint32_t corr, const char* name) {
    if (cuda13_) fill_kernel(b.add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), start, end, corr, name);
    else fill_kernel(b.add<CUpti_ActivityKernel9>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), start, end, corr, name);
  }

  bool cuda13_ = false;
};

TEST_F(DecoderWalk, KernelFieldsLandWhereTheTraceWantsThem) {
  Buffer b;
  static const char kName[] = "_Z9fake_gemmPKfS0_Pfi";
  add_kernel(b, 1000000, 1005000, 42, kName);
  std::size_t n = 0;
  const auto out = walk(b, &n);
  ASSERT_EQ(n, 1u);
  ASSERT_EQ(out[0].outcome, DecodeOutcome::event);
  const DeviceEvent& e = out[0].event;
  EXPECT_EQ(e.kind, DeviceEventKind::kernel);
  EXPECT_EQ(e.start_ns, 1000000);
  EXPECT_EQ(e.end_ns, 1005000);
  EXPECT_EQ(e.correlation, 42u);
  EXPECT_EQ(e.device, 1u);
  EXPECT_EQ(e.context, 2u);
  EXPECT_EQ(e.stream, 7u);
  EXPECT_EQ(e.grid[0], 4);
  EXPECT_EQ(e.grid[1], 5);
  EXPECT_EQ(e.grid[2], 6);
  EXPECT_EQ(e.block[0], 128);
  EXPECT_EQ(e.block[1], 2);
  EXPECT_EQ(e.block[2], 1);
  EXPECT_EQ(e.registers, 40u);
  EXPECT_EQ(e.shared_memory, 1536);
  EXPECT_EQ(e.extra, 1000000u - 300u);  // queued
  EXPECT_EQ(out[0].kernel_name, kName);
}

TEST_F(DecoderWalk, EveryKindInOneBufferWalksInOrder) {
  Buffer b;
  add_kernel(b, 100, 200, 1, "k");
  auto& m = b.add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 4096;
  m.start = 300, m.end = 400, m.deviceId = 0, m.contextId = 1, m.streamId = 13, m.correlationId = 2;
  auto& p = b.add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.bytes = 1 << 20, p.start = 500, p.end = 700, p.deviceId = 1, p.streamId = 21, p.correlationId = 3;
  auto& s = b.add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s.bytes = 64, s.start = 800, s.end = 810, s.streamId = 7, s.correlationId = 4;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  auto& r = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  r.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  r.start = 50, r.end = 90, r.processId = 1234, r.threadId = 0xabcdef01u, r.correlationId = 1;
  auto& d = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  d.cbid = 307;  // cuLaunchKernel
  d.start = 60, d.end = 80, d.processId = 1234, d.threadId = 77, d.correlationId = 5;
  auto& x = b.add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, x.externalId = 99, x.correlationId = 1;
  auto& k0 = b.add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  k0.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, k0.externalId = 5, k0.correlationId = 1;
  auto& y = b.add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  y.start = 900, y.end = 950, y.correlationId = 6, y.contextId = 1, y.streamId = 7;
  auto& o = b.add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, o.start = 960, o.end = 990;

  std::size_t n = 0;
  const auto out = walk(b, &n);
  ASSERT_EQ(n, 10u) << "CUPTI walked a different number of records: the layout differs";
  EXPECT_EQ(out[0].event.kind, DeviceEventKind::kernel);

  EXPECT_EQ(out[1].event.kind, DeviceEventKind::memcpy);
  EXPECT_EQ(out[1].event.extra, 4096u);
  EXPECT_EQ(out[1].event.stream, 13u);
  EXPECT_EQ(out[1].event.copy[0], CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(out[1].event.copy[1], CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  EXPECT_EQ(out[1].event.copy[2], CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(out[1].event.correlation, 2u);

  EXPECT_EQ(out[2].event.kind, DeviceEventKind::memcpy);
  EXPECT_EQ(out[2].event.copy[0], CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
  EXPECT_EQ(out[2].event.extra, 1u << 20);
  EXPECT_EQ(out[2].event.device, 1u);
  EXPECT_EQ(out[2].event.stream, 21u);
  EXPECT_EQ(out[2].event.start_ns, 500);

  EXPECT_EQ(out[3].event.kind, DeviceEventKind::memset);
  EXPECT_EQ(out[3].event.extra, 64u);
  EXPECT_EQ(out[3].event.copy[1], CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(out[3].event.correlation, 4u);

  EXPECT_EQ(out[4].event.kind, DeviceEventKind::runtime);
  EXPECT_EQ(out[4].event.context, static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(out[4].event.device, 1234u);      // process id
  EXPECT_EQ(out[4].event.stream, 0xabcdef01u);  // CUPTI thread id, resolved by the join
  EXPECT_EQ(out[4].event.start_ns, 50);
  EXPECT_EQ(out[4].event.end_ns, 90);

  EXPECT_EQ(out[5].event.kind, DeviceEventKind::driver);
  EXPECT_EQ(out[5].event.context, 307u);

  EXPECT_EQ(out[6].outcome, DecodeOutcome::correlation);
  EXPECT_EQ(out[6].corr_correlation, 1u);
  EXPECT_EQ(out[6].corr_external, 99u);
  // Kineto's kinds are not ours: skipped, never mistaken for our ids.
  EXPECT_EQ(out[7].outcome, DecodeOutcome::skipped);

  EXPECT_EQ(out[8].event.kind, DeviceEventKind::sync);
  EXPECT_EQ(out[8].event.stream, 7u);
  EXPECT_EQ(out[8].event.correlation, 6u);
  EXPECT_EQ(out[8].event.name, static_cast<uint32_t>(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE));

  EXPECT_EQ(out[9].event.kind, DeviceEventKind::overhead);
  EXPECT_EQ(out[9].event.start_ns, 960);
}

TEST_F(DecoderWalk, ZeroAndInvertedTimestampsAreDroppedAndCounted) {
  Buffer b;
  add_kernel(b, 0, 100, 1, "k");        // never started
  add_kernel(b, 500, 400, 2, "k");      // inverted
  add_kernel(b, 500, 500, 3, "k");      // zero length is fine
  auto& r = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  r.start = 10, r.end = 0, r.correlationId = 4;  // unfinished call
  auto& m = b.add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.start = 0, m.end = 0, m.correlationId = 5;
  const auto out = walk(b);
  ASSERT_EQ(out.size(), 5u);
  std::size_t invalid = 0;
  for (const auto& d : out) invalid += d.outcome == DecodeOutcome::invalid;
  EXPECT_EQ(invalid, 4u);
  EXPECT_EQ(out[2].outcome, DecodeOutcome::event);
  EXPECT_EQ(out[2].event.correlation, 3u);
}

TEST_F(DecoderWalk, RecordSizesFollowTheLoadedVersion) {
  // Two kernels then a runtime record: if the kernel size were another
  // version's, CUPTI would find the runtime record at the wrong place.
  Buffer b;
  add_kernel(b, 100, 200, 1, "a");
  add_kernel(b, 300, 400, 2, "b");
  auto& r = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  r.start = 10, r.end = 20, r.correlationId = 3, r.cbid = 211;
  std::size_t n = 0;
  const auto out = walk(b, &n);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(out[1].event.correlation, 2u);
  EXPECT_EQ(out[2].event.kind, DeviceEventKind::runtime);
  EXPECT_EQ(out[2].event.correlation, 3u);
  RecordProperty("cupti_api_version", std::to_string(RealCupti::get().api_version));
  RecordProperty("kernel_record_bytes", cuda13_ ? sizeof(CUpti_ActivityKernel10) : sizeof(CUpti_ActivityKernel9));
}

TEST(StripVersionSuffix, OnlyATrailingVersionGoes) {
  EXPECT_EQ(strip_version_suffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_version_suffix("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
  EXPECT_EQ(strip_version_suffix("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(strip_version_suffix("cuLaunchKernelEx_ptsz"), "cuLaunchKernelEx_ptsz");
  EXPECT_EQ(strip_version_suffix("x_v"), "x_v");
  EXPECT_EQ(strip_version_suffix("a_v2b"), "a_v2b");
}

}  // namespace
}  // namespace chakrashim::collector
