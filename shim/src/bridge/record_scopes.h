// The RecordFunction scopes chakrashim's op callbacks observe.
#pragma once

#include <functional>
#include <unordered_set>

#include <ATen/record_function.h>

namespace chakrashim::bridge {

// Every scope a server build of torch raises. The four left out
// (KERNEL_FUNCTION_DTYPE, CUSTOM_CLASS, BUILD_FEATURE, LITE_INTERPRETER)
// are raised only by mobile and selective-build tracer builds
// (ENABLE_RECORD_KERNEL_FUNCTION_DTYPE, the lite interpreter). Why not
// all: the autograd engine restores each backward node's thread-local
// state, and torch then rebuilds its callback cache for every scope; a
// scope with a callback costs an allocation and copies there, one without
// neither: about 200 instructions an op of the window on an MLP's step
// (issue #52, docs/cost.md).
inline const std::unordered_set<at::RecordScope, std::hash<at::RecordScope>>& traced_scopes() {
  // Immutable once built (a function-local static: thread-safe init).
  static const std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> scopes{
      at::RecordScope::FUNCTION,          at::RecordScope::BACKWARD_FUNCTION,
      at::RecordScope::TORCHSCRIPT_FUNCTION, at::RecordScope::USER_SCOPE,
      at::RecordScope::STATIC_RUNTIME_OP, at::RecordScope::STATIC_RUNTIME_MODEL};
  return scopes;
}

}  // namespace chakrashim::bridge
