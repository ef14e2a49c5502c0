// SPDX-License-Identifier: Apache-2.0
// PlacingSink: a sink whose next bytes a producer may write in any order, straight into
// the output file, for a producer whose input comes in another order than the output (a
// deflated Fortran-order array: columns in, rows out) and that must not hold it whole.
#ifndef STGUARD_SRC_WRITE_PLACING_SINK_H_
#define STGUARD_SRC_WRITE_PLACING_SINK_H_

#include <cstddef>
#include <cstdint>

#include "stguard/error.h"

namespace stguard {

// A ByteSink may also be a PlacingSink (found with dynamic_cast): the crash-safe file
// (AtomicFile) is one, and the writer's wrappers pass it through; a sink that changes the
// bytes (ConvertingSink) or is not a file is not: a producer that places through a
// ConvertingSink converts the elements itself and places them into the sink's out().
// Between BeginPlaced and EndPlaced the sink takes no Write.
class PlacingSink {
 public:
  virtual ~PlacingSink() = default;
  // BeginPlaced makes the next `len` bytes of the output writable in any order and
  // returns their address: a shared mapping of the file, its blocks allocated first (so
  // a full disk is an error here, never a fault while storing). nullptr with an ok Error:
  // this sink cannot place (no mapping on this platform or file system); write in order.
  [[nodiscard]] virtual Error BeginPlaced(uint64_t len, std::byte** at) = 0;
  // ReleasePlaced hands [offset, offset + len) of the placed bytes back to the kernel:
  // the data stays in the file, the pages leave the process's resident set.
  virtual void ReleasePlaced(uint64_t offset, uint64_t len) = 0;
  // PreparePlaced maps [offset, offset + len) of the placed bytes writable in one call,
  // where the platform can, for a caller about to store into most of its pages: cheaper
  // than a page fault per page.
  virtual void PreparePlaced(uint64_t offset, uint64_t len) = 0;
  // EndPlaced unmaps the bytes and moves the output past them: every one must have been
  // stored.
  [[nodiscard]] virtual Error EndPlaced() = 0;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_PLACING_SINK_H_
