// SPDX-License-Identifier: Apache-2.0
// RapidCheck generators of tensor sets. Header-only: only the *_prop.cc binaries link
// RapidCheck, while tests/support/*.cc goes into both test binaries.
#ifndef STGUARD_TESTS_SUPPORT_TENSOR_SET_GEN_H_
#define STGUARD_TESTS_SUPPORT_TENSOR_SET_GEN_H_

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "stguard/dtype.h"
#include "support/tensor_set.h"
#include "format/tensor_size.h"
#include "base/utf8.h"

namespace stguard::testing {

// kFullSize is RapidCheck's nominal largest size, at which inRange covers its whole range.
inline constexpr int kFullSize = 100;

// GenCodePoint draws Unicode scalar values from the whole range, weighted towards the
// characters that exercise escaping: quotes, backslashes, '/', DEL and every control
// character, then ASCII, the BMP (both sides of the surrogates) and the supplementary
// planes up to U+10FFFF.
// RapidCheck scales inRange by the test's size (small early on); the code point is drawn
// at full size so that every case can reach the whole range.
inline rc::Gen<uint32_t> GenCodePoint() {
  return rc::gen::resize(kFullSize, rc::gen::weightedOneOf<uint32_t>({
      {6, rc::gen::inRange<uint32_t>(0x20, 0x7F)},
      {3, rc::gen::element<uint32_t>('"', '\\', '/', 0x7F, '\b', '\f', '\n', '\r', '\t')},
      {2, rc::gen::inRange<uint32_t>(0x00, 0x20)},
      {2, rc::gen::inRange<uint32_t>(0x80, 0xD800)},
      {1, rc::gen::inRange<uint32_t>(0xE000, 0x10000)},
      {1, rc::gen::inRange<uint32_t>(0x10000, 0x110000)},
  }));
}

// GenUtf8 draws a string of 0..max_chars code points, UTF-8 encoded.
inline rc::Gen<std::string> GenUtf8(int max_chars) {
  return rc::gen::exec([max_chars] {
    const int num_chars = *rc::gen::inRange(0, max_chars + 1);
    std::string out;
    for (int i = 0; i < num_chars; ++i) AppendUtf8(*GenCodePoint(), &out);
    return out;
  });
}

// GenName draws tensor names and metadata keys: mostly random Unicode, sometimes a few
// fixed names so that collisions (dropped by GenTensorSet) and near misses of the
// reserved name come up.
inline rc::Gen<std::string> GenName() {
  return rc::gen::weightedOneOf<std::string>({
      {1, rc::gen::element<std::string>("", "a", "b", "w", "__metadata_", "__metadata__ ",
                                        "_metadata__")},
      {8, GenUtf8(8)},
  });
}

// FillBytes makes `len` deterministic pseudo-random bytes from `seed`. Drawing one seed
// instead of every byte keeps generation and shrinking fast.
inline std::string FillBytes(uint64_t len, uint32_t seed) {
  std::string out(len, '\0');
  std::minstd_rand random(seed | 1);
  for (char& c : out) c = static_cast<char>(random() >> 8);
  return out;
}

// GenTensor draws one tensor named `name`: any dtype, rank 0..5, dims 0..3 (0 about one
// time in six), so at most 3^5 * 8 = 1944 bytes. Sub-byte dtypes get their last dim (or,
// for a scalar, a new one) multiplied up so the bits fill whole bytes.
inline rc::Gen<TestTensor> GenTensor(std::string name) {
  return rc::gen::exec([name] {
    TestTensor tensor;
    tensor.name = name;
    tensor.dtype = *rc::gen::elementOf(kAllDtypes);
    const int rank = *rc::gen::inRange(0, 6);
    for (int i = 0; i < rank; ++i) {
      tensor.shape.push_back(*rc::gen::weightedOneOf<uint64_t>(
          {{1, rc::gen::just<uint64_t>(0)}, {5, rc::gen::inRange<uint64_t>(1, 4)}}));
    }
    const uint32_t bits = DtypeBits(tensor.dtype);
    uint64_t num_elements = 1;
    for (uint64_t dim : tensor.shape) num_elements *= dim;
    if (num_elements * bits % 8 != 0) {
      const uint64_t multiplier = 8 / std::gcd<uint32_t, uint32_t>(bits, 8);
      if (tensor.shape.empty()) {
        tensor.shape.push_back(multiplier);
      } else {
        tensor.shape.back() *= multiplier;
      }
    }
    uint64_t byte_len = 0;
    RC_ASSERT(ComputeTensorByteSize(tensor.dtype, tensor.shape, &byte_len) == ErrorCode::kOk);
    tensor.data = FillBytes(byte_len, *rc::gen::arbitrary<uint32_t>());
    return tensor;
  });
}

// GenTensorSet draws 0..max_tensors tensors with distinct names other than __metadata__
// (a repeated name is dropped, so sets are sometimes smaller) and 0..max_metadata metadata
// entries with distinct keys.
inline rc::Gen<TensorSet> GenTensorSet(int max_tensors = 64, int max_metadata = 8) {
  return rc::gen::exec([max_tensors, max_metadata] {
    TensorSet set;
    std::set<std::string> names;
    // Half the cases draw the count at full size, so large sets come up from the start.
    const int num_tensors = *rc::gen::weightedOneOf<int>(
        {{1, rc::gen::inRange(0, max_tensors + 1)},
         {1, rc::gen::resize(kFullSize, rc::gen::inRange(0, max_tensors + 1))}});
    for (int i = 0; i < num_tensors; ++i) {
      std::string name = *GenName();
      if (name == "__metadata__" || !names.insert(name).second) continue;
      set.tensors.push_back(*GenTensor(std::move(name)));
    }
    std::set<std::string> keys;
    const int num_metadata = *rc::gen::inRange(0, max_metadata + 1);
    for (int i = 0; i < num_metadata; ++i) {
      std::string key = *GenName();
      if (!keys.insert(key).second) continue;
      set.metadata.emplace_back(std::move(key), *GenUtf8(16));
    }
    return set;
  });
}

}  // namespace stguard::testing

namespace stguard::testing {

// showValue prints a tensor set in RapidCheck's counterexamples (found by ADL).
inline void showValue(const TensorSet& set, std::ostream& os) {
  os << set.tensors.size() << " tensors:";
  for (const TestTensor& tensor : set.tensors) {
    os << "\n  '" << PrintableText(tensor.name) << "' " << DtypeName(tensor.dtype) << " [";
    for (size_t i = 0; i < tensor.shape.size(); ++i) os << (i ? "," : "") << tensor.shape[i];
    os << "] " << tensor.data.size() << " bytes";
  }
  os << "\n" << set.metadata.size() << " metadata entries:";
  for (const auto& [key, value] : set.metadata) {
    os << "\n  '" << PrintableText(key) << "': '" << PrintableText(value) << "'";
  }
}

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_TENSOR_SET_GEN_H_
