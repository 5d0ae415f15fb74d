// Where to look for libcupti, in order (pure: tested without a filesystem).
//   1. CHAKRA_CUPTI_LIB, when set: that file and nothing else;
//   2. a libcupti already in the process (torch's, loaded with
//      libtorch_cuda): RTLD_NOLOAD by soname;
//   3. the one beside torch's bundled NVIDIA libraries (site-packages/
//      nvidia/cu13/lib, nvidia/cuda_cupti/lib);
//   4. the CUDA toolkit's (CUDA_HOME, CUDA_PATH, /usr/local/cuda), in
//      extras/CUPTI/lib64 and lib64;
//   5. the bare sonames, through the loader's own search path.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace chakrashim::collector {

struct CuptiCandidate {
  std::string path;
  bool noload = false;  // only if already loaded (RTLD_NOLOAD)
};

struct LocateInput {
  std::optional<std::string> override_path;  // CHAKRA_CUPTI_LIB
  std::optional<std::string> torch_lib_dir;  // the folder of the loaded libtorch_cpu.so
  std::optional<std::string> cuda_home;      // CUDA_HOME, else CUDA_PATH
};

// The sonames we accept, newest first.
const std::vector<std::string>& cupti_sonames();

std::vector<CuptiCandidate> cupti_candidates(const LocateInput& in);

}  // namespace chakrashim::collector
