// SPDX-License-Identifier: Apache-2.0
// Handing back the pages of a mapped input that a stream has finished reading.
#ifndef STGUARD_SRC_BASE_PAGE_RELEASE_H_
#define STGUARD_SRC_BASE_PAGE_RELEASE_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace stguard {

// ReleaseReadPages tells the kernel that the bytes of `data` from `released` to `done`
// will not be read again (madvise MADV_PAGEOUT, Linux 5.4+): their whole pages leave
// this process's resident set and, when no one else maps them, the page cache, so a
// stream through a mapping of a file larger than memory keeps a bounded footprint.
// PAGEOUT rather than DONTNEED: it never changes contents, so it is also safe on memory
// that is not a file mapping (a file read into a buffer); touching a released page again
// reads it back. Returns the new `released`: the end of the last whole page handed back
// (the page holding `done` is kept, the next call starts there). Only a hint: where
// PAGEOUT is missing, nothing happens.
inline size_t ReleaseReadPages(std::span<const std::byte> data, size_t released, size_t done) {
#ifdef MADV_PAGEOUT
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(data.data());
  const uintptr_t from = (base + released + page - 1) / page * page;
  const uintptr_t to = (base + done) / page * page;
  if (to <= from) return released;
  (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_PAGEOUT);
  return static_cast<size_t>(to - base);
#else
  (void)data;
  (void)done;
  return released;
#endif
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_PAGE_RELEASE_H_
