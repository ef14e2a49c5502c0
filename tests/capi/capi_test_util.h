// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the C API tests.
#ifndef STGUARD_TESTS_CAPI_CAPI_TEST_UTIL_H_
#define STGUARD_TESTS_CAPI_CAPI_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <string_view>

#include "stguard/stguard.h"

namespace stguard::testing {

// PoisonedError returns an error record filled with garbage, so that a test sees
// whether a function really wrote every field it promises.
inline stguard_error PoisonedError() {
  stguard_error err;
  std::memset(&err, 0x5A, sizeof(err));
  return err;
}

inline std::string_view NameOf(const stguard_tensor& tensor) {
  return {tensor.name, tensor.name_len};
}

inline std::string_view TensorOf(const stguard_error& err) {
  return {err.tensor, err.tensor_len};
}

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_CAPI_CAPI_TEST_UTIL_H_
