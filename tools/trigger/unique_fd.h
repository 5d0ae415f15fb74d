// A file descriptor closed when it goes out of scope, so that every early
// return of the trigger's I/O closes what it opened.
#pragma once

#include <unistd.h>

namespace chakrashim::tools::trigger {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Closes now and says whether close succeeded: on NFS a write error can
  // surface only at close.
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return fd < 0 || ::close(fd) == 0;
  }

 private:
  int fd_;
};

}  // namespace chakrashim::tools::trigger
