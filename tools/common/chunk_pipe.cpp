#include "common/chunk_pipe.h"

namespace chakrashim::tools {

ChunkPipe::ChunkPipe(std::size_t chunk_bytes, std::size_t max_chunks)
    : chunk_bytes_(chunk_bytes), max_chunks_(max_chunks) {
  pending_.reserve(chunk_bytes_);
}

bool ChunkPipe::Sink::write(std::string_view bytes) {
  pipe_.pending_.append(bytes);
  if (pipe_.pending_.size() >= pipe_.chunk_bytes_) pipe_.push(false);
  return true;
}

void ChunkPipe::push(bool final) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return abandoned_ || queue_.size() < max_chunks_; });
  if (!abandoned_ && !pending_.empty()) queue_.push_back(std::move(pending_));
  pending_.clear();
  if (!final) pending_.reserve(chunk_bytes_);
  if (final) closed_ = true;
  changed_.notify_all();
}

void ChunkPipe::close() { push(true); }

void ChunkPipe::abandon() {
  std::lock_guard lock(mutex_);
  abandoned_ = true;
  queue_.clear();
  changed_.notify_all();
}

bool ChunkPipe::pop(std::string& into) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return abandoned_ || closed_ || !queue_.empty(); });
  if (queue_.empty()) return false;
  into = std::move(queue_.front());
  queue_.pop_front();
  changed_.notify_all();
  return true;
}

ChunkPipe::Source::int_type ChunkPipe::Source::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  do {
    if (!pipe_.pop(current_)) return traits_type::eof();
  } while (current_.empty());
  setg(current_.data(), current_.data(), current_.data() + current_.size());
  return traits_type::to_int_type(*gptr());
}

}  // namespace chakrashim::tools
