/* libcuda.so.1 (fake_cuda/): a test double of the few CUDA driver entry
 * points the collector calls (collector/src/cuda_driver.cpp), so that the
 * device sync before CUPTI's flush and deviceProperties can be exercised on
 * a machine without a GPU. Test-only; never installed. A job loads it ahead
 * of chakrashim (LD_PRELOAD), and the collector finds it by its soname.
 *
 * One device ("Fake GPU 0"), whose primary context is active. Every call
 * succeeds. FAKE_CUDA_SYNC=hang makes cuCtxSynchronize block for good, as a
 * rank stuck in a collective would; FAKE_CUDA_STATS=PATH writes
 * {"syncs_started": N} there at each sync's start. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
#define API __attribute__((visibility("default")))

static int g_syncs;

API CUresult cuInit(unsigned flags) { (void)flags; return 0; }
API CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
API CUresult cuDeviceGet(CUdevice* d, int ordinal) { *d = ordinal; return 0; }
API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned* flags, int* active) {
  (void)d;
  *flags = 0;
  *active = 1;
  return 0;
}
API CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  (void)d;
  *c = (CUcontext)(size_t)0x1000;
  return 0;
}
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return 0; }
API CUresult cuCtxPushCurrent_v2(CUcontext c) { (void)c; return 0; }
API CUresult cuCtxPopCurrent_v2(CUcontext* c) {
  if (c) *c = (CUcontext)(size_t)0x1000;
  return 0;
}
API CUresult cuCtxSynchronize(void) {
  const char* stats = getenv("FAKE_CUDA_STATS");
  ++g_syncs;
  if (stats) {
    FILE* f = fopen(stats, "w");
    if (f) {
      fprintf(f, "{\"syncs_started\": %d}\n", g_syncs);
      fclose(f);
    }
  }
  const char* mode = getenv("FAKE_CUDA_SYNC");
  if (mode && strcmp(mode, "hang") == 0) {
    for (;;) pause();
  }
  return 0;
}
API CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  snprintf(name, (size_t)len, "Fake GPU %d", d);
  return 0;
}
API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  (void)d;
  *bytes = (size_t)80 << 30;
  return 0;
}
API CUresult cuDeviceGetAttribute(int* v, int attribute, CUdevice d) {
  (void)d;
  *v = attribute < 1000 ? 8 : 0;
  return 0;
}
