// SPDX-License-Identifier: Apache-2.0
// Asking the kernel for transparent huge pages on a large, fresh allocation.
#ifndef STGUARD_SRC_BASE_HUGE_PAGES_H_
#define STGUARD_SRC_BASE_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace stguard {

// AdviseHugePages marks the 2 MiB-aligned part of [start, start + len) for transparent
// huge pages, so that filling it takes one page fault per 2 MiB instead of one per 4 KiB.
// It is only advice: where huge pages are off, or the range holds no aligned 2 MiB
// block, nothing changes. Call it on memory not yet written.
inline void AdviseHugePages(void* start, size_t len) {
#if defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const auto first = reinterpret_cast<uintptr_t>(start);
  const uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (first + len) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)start;
  (void)len;
#endif
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_HUGE_PAGES_H_
