#include "cupti_locate.h"

namespace chakrashim::collector {

const std::vector<std::string>& cupti_sonames() {
  static const std::vector<std::string> names{"libcupti.so.13", "libcupti.so.12"};
  return names;
}

namespace {
std::string parent(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const auto slash = d.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : d.substr(0, slash);
}
}  // namespace

std::vector<CuptiCandidate> cupti_candidates(const LocateInput& in) {
  std::vector<CuptiCandidate> out;
  if (in.override_path) {
    out.push_back({*in.override_path, false});
    return out;
  }
  for (const auto& so : cupti_sonames()) out.push_back({so, true});
  if (in.torch_lib_dir) {
    // site-packages/torch/lib -> site-packages/nvidia/...
    const std::string site = parent(parent(*in.torch_lib_dir));
    for (const char* sub : {"/nvidia/cu13/lib/", "/nvidia/cuda_cupti/lib/"})
      for (const auto& so : cupti_sonames()) out.push_back({site + sub + so, false});
  }
  std::vector<std::string> homes;
  if (in.cuda_home && !in.cuda_home->empty()) homes.push_back(*in.cuda_home);
  homes.push_back("/usr/local/cuda");
  for (const auto& home : homes)
    for (const char* sub : {"/extras/CUPTI/lib64/", "/lib64/", "/lib/"})
      for (const auto& so : cupti_sonames()) out.push_back({home + sub + so, false});
  for (const auto& so : cupti_sonames()) out.push_back({so, false});
  return out;
}

}  // namespace chakrashim::collector
