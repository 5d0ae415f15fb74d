#include "elf/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstring>

namespace chakrashim::elf {

namespace {
std::size_t pad(std::size_t n, std::size_t align) { return (n + align - 1) / align * align; }
}  // namespace

std::optional<std::string> build_id_in_notes(const unsigned char* notes, std::size_t size,
                                             std::size_t align) {
  if (align != 4 && align != 8) align = 4;
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t pos = 0;
  while (pos + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr header;  // same layout as Elf32_Nhdr: three 32-bit words
    std::memcpy(&header, notes + pos, sizeof header);
    // The descriptor and the next note start at multiples of `align` counted
    // from the (aligned) segment start, as glibc, the kernel and readelf
    // read them: with align 8, "GNU\0" ends at 16 and the descriptor follows
    // it without padding.
    const std::size_t name_at = pos + sizeof header;
    if (header.n_namesz > size - name_at) return std::nullopt;
    const std::size_t desc_at = pad(name_at + header.n_namesz, align);
    if (desc_at > size || header.n_descsz > size - desc_at) return std::nullopt;
    pos = pad(desc_at + header.n_descsz, align);
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        std::memcmp(notes + name_at, "GNU", 4) == 0 && header.n_descsz > 0) {
      std::string hex;
      for (std::size_t i = 0; i < header.n_descsz; ++i) {
        hex += kHex[notes[desc_at + i] >> 4];
        hex += kHex[notes[desc_at + i] & 15];
      }
      return hex;
    }
  }
  return std::nullopt;
}

std::optional<std::string> loaded_build_id(const std::string& loaded_path) {
  struct Search {
    const std::string* path;
    std::optional<std::string> id;
  } search{&loaded_path, std::nullopt};
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        if (!info->dlpi_name || *s->path != info->dlpi_name) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const auto* notes = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
          s->id = build_id_in_notes(notes, ph.p_memsz, ph.p_align);
          if (s->id) break;
        }
        return 1;
      },
      &search);
  return search.id;
}

}  // namespace chakrashim::elf
