// A window's output folders and files by name (docs/design.md section 1,
// docs/guarantees.md "The trace folder, untrusted by design"): choosing the
// folder index, making and opening the folders, claiming the .partial
// names, and removing what a window that keeps nothing made. The writer
// (trace_files.h) then works inside the open folders.
#pragma once

#include <optional>
#include <string>

#include "chakrashim/bridge_abi.h"
#include "files/output_paths.h"
#include "files/publish.h"

namespace chakrashim::bridge {

// Picks the folder index, creates the folders and claims the .partial names
// (O_EXCL), proving the folders writable before torch opens anything.
// Returns the layout, or nullopt with one line in `error`.
std::optional<files::Layout> prepare_outputs(const chakrashim_capture_config& config,
                                             bool host, bool device, std::string& error);

// prepare_outputs in three parts: the folder index, chosen at the step
// before the window (stat calls only, issue #34); then, at arm, the folders
// and the claimed names, so that folders are made when a rank first arms,
// never earlier (a job that dies in the step before its window, of a
// SIGTERM say, leaves nothing behind).
std::optional<files::Layout> choose_folders(const chakrashim_capture_config& config,
                                            std::string& error);
// Makes and opens the wanted folders (output_dirs.h), into the layout.
bool make_folders(files::Layout& layout, bool host, bool device, std::string& error);
// choose_folders, then make_folders.
std::optional<files::Layout> prepare_folders(const chakrashim_capture_config& config, bool host,
                                             bool device, std::string& error);
bool claim_outputs(files::Layout& layout, bool host, bool device, bool overwrite,
                   std::string& error);

// A path naming NAME through an open output folder (publish.h), for torch's
// ET observer, which opens its file by path.
std::string host_partial_through(const files::Layout& layout);

// Removes what prepare_outputs created, for a window that keeps nothing
// (START=0 in a process that never completed a step). Folders are removed
// only if empty.
void discard_outputs(const files::Layout& layout, bool host, bool device);

// The layout's open folders as publish.h works in them. A folder not
// opened gives fd -1, where every *at call fails.
files::Folder host_folder(const files::Layout& l);
files::Folder device_folder(const files::Layout& l);
// The file name in a path: "/t/0_chakra/rank-0.json" -> "rank-0.json".
std::string base_name(const std::string& path);

}  // namespace chakrashim::bridge
