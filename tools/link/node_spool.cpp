#include "link/node_spool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace chakrashim::tools::link {

namespace {
constexpr std::size_t kWriteBuffer = 1 << 20;
}

NodeSpool::NodeSpool(const std::string& dir) {
  std::string path = (dir.empty() ? std::string("/tmp") : dir) + "/.chakrashim-link-spool-XXXXXX";
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0) {
    fail("create");
    return;
  }
  ::unlink(path.c_str());
  offsets_.push_back(0);
}

NodeSpool::~NodeSpool() {
  if (fd_ >= 0) ::close(fd_);
}

bool NodeSpool::fail(const char* step) {
  if (error_.empty()) error_ = std::string("spool file: ") + step + ": " + strerror(errno);
  return false;
}

bool NodeSpool::add(std::string_view text) {
  if (fd_ < 0) return false;
  buffer_.append(text);
  size_ += text.size();
  offsets_.push_back(size_);
  if (buffer_.size() < kWriteBuffer) return true;
  const bool ok = ::write(fd_, buffer_.data(), buffer_.size()) == static_cast<ssize_t>(buffer_.size());
  buffer_.clear();
  return ok || fail("write");
}

bool NodeSpool::copy_out(const std::vector<std::uint32_t>& positions, files::ByteSink& sink) {
  if (fd_ < 0) return false;
  if (!buffer_.empty()) {
    if (::write(fd_, buffer_.data(), buffer_.size()) != static_cast<ssize_t>(buffer_.size())) return fail("write");
    buffer_.clear();
  }
  std::string text;
  bool first = true;
  for (const std::uint32_t p : positions) {
    const std::uint64_t begin = offsets_[p], end = offsets_[p + 1];
    text.resize(end - begin);
    if (::pread(fd_, text.data(), text.size(), static_cast<off_t>(begin)) != static_cast<ssize_t>(text.size()))
      return fail("read");
    if (!first && !sink.write(",\n")) return false;
    first = false;
    if (!sink.write(text)) return false;
  }
  return true;
}

}  // namespace chakrashim::tools::link
