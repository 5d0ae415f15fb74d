// The entry of libchakrashim_core.so, and nothing else: the preload stub
// calls it once, in a Python process with CHAKRA_PROFILE set, and then
// forwards every dlopen to the Session (darshan's init-finalize habit).
#include "preload/session.h"
#include "preload/stub_abi.h"

namespace {

void core_on_dlopen() {
  // The Session never throws out of on_dlopen; this guard keeps a C caller
  // safe if that ever changes.
  try {
    chakrashim::preload::Session::instance().on_dlopen();
  } catch (...) {
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) chakrashim_core_dlopen_fn chakrashim_core_start(
    const chakrashim_stub_view* view) {
  if (!view || view->abi_version != CHAKRASHIM_STUB_ABI_VERSION ||
      view->size < sizeof(chakrashim_stub_view))
    return nullptr;  // built apart from its stub: stay inert rather than guess
  using chakrashim::preload::Session;
  using chakrashim::preload::State;
  try {
    Session& session = Session::instance();
    session.start(*view);
    const State s = session.state();
    return s == State::watching || s == State::reporting ? &core_on_dlopen : nullptr;
  } catch (...) {
    // Never harm the job: an allocation failure here leaves us inert.
    return nullptr;
  }
}
