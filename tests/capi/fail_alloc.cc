// SPDX-License-Identifier: Apache-2.0
// Replacement global operator new/delete with a failure switch (see fail_alloc.h).
// The replacements forward to malloc and free, which AddressSanitizer still intercepts,
// so leaks and bad frees are still caught in the sanitizer build.
#include "capi/fail_alloc.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace stguard::testing {
namespace {

std::atomic<uint64_t> num_allocations{0};
std::atomic<bool> armed{false};
std::atomic<uint64_t> fail_from{0};
std::atomic<bool> failed_any{false};

// Allocate returns null when this allocation is to fail, else malloc's result.
void* Allocate(size_t size) {
  const uint64_t number = num_allocations.fetch_add(1);
  if (armed.load() && number >= fail_from.load()) {
    failed_any.store(true);
    return nullptr;
  }
  return std::malloc(size == 0 ? 1 : size);
}

}  // namespace

void FailAllocationNumber(uint64_t n) {
  failed_any.store(false);
  fail_from.store(num_allocations.load() + n);
  armed.store(true);
}

bool StopFailingAllocations() {
  armed.store(false);
  return failed_any.load();
}

uint64_t NumAllocations() { return num_allocations.load(); }

}  // namespace stguard::testing

void* operator new(size_t size) {
  void* p = stguard::testing::Allocate(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return stguard::testing::Allocate(size);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return stguard::testing::Allocate(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
