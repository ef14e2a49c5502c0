// SPDX-License-Identifier: Apache-2.0
// ggml's own block quantizers and dequantizers (quantize_row_*_ref, dequantize_row_*),
// reached through ggml_get_type_traits in the test-only reference library (see
// support/ggml_reference.h). The oracle the conversion tests compare bits with.
#ifndef STGUARD_TESTS_SUPPORT_GGML_QUANT_REFERENCE_H_
#define STGUARD_TESTS_SUPPORT_GGML_QUANT_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "support/ggml_reference.h"

namespace stguard::testing {

// GgmlQuantReference wraps the type traits of one loaded reference library.
class GgmlQuantReference {
 public:
  explicit GgmlQuantReference(const GgmlReference& reference);

  // CanDequantize: the reference has a to_float for `type` (a quantized type).
  bool CanDequantize(uint32_t type) const;
  // CanQuantize: the reference has a from_float_ref for `type`.
  bool CanQuantize(uint32_t type) const;
  // Dequantize decodes `num_elements` elements of `type` from `blocks`.
  std::vector<float> Dequantize(uint32_t type, const std::string& blocks,
                                int64_t num_elements) const;
  // Quantize encodes `values` (a multiple of the block size) as blocks of `type`.
  std::string Quantize(uint32_t type, const std::vector<float>& values) const;

 private:
  struct Traits;
  const Traits* TraitsOf(uint32_t type) const;
  const void* (*get_traits_)(int) = nullptr;
  const GgmlReference& reference_;
};

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_GGML_QUANT_REFERENCE_H_
