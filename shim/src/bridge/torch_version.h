// The torch the bridge is compiled against, for adapting to API changes at
// compile time (never at run time): CHAKRA_TORCH_AT_LEAST(2, 7) in an #if,
// with a comment naming the versions on each side (docs/compat.md).
#pragma once

#include <torch/version.h>

#define CHAKRA_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||         \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
