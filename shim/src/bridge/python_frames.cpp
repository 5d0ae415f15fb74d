#include "bridge/python_frames.h"

#include "bridge/python_api.h"

namespace chakrashim::bridge {

namespace {

// A frame's attribute as a new reference, or null at the chain's end or on
// error (cleared: ours). frame.f_back and frame.f_code are the frame type's
// own members, so no code of the job's runs; they stand in for
// PyFrame_GetBack and PyFrame_GetCode, which Python 3.8 lacks.
void* frame_member(void* frame, bool back) {
  const PythonApi& py = python();
  if (!py.get_attr || !py.intern_string) return nullptr;
  // Made once and kept (GIL held: the first call is the only writer).
  static void* const back_key = py.intern_string("f_back");
  static void* const code_key = py.intern_string("f_code");
  void* key = back ? back_key : code_key;
  if (!key) {
    py.err_clear();
    return nullptr;
  }
  void* value = py.get_attr(frame, key);
  if (!value) {
    py.err_clear();
  } else if (value == py.none) {
    py.dec_ref(value);
    value = nullptr;
  }
  return value;
}

// The frame that called `frame` (a new reference), or null. On 3.11 and
// later this makes the frame object where it had none; that can fail
// (no memory), and the error is cleared here: it is ours, and a builtin of
// ours must never return to the job's Python with one set.
void* back_of(void* frame) {
  const PythonApi& py = python();
  if (!py.frame_get_back) return frame_member(frame, true);
  void* back = py.frame_get_back(frame);
  if (!back && py.err_occurred()) py.err_clear();
  return back;
}

}  // namespace

const void* frame_above(int levels) {
  const PythonApi& py = python();
  if (!py.eval_get_frame) return nullptr;
  void* f = py.eval_get_frame();  // borrowed
  if (f) py.inc_ref(f);
  for (int i = 0; f && i < levels; ++i) {
    void* back = back_of(f);  // a new reference
    py.dec_ref(f);
    f = back;
  }
  // Identity only: the frame runs, so it lives (module comment).
  if (f) py.dec_ref(f);
  return f;
}

bool is_ancestor(const void* ancestor, const void* frame) {
  const PythonApi& py = python();
  if (!ancestor || !frame) return false;
  void* f = back_of(const_cast<void*>(frame));  // a new reference
  bool found = false;
  while (f && !found) {
    found = f == ancestor;
    void* back = back_of(f);
    py.dec_ref(f);
    f = back;
  }
  if (f) py.dec_ref(f);
  return found;
}

int ancestors_running(const void* frame, const void* code) {
  const PythonApi& py = python();
  if (!frame || !code || (!py.frame_get_back && !py.get_attr)) return -1;
  int n = 0;
  void* f = back_of(const_cast<void*>(frame));  // a new reference
  while (f) {
    if (void* c = py.frame_get_code ? py.frame_get_code(f) : frame_member(f, false)) {  // a new reference
      n += c == code;
      py.dec_ref(c);
    }
    void* back = back_of(f);
    py.dec_ref(f);
    f = back;
  }
  return n;
}

const void* code_of(const void* frame) {
  const PythonApi& py = python();
  if (!frame) return nullptr;
  void* c = py.frame_get_code ? py.frame_get_code(const_cast<void*>(frame))
                              : frame_member(const_cast<void*>(frame), false);  // a new reference
  if (c) py.dec_ref(c);  // the running frame holds it
  return c;
}

}  // namespace chakrashim::bridge
