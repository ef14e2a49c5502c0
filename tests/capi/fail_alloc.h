// SPDX-License-Identifier: Apache-2.0
// Allocation failure injection for the C API tests: this test binary replaces the global
// operator new and delete, so that a test can make one chosen allocation fail (throw
// std::bad_alloc, or return null for the nothrow forms) wherever it happens: in the C API
// layer, in the library under it, or in the standard library on their behalf.
#ifndef STGUARD_TESTS_CAPI_FAIL_ALLOC_H_
#define STGUARD_TESTS_CAPI_FAIL_ALLOC_H_

#include <cstdint>

namespace stguard::testing {

// FailAllocationNumber arms the hook: counting from 0 at this call, allocation number
// `n` fails, and so does every later one while armed (as when memory stays exhausted).
void FailAllocationNumber(uint64_t n);

// StopFailingAllocations disarms the hook and returns whether any allocation was failed
// since FailAllocationNumber.
bool StopFailingAllocations();

// NumAllocations counts operator new calls since the program started (armed or not).
uint64_t NumAllocations();

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_CAPI_FAIL_ALLOC_H_
