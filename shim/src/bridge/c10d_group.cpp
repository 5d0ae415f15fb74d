#include "bridge/c10d_group.h"

#include "bridge/torch_version.h"

// Torch's own header, where this torch ships it (built with distributed);
// getGroupName and getGroupDesc are torch 2.2's.
#if __has_include(<torch/csrc/distributed/c10d/ProcessGroup.hpp>) && CHAKRA_TORCH_AT_LEAST(2, 2)
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define CHAKRA_C10D_GROUP_NAMES 1
#else
#define CHAKRA_C10D_GROUP_NAMES 0
#endif

namespace chakrashim::bridge {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) continue;
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::vector<std::pair<const char*, std::string>> c10d_group_attrs(const c10::IValue* inputs, std::size_t count) {
#if CHAKRA_C10D_GROUP_NAMES
  for (std::size_t i = 0; i < count; ++i) {
    const c10::IValue& v = inputs[i];
    if (!v.isObject()) continue;
    try {
      const auto type = v.toObjectRef().type();
      if (!type || !type->name() || type->name()->qualifiedName() != "__torch__.torch.classes.c10d.ProcessGroup")
        continue;
      const auto pg = v.toCustomClass<c10d::ProcessGroup>();
      return {{"pg_name", json_string(pg->getGroupName())},
              {"pg_desc", json_string(pg->getGroupDesc())},
              {"pg_size", std::to_string(pg->getSize())}};
    } catch (...) {
      // Not a group this torch can read: the op keeps "<Object>" alone.
    }
    return {};
  }
#else
  (void)inputs, (void)count;
#endif
  return {};
}

}  // namespace chakrashim::bridge
