// SPDX-License-Identifier: Apache-2.0
// CatchOutOfMemory: the one way a public entry point turns allocation failure into an
// Error value, so that no exception leaves the library.
#ifndef STGUARD_SRC_BASE_OUT_OF_MEMORY_H_
#define STGUARD_SRC_BASE_OUT_OF_MEMORY_H_

#include <new>
#include <stdexcept>

#include "stguard/error.h"

namespace stguard {

// OutOfMemoryError is what a public function returns when an allocation failed.
inline Error OutOfMemoryError(const char* what) {
  return Error{ErrorCode::kOutOfMemory, 0, what};
}

// CatchOutOfMemory runs `body` (which returns Error or Result<T>) and returns its result,
// or OutOfMemoryError(what) when it throws std::bad_alloc, or std::length_error (a
// container asked for more than it can ever hold).
template <typename Body>
auto CatchOutOfMemory(const char* what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError(what);
  } catch (const std::length_error&) {
    return OutOfMemoryError(what);
  }
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_OUT_OF_MEMORY_H_
