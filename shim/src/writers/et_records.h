// The native ET recorder's binary records (docs/et-recorder.md): what the
// recorder copies on the training thread, in the order it happened, for the
// writer to turn into torch's Execution Trace JSON after the window. Torch-
// free, so that the writer, its tests and its fuzz target share it.
//
// A thread's records are a byte stream; every string (op names, schemas,
// dtype and device names) is an index into that thread's string table, so a
// stream holds no pointer to dereference. Pointers that appear (a tensor's
// TensorImpl, its storage's data) are identities only: the writer assigns
// torch's ids from them, never reads through them.
//
// Layout (little-endian as the machine writes it; records are read back on
// the machine that wrote them):
//   record  := u32 size (whole record, this field included) | u8 kind | u64 seq | body
//   start   := u64 handle | u64 tid | u64 fw_tid | i64 seq_nr | u8 scope | u32 name
//              | u32 schema (string + 1; 0: none) | u8 flags | [kernel] | u32 n | value*n
//   kernel  := u32 backend | u32 file | i64 stream            (flags & kKernelInfo)
//   end     := u64 handle | u64 tid | u8 flags | u32 n | value*n
//              | [u32 m | (u32 name | u32 type | u32 raw_value)*m]  (flags & kCommAttrs)
//   value   := u8 kind | payload (ValueKind below)
// `seq` orders records across threads: one process-wide counter, taken as the
// record is made, so the writer replays every thread in the order torch's
// observer would have seen the callbacks.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace chakrashim::writers::et {

enum class RecordKind : std::uint8_t { start = 1, end = 2 };

enum class ValueKind : std::uint8_t {
  tensor = 0,  // u8 flags | u32 dtype | u64 impl | [u8 dims | i64 sizes | [i64 strides]]
               // | [u64 storage | u64 offset | u64 numel | u64 itemsize | u32 device]
  list = 1,    // u32 n | value*n  (torch's GenericList; at most kMaxListItems kept)
  tuple = 2,   // u32 n | value*n
  int_ = 3,    // i64
  double_ = 4, // f64
  bool_ = 5,   // u8
  string = 6,  // u32 len | bytes
  device = 7,  // u32 text ("cpu", "cuda:0")
  other = 8,   // u32 torch's tag name (None, Generator, ...), written as "<name>"
};

// Tensor flags.
inline constexpr std::uint8_t kTensorShape = 1;    // defined, concrete sizes: dims follow
inline constexpr std::uint8_t kTensorStorage = 2;  // has storage, concrete: storage part follows
// With kTensorShape: the strides are left out, being row_major_strides of
// the sizes (a contiguous tensor's, as torch computes them): most tensors.
inline constexpr std::uint8_t kTensorRowMajor = 4;

// A contiguous tensor's strides as torch computes them (c10's
// contiguous_strides: a size below 1 counts as 1), in unsigned arithmetic
// so that the recorder's test and the writer's rebuild agree bit for bit
// even where a product wraps. Calls out(i, stride) for each dim, last first;
// returns early (false) where out does.
template <typename Size, typename Out>
bool row_major_strides(const Size* sizes, std::size_t dims, Out&& out) {
  std::uint64_t stride = 1;
  for (std::size_t i = dims; i-- > 0;) {
    if (!out(i, static_cast<std::int64_t>(stride))) return false;
    const auto size = static_cast<std::int64_t>(sizes[i]);
    stride *= static_cast<std::uint64_t>(size > 1 ? size : 1);
  }
  return true;
}
// Start flags.
inline constexpr std::uint8_t kInputsLogged = 1;  // torch's checkFunctionInputsForLogging held
inline constexpr std::uint8_t kKernelInfo = 2;
// End flags.
inline constexpr std::uint8_t kOutputsLogged = 1;
inline constexpr std::uint8_t kCommAttrs = 2;

inline constexpr std::uint32_t kNoString = 0xffffffffu;
// torch's kMaxNumElements: a list keeps items 0..4096, then stops.
inline constexpr std::uint32_t kMaxListItems = 4097;
inline constexpr std::uint8_t kMaxDims = 255;

// Appends records to a byte vector (the recorder's per-thread scratch).
class Encoder {
 public:
  // Appends to `out`. Its bytes grow in steps and are written through a
  // size of the encoder's own, so that a field costs a bounds check and a
  // copy (a std::vector insert per field was about 1,900 instructions an
  // op on the recorder's path, issue #52); `out` is cut to what was written
  // at close() and when the encoder goes.
  explicit Encoder(std::vector<std::uint8_t>& out)
      : out_(out), base_(out.data()), room_(out.size()), size_(out.size()) {}
  // A scratch for one record at a time: written from its start, its bytes
  // kept as room for the next record (never cut); the record is the first
  // size() bytes.
  struct Scratch {};
  Encoder(std::vector<std::uint8_t>& scratch, Scratch)
      : out_(scratch), base_(scratch.data()), room_(scratch.size()), reuse_(true) {}
  // Writes one record in place, into `room` bytes at `at` (the free end of
  // the recorder's chunk: no copy from a scratch afterwards). A record that
  // outgrows them moves, what it wrote so far and all, into `scratch`
  // (then spilled(): the record is the scratch's first size() bytes, and
  // the bytes at `at` are nothing).
  struct InPlace {
    std::uint8_t* at;
    std::size_t room;
  };
  Encoder(std::vector<std::uint8_t>& scratch, InPlace place)
      : out_(scratch), base_(place.at), room_(place.room), reuse_(true), in_place_(true) {}
  bool spilled() const { return moved_; }
  ~Encoder() {
    if (!reuse_) out_.resize(size_);
  }
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // Opens a record; close() writes its size.
  void begin(RecordKind kind, std::uint64_t seq) {
    start_ = size_;
    u32(0);
    u8(static_cast<std::uint8_t>(kind));
    u64(seq);
  }
  void close() {
    const auto size = static_cast<std::uint32_t>(size_ - start_);
    std::memcpy(base_ + start_, &size, sizeof size);
    if (!reuse_) out_.resize(size_);
  }

  __attribute__((always_inline)) void u8(std::uint8_t v) { put(v); }
  __attribute__((always_inline)) void u32(std::uint32_t v) { put(v); }
  __attribute__((always_inline)) void u64(std::uint64_t v) { put(v); }
  __attribute__((always_inline)) void i64(std::int64_t v) { put(v); }
  __attribute__((always_inline)) void f64(double v) { put(v); }
  void raw(const void* p, std::size_t n) {
    if (room_ - size_ < n) grow(n);
    std::memcpy(base_ + size_, p, n);
    size_ += n;
  }
  // Reserves a u32 to patch later (a list's count, known after its items).
  std::size_t placeholder_u32() {
    const std::size_t at = size_;
    u32(0);
    return at;
  }
  void patch_u32(std::size_t at, std::uint32_t v) { std::memcpy(base_ + at, &v, sizeof v); }
  void value_kind(ValueKind k) { u8(static_cast<std::uint8_t>(k)); }

  // Fields written without a bounds check each, into room reserved for
  // them: for a run of fields whose largest size is known beforehand (a
  // tensor's, a record's head). Through put() a field costs a bounds
  // check and a reload of the encoder's size and base after its store (a
  // byte store may alias them): about 12 instructions. Through Fields its
  // position stays in a register: a store and an add. reserve() makes the
  // room; commit() takes what was written. Writing past the reservation is
  // a bug: checked in debug builds.
  class Fields {
   public:
    __attribute__((always_inline)) void u8(std::uint8_t v) { put(v); }
    __attribute__((always_inline)) void u32(std::uint32_t v) { put(v); }
    __attribute__((always_inline)) void u64(std::uint64_t v) { put(v); }
    __attribute__((always_inline)) void i64(std::int64_t v) { put(v); }
    __attribute__((always_inline)) void value_kind(ValueKind k) { u8(static_cast<std::uint8_t>(k)); }

   private:
    friend class Encoder;
    Fields(std::uint8_t* p, [[maybe_unused]] std::uint8_t* end) : p_(p) {
#ifndef NDEBUG
      end_ = end;
#endif
    }
    template <typename T>
    __attribute__((always_inline)) void put(T v) {
#ifndef NDEBUG
      assert(static_cast<std::size_t>(end_ - p_) >= sizeof v);
#endif
      std::memcpy(p_, &v, sizeof v);
      p_ += sizeof v;
    }
    std::uint8_t* p_;
#ifndef NDEBUG
    std::uint8_t* end_ = nullptr;
#endif
  };
  // Room for up to `n` bytes of fields.
  Fields reserve(std::size_t n) {
    if (room_ - size_ < n) grow(n);
    return Fields(base_ + size_, base_ + size_ + n);
  }
  // Takes the fields written through `f` (the last reserve()'s).
  void commit(const Fields& f) { size_ = static_cast<std::size_t>(f.p_ - base_); }
  // Bytes written so far (out's size once closed, but for a Scratch).
  std::size_t size() const { return size_; }

 private:
  // A fixed-size field: the copy is a store, not a call to memcpy.
  template <typename T>
  __attribute__((always_inline)) void put(T v) {
    if (room_ - size_ < sizeof v) grow(sizeof v);
    std::memcpy(base_ + size_, &v, sizeof v);
    size_ += sizeof v;
  }
  // Rare (the scratch keeps its size between records; in place, a record
  // larger than the chunk's free end).
  void grow(std::size_t n) {
    if (in_place_ && !moved_) {
      // Out of the chunk, into the scratch: what was written comes along.
      if (out_.size() < size_ + n + 256) out_.resize(std::max(2 * out_.size(), size_ + n + 256));
      if (size_ != 0) std::memcpy(out_.data(), base_, size_);
      moved_ = true;
    } else {
      out_.resize(std::max(2 * out_.size(), size_ + n + 256));
    }
    base_ = out_.data();
    room_ = out_.size();
  }

  // out_'s bytes and length, kept here: only grow() changes them while the
  // encoder lives, and reading the vector's own at every field cost more
  // than the field.
  std::vector<std::uint8_t>& out_;
  std::uint8_t* base_ = nullptr;
  std::size_t room_ = 0;
  std::size_t size_ = 0;  // bytes written; out_ may be longer (room to write)
  std::size_t start_ = 0;
  bool reuse_ = false;
  bool in_place_ = false;  // began at an InPlace
  bool moved_ = false;     // ... and moved to the scratch (grow)
};

// Reads fields back; every read is bounds-checked (a short or corrupt record
// sets failed() and yields zeros, never reads past the end).
class Cursor {
 public:
  Cursor(const std::uint8_t* p, std::size_t n) : p_(p), end_(p + n) {}

  bool failed() const { return failed_; }
  bool at_end() const { return p_ >= end_; }
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }
  const std::uint8_t* position() const { return p_; }

  std::uint8_t u8() {
    std::uint8_t v = 0;
    take(&v, 1);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    take(&v, sizeof v);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    take(&v, sizeof v);
    return v;
  }
  std::int64_t i64() {
    std::int64_t v = 0;
    take(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    take(&v, sizeof v);
    return v;
  }
  std::string_view bytes(std::uint32_t n) {
    if (failed_ || left() < n) {
      failed_ = true;
      p_ = end_;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  void take(void* out, std::size_t n) {
    if (failed_ || left() < n) {
      failed_ = true;
      p_ = end_;
      return;
    }
    std::memcpy(out, p_, n);
    p_ += n;
  }
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  bool failed_ = false;
};

}  // namespace chakrashim::writers::et
