// SPDX-License-Identifier: Apache-2.0
// ReleasePages: hand the pages of a mapped range back to the kernel once they are used.
#ifndef STGUARD_SRC_BASE_RELEASE_PAGES_H_
#define STGUARD_SRC_BASE_RELEASE_PAGES_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace stguard {

// ReleasePages asks the kernel to reclaim the whole pages inside [data, data + len).
// MADV_PAGEOUT keeps the contents (file pages are re-read, anonymous ones swapped), so it
// is safe on any memory; a failure only means the pages stay resident.
inline void ReleasePages(const std::byte* data, size_t len) {
#ifdef MADV_PAGEOUT
  static const uintptr_t page_len = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(page_len - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + len) & ~(page_len - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)data;
  (void)len;
#endif
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_RELEASE_PAGES_H_
