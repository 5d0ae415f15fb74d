// The native ET recorder's values (et_recorder.h): what torch's
// convertIValue reads of an op's input or output, in the order it reads
// it, encoded into the thread's record (writers/et_records.h) on the
// training thread. Templates over the recorder's per-thread buffer `B`,
// which interns strings: `b.dtype(name)`, `b.device(device)`,
// `b.intern(text)` and `b.none_tag` (et_recorder.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <ATen/core/ivalue.h>

#include "writers/et_records.h"

namespace chakrashim::bridge::et_values {

namespace et = writers::et;

template <typename B>
inline void put_value(et::Encoder& e, B& b, const c10::IValue& v);

// A tensor's fields: the common value, inlined into the records' loops
// (the rest, recursive and rare, is a function of its own: in one, the
// tensor path paid the whole function's register saves at every value).
template <typename B>
__attribute__((always_inline)) inline void put_tensor(et::Encoder& e, B& b, const at::Tensor& t) {
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const bool concrete = !impl->has_symbolic_sizes_strides();
  std::uint8_t flags = 0;
  if (t.defined() && concrete) flags |= et::kTensorShape;
  if (impl->has_storage() && concrete) flags |= et::kTensorStorage;
  // What is interned first: the fields then go in one run (Fields).
  const std::uint32_t dtype = b.dtype(t.dtype().name());
  const std::uint32_t device = (flags & et::kTensorStorage) ? b.device(impl->device()) : 0;
  c10::IntArrayRef sizes, strides;
  std::size_t dims = 0;
  if (flags & et::kTensorShape) {
    sizes = impl->sizes();
    strides = impl->strides();
    dims = std::min<std::size_t>(sizes.size(), et::kMaxDims);
    // Strides a contiguous tensor's: left out, the writer rebuilds them.
    // (Compared here, not asked of torch: is_contiguous() may call into a
    // tensor subclass, and its answer ignores size-1 dims' strides.)
    if (dims == sizes.size() && strides.size() == sizes.size() &&
        et::row_major_strides(sizes.data(), dims,
                              [&](std::size_t i, std::int64_t s) { return strides[i] == s; }))
      flags |= et::kTensorRowMajor;
  }
  auto f = e.reserve(1 + 1 + 4 + 8 + 1 + 16 * dims + 4 * 8 + 4);
  f.value_kind(et::ValueKind::tensor);
  f.u8(flags);
  f.u32(dtype);
  f.u64(reinterpret_cast<std::uintptr_t>(impl));
  if (flags & et::kTensorShape) {
    f.u8(static_cast<std::uint8_t>(dims));
    for (std::size_t i = 0; i < dims; ++i) f.i64(sizes[i]);
    if (!(flags & et::kTensorRowMajor))
      for (std::size_t i = 0; i < dims; ++i) f.i64(strides[i]);
  }
  if (flags & et::kTensorStorage) {
    f.u64(reinterpret_cast<std::uintptr_t>(impl->storage().data()));
    f.u64(static_cast<std::uint64_t>(impl->storage_offset()));
    f.u64(static_cast<std::uint64_t>(impl->numel()));
    f.u64(static_cast<std::uint64_t>(impl->itemsize()));
    f.u32(device);
  }
  e.commit(f);
}

// Every other value: torch's convertIValue, minus the text: what it reads,
// in the order it reads it.
template <typename B>
__attribute__((noinline)) void put_other(et::Encoder& e, B& b, const c10::IValue& v) {
  if (v.isTuple()) {
    const auto& items = v.toTupleRef().elements();
    e.value_kind(et::ValueKind::tuple);
    e.u32(static_cast<std::uint32_t>(items.size()));
    for (const auto& item : items) put_value(e, b, item);
    return;
  }
  if (v.isList()) {
    const auto items = v.toListRef();
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(items.size(), et::kMaxListItems));
    e.value_kind(et::ValueKind::list);
    e.u32(n);
    for (std::uint32_t i = 0; i < n; ++i) put_value(e, b, items[i]);
    return;
  }
  if (v.isDouble()) {
    e.value_kind(et::ValueKind::double_);
    e.f64(v.toDouble());
  } else if (v.isInt()) {
    e.value_kind(et::ValueKind::int_);
    e.i64(v.toInt());
  } else if (v.isBool()) {
    e.value_kind(et::ValueKind::bool_);
    e.u8(v.toBool() ? 1 : 0);
  } else if (v.isString()) {
    const std::string& s = v.toStringRef();
    e.value_kind(et::ValueKind::string);
    e.u32(static_cast<std::uint32_t>(s.size()));
    e.raw(s.data(), s.size());
  } else if (v.isDevice()) {
    e.value_kind(et::ValueKind::device);
    e.u32(b.device(v.toDevice()));
  } else {
    e.value_kind(et::ValueKind::other);
    if (v.isNone()) {
      if (b.none_tag == et::kNoString) b.none_tag = b.intern("None");
      e.u32(b.none_tag);
    } else {
      e.u32(b.intern(v.tagKind()));
    }
  }
}

template <typename B>
__attribute__((always_inline)) inline void put_value(et::Encoder& e, B& b, const c10::IValue& v) {
  if (v.isTensor())
    put_tensor(e, b, v.toTensor());
  else
    put_other(e, b, v);
}

}  // namespace chakrashim::bridge::et_values
