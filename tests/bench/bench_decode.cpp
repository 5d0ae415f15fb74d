// The collector's decode and write path on synthetic CUPTI buffers:
//   chakrashim_bench_decode [--cupti LIB] [--kernels N]
// N kernel records, each with its runtime launch and external-correlation
// record (what a training step makes), in 8 MiB buffers like the
// collector's. Prints, side by side:
//   - CUPTI's own walk (cuptiActivityGetNextRecord alone): the floor;
//   - walk + decode + name interning (BufferDecoder), records/s;
//   - join + Kineto JSON writing to a file, records/s and MB/s;
//   - memory: resident growth per decoded event and the process peak.
// Numbers, never a pass/fail: scripts/bench.sh prints them.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>

#include "buffer_decoder.h"
#include "chakrashim/collector.h"
#include "files/byte_sink.h"
#include "writers/kineto_trace_writer.h"

using namespace chakrashim;

namespace {

long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Writes into a file with plain write(2) calls, as the trace writer's sink does.
class FileSink final : public files::ByteSink {
 public:
  explicit FileSink(const char* path) : f_(std::fopen(path, "wb")) {}
  ~FileSink() override {
    if (f_) std::fclose(f_);
  }
  bool write(std::string_view bytes) override {
    n_ += bytes.size();
    return f_ && std::fwrite(bytes.data(), 1, bytes.size(), f_) == bytes.size();
  }
  bool ok() const override { return f_ != nullptr; }
  std::size_t bytes() const { return n_; }

 private:
  std::FILE* f_;
  std::size_t n_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string lib = CHAKRA_BENCH_CUPTI_LIB;
  long kernels = 1000000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cupti") && i + 1 < argc) lib = argv[++i];
    else if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc) kernels = std::stol(argv[++i]);
    else {
      std::printf("usage: %s [--cupti LIB] [--kernels N]\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "bench_decode: cannot load %s: %s\n", lib.c_str(), ::dlerror());
    return 2;
  }
  auto next = reinterpret_cast<collector::BufferDecoder::NextRecordFn>(::dlsym(h, "cuptiActivityGetNextRecord"));
  auto names = reinterpret_cast<collector::BufferDecoder::CallbackNameFn>(::dlsym(h, "cuptiGetCallbackName"));
  auto version_fn = reinterpret_cast<CUptiResult (*)(uint32_t*)>(::dlsym(h, "cuptiGetVersion"));
  uint32_t version = 0;
  if (!next || !version_fn || version_fn(&version) != CUPTI_SUCCESS || version < collector::kCuda13CuptiApiVersion) {
    std::fprintf(stderr, "bench_decode: %s is not CUDA 13's libcupti\n", lib.c_str());
    return 2;
  }

  // --- build the buffers ---
  static const char* kNames[] = {"_Z9gemm_f32PKfS0_Pfi", "_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT_",
                                 "_Z7softmaxPfi", "_Z9layernormPKfPfi", "_Z4geluPf", "_Z6reducePfS_i",
                                 "_Z5adamwPfS_S_S_f", "_Z4copyPvPKvm"};
  constexpr std::size_t kBuffer = 8u << 20;
  std::vector<std::vector<std::uint64_t>> buffers;
  std::vector<std::size_t> valid;
  std::size_t off = kBuffer;
  const std::size_t rec = sizeof(CUpti_ActivityKernel10) + sizeof(CUpti_ActivityAPI) +
                          sizeof(CUpti_ActivityExternalCorrelation) + 24;
  const std::int64_t t0 = 1716423322416788000;
  for (long i = 0; i < kernels; ++i) {
    if (off + rec > kBuffer) {
      buffers.emplace_back(kBuffer / 8, 0);
      valid.push_back(0);
      off = 0;
    }
    auto* base = reinterpret_cast<std::uint8_t*>(buffers.back().data());
    const std::uint64_t t = static_cast<std::uint64_t>(t0 + i * 10000);
    auto* api = reinterpret_cast<CUpti_ActivityAPI*>(base + off);
    api->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api->start = t, api->end = t + 2000, api->processId = 1, api->threadId = 1;
    api->correlationId = static_cast<uint32_t>(i + 1);
    off += (sizeof(*api) + 7) & ~std::size_t{7};
    auto* x = reinterpret_cast<CUpti_ActivityExternalCorrelation*>(base + off);
    x->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    x->externalId = static_cast<uint64_t>(i / 3 + 1);
    x->correlationId = static_cast<uint32_t>(i + 1);
    off += (sizeof(*x) + 7) & ~std::size_t{7};
    auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(base + off);
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->start = t + 3000, k->end = t + 8000, k->deviceId = 0, k->streamId = 7;
    k->gridX = 128, k->gridY = k->gridZ = 1, k->blockX = 256, k->blockY = k->blockZ = 1;
    k->correlationId = static_cast<uint32_t>(i + 1);
    k->name = kNames[(i / 4) % 8];
    off += (sizeof(*k) + 7) & ~std::size_t{7};
    valid.back() = off;
  }
  const double records = 3.0 * static_cast<double>(kernels);

  // --- CUPTI's walk alone ---
  auto t = std::chrono::steady_clock::now();
  std::size_t walked = 0;
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    CUpti_Activity* r = nullptr;
    while (next(reinterpret_cast<std::uint8_t*>(buffers[b].data()), valid[b], &r) == CUPTI_SUCCESS) ++walked;
  }
  const double walk_s = seconds_since(t);

  // --- walk + decode + intern ---
  const long rss_before = status_kib("VmRSS:");
  collector::BufferDecoder decoder(collector::RecordDecoder(version, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2),
                                   next, names, 0, nullptr);
  t = std::chrono::steady_clock::now();
  for (std::size_t b = 0; b < buffers.size(); ++b)
    decoder.decode(reinterpret_cast<std::uint8_t*>(buffers[b].data()), valid[b]);
  const double decode_s = seconds_since(t);
  const long rss_after = status_kib("VmRSS:");
  DeviceCapture cap = std::move(decoder.capture());
  const std::size_t events = cap.events.size();

  // --- join + write ---
  char path[] = "/tmp/chakrashim-bench-decode-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd >= 0) ::close(fd);
  t = std::chrono::steady_clock::now();
  collector::join_device_capture(cap, {{t0 - 1, t0 + kernels * 10000LL + 1}});
  std::size_t bytes = 0;
  {
    FileSink sink(path);
    writers::KinetoTraceWriter w(sink, writers::base_time_ns(t0));
    w.begin(writers::TraceHeader{});
    for (const auto& e : cap.events) {
      w.device_event(e, cap.names[e.name], 1);
      if (e.flow) w.flow(e, 1);
    }
    w.end(writers::TraceTrailer{});
    bytes = sink.bytes();
  }
  const double write_s = seconds_since(t);
  ::unlink(path);

  std::printf("CUPTI decode (%ld kernel records + their launches and correlations = %.0f records, %zu buffers, CUPTI %u)\n",
              kernels, records, buffers.size(), version);
  std::printf("  %-34s %10.1f M records/s  (%.3f s)\n", "CUPTI's walk alone", walked / walk_s / 1e6, walk_s);
  std::printf("  %-34s %10.1f M records/s  (%.3f s; %.2fx the walk's time; target > 10)\n",
              "walk + decode + names", records / decode_s / 1e6, decode_s, decode_s / walk_s);
  std::printf("  %-34s %10.1f M events/s   (%.3f s, %.1f MB of JSON, %.0f MB/s)\n", "join + Kineto JSON written",
              events / write_s / 1e6, write_s, bytes / 1e6, bytes / 1e6 / write_s);
  std::printf("  %-34s %10.1f bytes/event (decoded %zu events: +%.1f MiB resident; peak %.1f MiB)\n",
              "memory", events ? (rss_after - rss_before) * 1024.0 / events : 0.0, events,
              (rss_after - rss_before) / 1024.0, status_kib("VmHWM:") / 1024.0);
  return walked == static_cast<std::size_t>(records) && events == static_cast<std::size_t>(2 * kernels) ? 0 : 1;
}
