// The GNU build-id of a loaded ELF object, read from its PT_NOTE segments in
// memory. The bridge uses it to tell whether the libtorch in the process is
// the one it was built against.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace chakrashim::elf {

// Scans one note segment (entries of Elf_Nhdr, name, desc; the desc and the
// next entry start at multiples of `align`, 4 or 8, counted from the segment
// start) for an NT_GNU_BUILD_ID note owned by "GNU" and returns its bytes as
// lowercase hex.
//   {namesz 4, descsz 2, type 3, "GNU\0", 0xb7 0x06} -> "b706"
// Truncated or malformed input gives nullopt, never a read past `size`.
std::optional<std::string> build_id_in_notes(const unsigned char* notes, std::size_t size,
                                             std::size_t align);

// The build-id of the loaded object whose path is `loaded_path` (as
// dl_iterate_phdr names it); nullopt if not loaded or without one.
std::optional<std::string> loaded_build_id(const std::string& loaded_path);

}  // namespace chakrashim::elf
