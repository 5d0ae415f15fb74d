// The lifecycle entry points of libchakrashim.so, and nothing else: each is
// one call into the Session (darshan's init-finalize habit).
#include "preload/os_seams.h"
#include "preload/session.h"

namespace {

__attribute__((constructor)) void chakrashim_load() {
  // Most processes that inherit the preload have CHAKRA_PROFILE unset; they
  // stop here, before anything allocates. The Session stays not_started.
  if (!chakrashim::preload::profile_variable_present()) return;
  try {
    chakrashim::preload::Session::instance().start();
  } catch (...) {
    // Never harm the job: an allocation failure at load leaves us inert.
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const char* chakrashim_version() {
  return CHAKRASHIM_VERSION;
}
