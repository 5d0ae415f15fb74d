// libchakra_marker_delay.so: a test seam for the hand-over of step counting
// from our RecordFunction callback to torch.optim's step hooks. Preloaded
// in front of chakrashim, it makes at::RecordFunction::before() sleep
// CHAKRASHIM_TEST_MARKER_DELAY_MS milliseconds for the first record whose
// name starts with CHAKRASHIM_TEST_MARKER_DELAY_PREFIX (default
// "Optimizer.step#SGD"). A record takes the list of callbacks it runs when
// it is made, and before() runs their start functions: the sleep lies
// between the two, with the GIL released (torch.ops calls release it), the
// moment at which the hooks' registrar can put the hooks in and take our
// callback out while this record still runs it. On a loaded machine that
// moment is microseconds wide and came by chance once (issue #53); here it
// is half a second. Says on stderr that it held a record, so that a test
// knows the seam took (a libtorch that binds before() inside itself would
// never call it). Test-only: never installed.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <variant>

namespace c10 {
struct FunctionSchema;
}

namespace {

// at::RecordFunction::before's parameter, as libtorch declares it (torch 2.x).
using Name = std::variant<std::string_view, std::reference_wrapper<const c10::FunctionSchema>>;
// A non-virtual member function: `this` comes first.
using BeforeFn = void (*)(void*, Name, long);

// Its mangled name, once: our definition below takes it (an asm label needs
// a literal), and find_real() looks the real one up by it.
#define CHAKRA_RECORD_FUNCTION_BEFORE                                                         \
  "_ZN2at14RecordFunction6beforeESt7variantIJSt17basic_string_viewIcSt11char_traitsIcEESt17" \
  "reference_wrapperIKN3c1014FunctionSchemaEEEEl"
constexpr const char* kBefore = CHAKRA_RECORD_FUNCTION_BEFORE;

std::atomic<bool> g_held{false};

// libtorch_cpu is loaded in Python's local scope (an extension module's
// dependency), where RTLD_NEXT does not look: asked by its soname.
BeforeFn find_real() {
  void* f = ::dlsym(RTLD_NEXT, kBefore);
  if (!f) {
    if (void* torch = ::dlopen("libtorch_cpu.so", RTLD_LAZY | RTLD_NOLOAD)) f = ::dlsym(torch, kBefore);
  }
  if (!f) std::fprintf(stderr, "marker_delay: no at::RecordFunction::before in this process\n");
  return reinterpret_cast<BeforeFn>(f);
}

}  // namespace

extern "C" void chakra_marker_delay_before(void* self, Name name, long sequence_nr) __asm__(
    CHAKRA_RECORD_FUNCTION_BEFORE);

extern "C" void chakra_marker_delay_before(void* self, Name name, long sequence_nr) {
  static const BeforeFn real = find_real();
  static const long delay = [] {
    const char* ms = std::getenv("CHAKRASHIM_TEST_MARKER_DELAY_MS");
    return ms ? std::strtol(ms, nullptr, 10) : 0L;
  }();
  static const std::string_view prefix = [] {
    const char* p = std::getenv("CHAKRASHIM_TEST_MARKER_DELAY_PREFIX");
    return std::string_view(p && *p ? p : "Optimizer.step#SGD");
  }();
  const std::string_view* text = std::get_if<std::string_view>(&name);
  if (delay > 0 && text && !g_held.load() && text->substr(0, prefix.size()) == prefix) {
    if (!g_held.exchange(true)) {
      std::fprintf(stderr, "marker_delay: holding %.*s for %ld ms after it took its callbacks\n",
                   static_cast<int>(text->size()), text->data(), delay);
      ::usleep(static_cast<useconds_t>(delay) * 1000);
    }
  }
  if (real) real(self, name, sequence_nr);
}
