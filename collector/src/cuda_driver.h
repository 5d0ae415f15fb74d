// The CUDA driver, only if the job already loaded it (RTLD_NOLOAD): we never
// initialize CUDA in a process. Used to synchronize devices before CUPTI's
// flush (which does not) and to read deviceProperties.
#pragma once

#include <string>
#include <vector>

namespace chakrashim::collector {

class CudaDriver {
 public:
  // The loaded libcuda.so.1, or an empty object when there is none.
  static CudaDriver loaded();
  bool present() const { return handle_ != nullptr; }
  // Every device with an active primary context (or the calling thread's
  // current context): waits for its work to finish. False if any failed.
  bool synchronize() const;
  // One JSON object per device, with the fields Kineto writes.
  std::vector<std::string> device_properties_json() const;

 private:
  void* handle_ = nullptr;
};

}  // namespace chakrashim::collector
