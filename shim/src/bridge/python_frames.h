// Python frames as identities, for our hooks (issue #48): which call of
// torch's is one of our Python hook functions running in, and is an open
// call still running. A call that an exception ended between our pre and
// post hook leaves an entry of ours open; it is told from a call still
// running by its frame, which is then no ancestor of the current one.
//
// Only with the GIL held, from a builtin of ours called by Python. Frames
// are compared by address and never dereferenced by us: a running frame
// lives while it runs (its frame object stays cached on it), so the
// address of a running call's frame is stable and unique.
#pragma once

namespace chakrashim::bridge {

// The frame `levels` calls above the running Python code: 1 is the caller
// of the Python function that called the running builtin. Null where
// Python has no such frame or lacks the API.
const void* frame_above(int levels);

// Whether `ancestor` is a strict ancestor of `frame` (on the chain of
// callers above it). False for a null one.
bool is_ancestor(const void* ancestor, const void* frame);

// How many strict ancestors of `frame` run `code` (a code object, compared
// by address). -1 where no frame can be read. Before Python 3.9 (no
// PyFrame_GetBack, PyFrame_GetCode) through frame.f_back and .f_code.
int ancestors_running(const void* frame, const void* code);

// The code object `frame` runs (borrowed in effect: a running frame keeps
// its code alive). Null where it cannot be read.
const void* code_of(const void* frame);

}  // namespace chakrashim::bridge
