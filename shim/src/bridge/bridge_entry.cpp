// The torch bridge's one exported entry: it checks that the libtorch in the
// process is the one this bridge was built against, then starts the capture
// (the step callback, and step 0).
#include <dlfcn.h>

#include <ATen/record_function.h>

#include <string>

#include "bridge/bridge_log.h"
#include "bridge/capture.h"
#include "chakrashim/bridge_abi.h"
#include "elf/build_id.h"

namespace {

// Set by CMake from the libtorch this bridge was compiled and linked with.
// Only this file sees them, so that the bridge's other objects are built
// once for both the bridge and the test's mismatched copy (shim/CMakeLists.txt).
constexpr const char* kBuiltTorchVersion = CHAKRA_TORCH_VERSION;
constexpr const char* kBuiltTorchBuildId = CHAKRA_TORCH_BUILD_ID;  // "" if it had none

struct LoadedTorch {
  std::string path;
  std::string build_id;
};

// The libtorch_cpu that this bridge's references were bound to: the dynamic
// linker matched our DT_NEEDED by soname against the copy Python loaded.
LoadedTorch loaded_torch() {
  LoadedTorch t;
  Dl_info info;
  const auto symbol = reinterpret_cast<void*>(&at::addGlobalCallback);
  if (::dladdr(symbol, &info) != 0 && info.dli_fname) t.path = info.dli_fname;
  if (!t.path.empty()) t.build_id = chakrashim::elf::loaded_build_id(t.path).value_or("");
  return t;
}

void say(const chakrashim_core_api* core, int level, const std::string& line) {
  if (core && core->log) core->log(level, line.c_str());
}

}  // namespace

namespace chakrashim::bridge {
const char* built_torch_version() { return kBuiltTorchVersion; }
}  // namespace chakrashim::bridge

extern "C" __attribute__((visibility("default"))) int chakrashim_bridge_attach(
    const chakrashim_core_api* core, chakrashim_bridge_api* out) {
  if (!core || core->abi_version != CHAKRASHIM_ABI_VERSION ||
      core->struct_size < sizeof(chakrashim_core_api) || !core->config) {
    return CHAKRASHIM_ATTACH_ABI_MISMATCH;
  }
  chakrashim::bridge::set_core_api(core);
  if (out) *out = {CHAKRASHIM_ABI_VERSION, sizeof(chakrashim_bridge_api), kBuiltTorchVersion};
  try {
    const LoadedTorch torch = loaded_torch();
    const std::string built = kBuiltTorchBuildId;
    if (!built.empty() && torch.build_id != built) {
      say(core, CHAKRASHIM_LOG_ERROR,
          "this chakrashim was built for torch " + std::string(kBuiltTorchVersion) +
              " (libtorch_cpu build-id " + built + "), but the job loaded " +
              (torch.path.empty() ? std::string("an unknown libtorch") : torch.path) +
              " (build-id " + (torch.build_id.empty() ? "none" : torch.build_id) +
              "); rebuild chakrashim against the job's torch. Capture is off; the job runs on");
      return CHAKRASHIM_ATTACH_TORCH_MISMATCH;
    }
    say(core, CHAKRASHIM_LOG_DEBUG,
        "bridge for torch " + std::string(kBuiltTorchVersion) + " attached to " + torch.path);
    chakrashim::bridge::Capture::instance().attach(*core->config);
    return CHAKRASHIM_ATTACH_OK;
  } catch (...) {
    say(core, CHAKRASHIM_LOG_ERROR, "the torch bridge failed to attach; capture is off");
    return CHAKRASHIM_ATTACH_FAILED;
  }
}
