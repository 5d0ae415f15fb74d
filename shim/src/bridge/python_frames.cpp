#include "bridge/python_frames.h"

#include "bridge/python_api.h"

namespace chakrashim::bridge {

const void* frame_above(int levels) {
  const PythonApi& py = python();
  if (!py.eval_get_frame || !py.frame_get_back) return nullptr;
  void* f = py.eval_get_frame();  // borrowed
  if (f) py.inc_ref(f);
  for (int i = 0; f && i < levels; ++i) {
    void* back = py.frame_get_back(f);  // a new reference
    py.dec_ref(f);
    f = back;
  }
  // Identity only: the frame runs, so it lives (module comment).
  if (f) py.dec_ref(f);
  return f;
}

bool is_ancestor(const void* ancestor, const void* frame) {
  const PythonApi& py = python();
  if (!ancestor || !frame || !py.frame_get_back) return false;
  void* f = py.frame_get_back(const_cast<void*>(frame));  // a new reference
  bool found = false;
  while (f && !found) {
    found = f == ancestor;
    void* back = py.frame_get_back(f);
    py.dec_ref(f);
    f = back;
  }
  if (f) py.dec_ref(f);
  return found;
}

int ancestors_running(const void* frame, const void* code) {
  const PythonApi& py = python();
  if (!frame || !code || !py.frame_get_back || !py.frame_get_code) return -1;
  int n = 0;
  void* f = py.frame_get_back(const_cast<void*>(frame));  // a new reference
  while (f) {
    if (void* c = py.frame_get_code(f)) {  // a new reference
      n += c == code;
      py.dec_ref(c);
    }
    void* back = py.frame_get_back(f);
    py.dec_ref(f);
    f = back;
  }
  return n;
}

const void* code_of(const void* frame) {
  const PythonApi& py = python();
  if (!frame || !py.frame_get_code) return nullptr;
  void* c = py.frame_get_code(const_cast<void*>(frame));  // a new reference
  if (c) py.dec_ref(c);  // the running frame holds it
  return c;
}

}  // namespace chakrashim::bridge
