// SPDX-License-Identifier: Apache-2.0
#include "support/ggml_quant_reference.h"

namespace stguard::testing {

// ggml_type_traits of ggml 0.4.0 (node-llama-cpp 3.21.1), as far as the tests use it.
struct GgmlQuantReference::Traits {
  const char* type_name;
  int64_t blck_size;
  int64_t blck_size_interleave;
  size_t type_size;
  bool is_quantized;
  void (*to_float)(const void* x, float* y, int64_t k);
  void (*from_float_ref)(const float* x, void* y, int64_t k);
};

GgmlQuantReference::GgmlQuantReference(const GgmlReference& reference) : reference_(reference) {
  get_traits_ = reinterpret_cast<const void* (*)(int)>(reference.Symbol("ggml_get_type_traits"));
}

const GgmlQuantReference::Traits* GgmlQuantReference::TraitsOf(uint32_t type) const {
  if (get_traits_ == nullptr || reference_.BlockSize(type) == 0) return nullptr;
  const auto* traits = static_cast<const Traits*>(get_traits_(static_cast<int>(type)));
  // The layout is checked against the type's own traits before it is trusted.
  if (traits == nullptr || traits->blck_size != reference_.BlockSize(type) ||
      traits->type_size != reference_.TypeSize(type)) {
    return nullptr;
  }
  return traits;
}

bool GgmlQuantReference::CanDequantize(uint32_t type) const {
  const Traits* traits = TraitsOf(type);
  return traits != nullptr && traits->is_quantized && traits->to_float != nullptr;
}

bool GgmlQuantReference::CanQuantize(uint32_t type) const {
  const Traits* traits = TraitsOf(type);
  return traits != nullptr && traits->is_quantized && traits->from_float_ref != nullptr;
}

std::vector<float> GgmlQuantReference::Dequantize(uint32_t type, const std::string& blocks,
                                                  int64_t num_elements) const {
  std::vector<float> out(static_cast<size_t>(num_elements));
  TraitsOf(type)->to_float(blocks.data(), out.data(), num_elements);
  return out;
}

std::string GgmlQuantReference::Quantize(uint32_t type, const std::vector<float>& values) const {
  const Traits* traits = TraitsOf(type);
  // The grid types' quantizers need their tables built first (ggml asserts otherwise).
  if (auto init = reinterpret_cast<void (*)(int)>(reference_.Symbol("ggml_quantize_init"))) {
    init(static_cast<int>(type));
  }
  const auto blocks = static_cast<int64_t>(values.size()) / traits->blck_size;
  std::string out(static_cast<size_t>(blocks) * traits->type_size, '\0');
  traits->from_float_ref(values.data(), out.data(), static_cast<int64_t>(values.size()));
  return out;
}

}  // namespace stguard::testing
