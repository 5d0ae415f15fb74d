// A child forked in mid-window must never write the parent's files
// (DESIGN.md section 4.7). It inherits torch's enabled ET callback, its
// output stream and the shared file offset: without this, DataLoader
// workers flushed their copy of the stream into the parent's ET.
#pragma once

namespace chakrashim::bridge {

// Registers the pthread_atfork child handler, once per process. The handler
// does only async-signal-safe work: it points the ET stream's descriptor at
// /dev/null and marks the capture dead, so every callback turns itself off.
void install_fork_guard();

}  // namespace chakrashim::bridge
