// SPDX-License-Identifier: Apache-2.0
// What every C API file shares: filling a stguard_error without allocating, the one guard
// that keeps every C++ exception (std::bad_alloc above all) inside the library, and the
// check of dtype values that come from C.
//
// src/capi/ is the top layer: it includes only the public headers in include/stguard/.
#ifndef STGUARD_SRC_CAPI_CAPI_COMMON_H_
#define STGUARD_SRC_CAPI_CAPI_COMMON_H_

#include <exception>
#include <new>
#include <stdexcept>
#include <string_view>

#include "stguard/error.h"
#include "stguard/stguard.h"

namespace stguard::capi {

// FillError copies `error` into *err (when err is not null) and returns its code. It
// allocates nothing, so it also works after std::bad_alloc.
stguard_code FillError(stguard_error* err, const Error& error) noexcept;

// Fail fills *err with `code`, offset 0, `message` (static) followed by ": " and
// `detail` when detail is not empty, and `tensor`; returns `code`. Allocates nothing.
stguard_code Fail(stguard_error* err, stguard_code code, const char* message,
                  std::string_view detail = {}, std::string_view tensor = {}) noexcept;

// IsValidDtype says whether `dtype` (an int from C, which may hold anything) names a
// dtype.
bool IsValidDtype(stguard_dtype dtype) noexcept;

// Guarded runs `body` (which returns a stguard_code) and turns any exception it throws
// into a code: std::bad_alloc and std::length_error (a size beyond what can be allocated)
// into STGUARD_OUT_OF_MEMORY, anything else into STGUARD_INVALID_ARGUMENT with the
// exception's text. Every C entry point that can allocate runs its body through here.
template <typename Body>
stguard_code Guarded(stguard_error* err, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(err, STGUARD_OUT_OF_MEMORY, "out of memory");
  } catch (const std::length_error&) {
    return Fail(err, STGUARD_OUT_OF_MEMORY, "out of memory: a size beyond what can be allocated");
  } catch (const std::exception& exception) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "unexpected C++ exception", exception.what());
  } catch (...) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "unexpected C++ exception");
  }
}

}  // namespace stguard::capi

#endif  // STGUARD_SRC_CAPI_CAPI_COMMON_H_
