// A child forked in mid-window must never write the parent's files
// (docs/design.md section 4.7). It inherits torch's enabled ET callback, its
// output stream and the shared file offset: without this, DataLoader
// workers flushed their copy of the stream into the parent's ET.
#pragma once

namespace chakrashim::bridge {

// Registers the pthread_atfork child handler, once per process. The handler
// marks the capture dead, so every callback of ours turns itself off,
// points the descriptors open on the ET file at /dev/null, and disables
// torch's ET callback (Capture::on_forked_child says what each protects).
void install_fork_guard();

}  // namespace chakrashim::bridge
