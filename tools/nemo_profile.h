// A NeMo/Hydra YAML's `chakra_profile` section (NeMo's ModelPT block: at the
// top, or under `model:`), turned into chakrashim's variables, for
// `chakra-run --nemo-config FILE` (issue #51). Pure: text in, assignments or
// one line out.
//
// Only what such a section holds is read: block mappings of scalars by
// indentation, comments, quoted strings. An OmegaConf interpolation
// (`${...}`) cannot be resolved outside the job: refused, naming the key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::tools {

struct NemoProfile {
  std::string error;   // one line; empty when taken
  std::string where;   // "chakra_profile" or "model.chakra_profile"
  bool enabled = false;  // NeMo's own capture is on as well
  // CHAKRA_* name and value, in the order of NeMo's keys.
  std::vector<std::pair<std::string, std::string>> assignments;
  // What was taken, for one line: "start_step 10 -> CHAKRA_START_STEP=10, ..."
  std::string said;
};

NemoProfile nemo_profile(std::string_view yaml_text);

}  // namespace chakrashim::tools
