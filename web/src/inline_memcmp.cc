// SPDX-License-Identifier: Apache-2.0
// memcmp for the WebAssembly build, compiled with the library under link-time optimisation
// so that the optimiser can inline it. Why: clang expands a memcmp of a short constant
// length into loads and compares natively, but not for WebAssembly, and emscripten's libc
// memcmp is a byte loop behind a call. The header parsers compare short literals per tensor
// (`,"data_offsets":[`), so that call was an eighth of header validation's time in the
// browser (web/GLUE.md, bench/README.md). The result is memcmp's: the sign of the first
// differing byte, compared as unsigned char.
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int memcmp(const void* left, const void* right, size_t count) {
  auto* l = static_cast<const unsigned char*>(left);
  auto* r = static_cast<const unsigned char*>(right);
  // Eight bytes at a time while they are equal; the first differing word is then settled
  // byte by byte below.
  while (count >= 8) {
    uint64_t l_word;
    uint64_t r_word;
    __builtin_memcpy(&l_word, l, 8);
    __builtin_memcpy(&r_word, r, 8);
    if (l_word != r_word) break;
    l += 8;
    r += 8;
    count -= 8;
  }
  for (; count != 0; --count, ++l, ++r) {
    if (*l != *r) return *l < *r ? -1 : 1;
  }
  return 0;
}
