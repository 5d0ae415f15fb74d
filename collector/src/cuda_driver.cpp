#include "cuda_driver.h"

#include <dlfcn.h>

#include <cuda.h>
#include <nlohmann/json.hpp>

namespace chakrashim::collector {

namespace {
template <typename F>
F sym(void* h, const char* name) {
  return h ? reinterpret_cast<F>(::dlsym(h, name)) : nullptr;
}
}  // namespace

CudaDriver CudaDriver::loaded() {
  CudaDriver d;
  d.handle_ = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  return d;
}

bool CudaDriver::synchronize() const {
  auto ctx_sync = sym<CUresult (*)()>(handle_, "cuCtxSynchronize");
  auto count = sym<CUresult (*)(int*)>(handle_, "cuDeviceGetCount");
  auto get = sym<CUresult (*)(CUdevice*, int)>(handle_, "cuDeviceGet");
  auto state = sym<CUresult (*)(CUdevice, unsigned*, int*)>(handle_, "cuDevicePrimaryCtxGetState");
  auto retain = sym<CUresult (*)(CUcontext*, CUdevice)>(handle_, "cuDevicePrimaryCtxRetain");
  auto release = sym<CUresult (*)(CUdevice)>(handle_, "cuDevicePrimaryCtxRelease_v2");
  auto push = sym<CUresult (*)(CUcontext)>(handle_, "cuCtxPushCurrent_v2");
  auto pop = sym<CUresult (*)(CUcontext*)>(handle_, "cuCtxPopCurrent_v2");
  if (!ctx_sync || !count || !get || !state || !retain || !release || !push || !pop) return false;
  // Every device the job uses: torch works in primary contexts, on several
  // devices from one process in some jobs.
  int n = 0;
  if (count(&n) != CUDA_SUCCESS) return false;
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    CUdevice dev = 0;
    unsigned flags = 0;
    int active = 0;
    if (get(&dev, i) != CUDA_SUCCESS || state(dev, &flags, &active) != CUDA_SUCCESS || !active)
      continue;
    CUcontext ctx = nullptr;
    if (retain(&ctx, dev) != CUDA_SUCCESS) {
      ok = false;
      continue;
    }
    if (push(ctx) == CUDA_SUCCESS) {
      ok = ctx_sync() == CUDA_SUCCESS && ok;
      CUcontext popped = nullptr;
      pop(&popped);
    } else {
      ok = false;
    }
    release(dev);
  }
  return ok;
}

std::vector<std::string> CudaDriver::device_properties_json() const {
  std::vector<std::string> out;
  auto count = sym<CUresult (*)(int*)>(handle_, "cuDeviceGetCount");
  auto get = sym<CUresult (*)(CUdevice*, int)>(handle_, "cuDeviceGet");
  auto name = sym<CUresult (*)(char*, int, CUdevice)>(handle_, "cuDeviceGetName");
  auto mem = sym<CUresult (*)(size_t*, CUdevice)>(handle_, "cuDeviceTotalMem_v2");
  auto attr = sym<CUresult (*)(int*, CUdevice_attribute, CUdevice)>(handle_, "cuDeviceGetAttribute");
  int n = 0;
  if (!count || !get || !name || !mem || !attr || count(&n) != CUDA_SUCCESS) return out;
  for (int i = 0; i < n; ++i) {
    CUdevice dev = 0;
    if (get(&dev, i) != CUDA_SUCCESS) continue;
    char buf[256] = {0};
    size_t total = 0;
    name(buf, sizeof buf - 1, dev);
    mem(&total, dev);
    auto a = [&](CUdevice_attribute which) {
      int v = 0;
      attr(&v, which, dev);
      return v;
    };
    // Kineto's field names (libkineto CudaDeviceProperties.cpp).
    nlohmann::ordered_json j;
    j["id"] = i;
    j["name"] = buf;
    j["totalGlobalMem"] = total;
    j["computeMajor"] = a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    j["computeMinor"] = a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    j["maxThreadsPerBlock"] = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    j["maxThreadsPerMultiprocessor"] = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    j["regsPerBlock"] = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    j["regsPerMultiprocessor"] = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    j["warpSize"] = a(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    j["sharedMemPerBlock"] = a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    j["sharedMemPerMultiprocessor"] = a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    j["numSms"] = a(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    j["sharedMemPerBlockOptin"] = a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    out.push_back(j.dump());
  }
  return out;
}

}  // namespace chakrashim::collector
