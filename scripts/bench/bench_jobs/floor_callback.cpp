// The least a recorder built on RecordFunction callbacks can cost: global
// callbacks registered as chakrashim registers its own, whose start and end
// do nothing. floor_on(0): one, as the op-span callback (ids, no inputs);
// floor_on(1): also the native ET recorder's two (a start with inputs, an
// end with outputs); floor_on(2): a single one with inputs and outputs, the
// least any ET recorder on RecordFunction needs. Loaded by mlp_loop.py through ctypes (--floor);
// bench_spans.py --instructions counts what torch's RecordFunction machinery
// alone adds per op once such callbacks are on: a floor under torch.profiler
// and under chakrashim's spans (0), and under spans with the native ET (1).
#include <ATen/record_function.h>

#include <vector>

#include "bridge/record_scopes.h"  // shim/src, on the include path (bench_spans.py)

namespace {

// One benchmark process, one set of callbacks.
std::vector<at::CallbackHandle> g_handles;

std::unique_ptr<at::ObserverContext> start(const at::RecordFunction&) { return nullptr; }
void end(const at::RecordFunction&, at::ObserverContext*) {}

// The scopes chakrashim's op callback observes (bridge/record_scopes.h:
// every scope a server build of torch raises): a callback on the four
// mobile-only ones too costs torch more at every backward node.
const auto& kScopes = chakrashim::bridge::traced_scopes();
}  // namespace

extern "C" void floor_on(int mode) {
  if (!g_handles.empty()) return;
  auto first = at::RecordFunctionCallback(&start, &end).needsIds(true).scopes(kScopes);
  // Mode 2: the least any ET recorder on RecordFunction needs, one callback
  // that sees inputs and outputs.
  if (mode == 2) first.needsInputs(true).needsOutputs(true);
  g_handles.push_back(at::addGlobalCallback(first));
  if (mode == 1) {
    g_handles.push_back(
        at::addGlobalCallback(at::RecordFunctionCallback(&start).needsInputs(true).needsIds(true).scopes(kScopes)));
    g_handles.push_back(at::addGlobalCallback(
        at::RecordFunctionCallback(&start, &end).needsOutputs(true).needsIds(true).scopes(kScopes)));
  }
}

extern "C" void floor_off() {
  for (const auto h : g_handles) at::removeCallback(h);
  g_handles.clear();
}
