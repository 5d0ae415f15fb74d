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

}  // namespace chakrashim::bridge
