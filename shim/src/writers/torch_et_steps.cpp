#include "writers/torch_et_steps.h"

#include <algorithm>
#include <functional>

#include "chakrashim/trace_schema.h"

namespace chakrashim::writers {

void TorchEtStepRenamer::feed(std::string_view bytes) {
  pending_.append(bytes);
  // Horspool: std::string::find stops at every '"', a JSON file's most
  // frequent byte (about 3x slower on torch's ETs).
  static const std::boyer_moore_horspool_searcher searcher(kPattern.begin(), kPattern.end());
  std::size_t done = 0;  // bytes of pending_ written
  for (;;) {
    const auto it = std::search(pending_.cbegin() + static_cast<std::ptrdiff_t>(done), pending_.cend(), searcher);
    if (it == pending_.cend()) break;
    const std::size_t name = static_cast<std::size_t>(it - pending_.cbegin()) + kNameOffset;
    emit(std::string_view(pending_).substr(done, name - done));
    emit(schema::kJobStepPrefix);
    ++renamed_;
    done = name;
  }
  // The last kPattern.size() - 1 bytes may begin a match that the next
  // bytes complete: they wait.
  const std::size_t keep = kPattern.size() - 1;
  const std::size_t upto = std::max(done, pending_.size() > keep ? pending_.size() - keep : std::size_t{0});
  emit(std::string_view(pending_).substr(done, upto - done));
  pending_.erase(0, upto);
}

void TorchEtStepRenamer::finish() {
  emit(pending_);
  pending_.clear();
}

}  // namespace chakrashim::writers
