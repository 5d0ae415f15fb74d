// A scratch file of node texts, for an ET whose nodes are not in id order:
// texts go in as they are read and come out by file position, in any order.
// The file is unlinked as soon as it is created, so nothing is left behind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "files/byte_sink.h"

namespace chakrashim::tools::link {

class NodeSpool {
 public:
  explicit NodeSpool(const std::string& dir);
  ~NodeSpool();
  NodeSpool(const NodeSpool&) = delete;
  NodeSpool& operator=(const NodeSpool&) = delete;

  const std::string& error() const { return error_; }
  bool add(std::string_view text);  // the next file position's text
  // Copies the texts to `sink` in the order of `positions`, joined by ",\n".
  bool copy_out(const std::vector<std::uint32_t>& positions, files::ByteSink& sink);

 private:
  bool fail(const char* step);

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::vector<std::uint64_t> offsets_;  // start of each text; one more at the end
  std::string buffer_;
  std::string error_;
};

}  // namespace chakrashim::tools::link
