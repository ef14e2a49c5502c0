// SPDX-License-Identifier: Apache-2.0
// ggml's tensor type table as data: id, name, elements per block, bytes per block, and the
// safetensors dtype of the plain types. A new ggml type is one row. The test
// tests/gguf_reference_test.py checks every row against ggml's own ggml_type_name,
// ggml_blck_size and ggml_type_size.
#include <array>
#include <span>

#include "stguard/gguf.h"

namespace stguard::gguf {

namespace {

// Ids 4 and 5 (the old Q4_2/Q4_3), 31..33 (Q4_0_4_4...) and 36..38 (IQ4_NL_4_4...) were
// removed from ggml; ggml reports them with block size 0, and they have no row here.
constexpr std::array<GgmlType, 35> kTypes = {{
    {0, "f32", 1, 4, Dtype::kF32},
    {1, "f16", 1, 2, Dtype::kF16},
    {2, "q4_0", 32, 18, std::nullopt},
    {3, "q4_1", 32, 20, std::nullopt},
    {6, "q5_0", 32, 22, std::nullopt},
    {7, "q5_1", 32, 24, std::nullopt},
    {8, "q8_0", 32, 34, std::nullopt},
    {9, "q8_1", 32, 36, std::nullopt},
    {10, "q2_K", 256, 84, std::nullopt},
    {11, "q3_K", 256, 110, std::nullopt},
    {12, "q4_K", 256, 144, std::nullopt},
    {13, "q5_K", 256, 176, std::nullopt},
    {14, "q6_K", 256, 210, std::nullopt},
    {15, "q8_K", 256, 292, std::nullopt},
    {16, "iq2_xxs", 256, 66, std::nullopt},
    {17, "iq2_xs", 256, 74, std::nullopt},
    {18, "iq3_xxs", 256, 98, std::nullopt},
    {19, "iq1_s", 256, 50, std::nullopt},
    {20, "iq4_nl", 32, 18, std::nullopt},
    {21, "iq3_s", 256, 110, std::nullopt},
    {22, "iq2_s", 256, 82, std::nullopt},
    {23, "iq4_xs", 256, 136, std::nullopt},
    {24, "i8", 1, 1, Dtype::kI8},
    {25, "i16", 1, 2, Dtype::kI16},
    {26, "i32", 1, 4, Dtype::kI32},
    {27, "i64", 1, 8, Dtype::kI64},
    {28, "f64", 1, 8, Dtype::kF64},
    {29, "iq1_m", 256, 56, std::nullopt},
    {30, "bf16", 1, 2, Dtype::kBF16},
    {34, "tq1_0", 256, 54, std::nullopt},
    {35, "tq2_0", 256, 66, std::nullopt},
    {39, "mxfp4", 32, 17, std::nullopt},
    {40, "nvfp4", 64, 36, std::nullopt},
    {41, "q1_0", 128, 18, std::nullopt},
    {42, "q2_0", 64, 18, std::nullopt},
}};

// kRowOfId maps an id to its row in kTypes, or -1 for a removed id.
constexpr std::array<int8_t, kNumGgmlTypeIds> MakeRowOfId() {
  std::array<int8_t, kNumGgmlTypeIds> rows{};
  for (auto& row : rows) row = -1;
  for (size_t i = 0; i < kTypes.size(); ++i) rows[kTypes[i].id] = static_cast<int8_t>(i);
  return rows;
}
constexpr std::array<int8_t, kNumGgmlTypeIds> kRowOfId = MakeRowOfId();

}  // namespace

const GgmlType* FindGgmlType(uint32_t id) {
  if (id >= kNumGgmlTypeIds || kRowOfId[id] < 0) return nullptr;
  return &kTypes[static_cast<size_t>(kRowOfId[id])];
}

std::span<const GgmlType> GgmlTypes() { return kTypes; }

}  // namespace stguard::gguf
