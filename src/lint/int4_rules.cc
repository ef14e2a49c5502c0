// SPDX-License-Identifier: Apache-2.0
// CheckInt4: the format page's int4 contract. A linear module <m> of shape [out, in] is
// stored as <m>.qweight (U8, [out, in / 2]) and <m>.scales (F16, [out, in / group]), and
// the metadata says "quant": "int4-g<group>-sym". [out, in] comes from the family's row
// for <m>.weight when the family knows <m>, so a quantized k_proj is checked against
// num_key_value_heads exactly like a plain one; otherwise from the qweight itself.
#include <algorithm>
#include <limits>
#include <tuple>

#include "lint/engine.h"

namespace stguard::lint {
namespace {

// kMaxGroup bounds the group size read from the metadata (no quantizer uses more).
constexpr uint64_t kMaxGroup = uint64_t{1} << 32;

// ParseQuant reads "int4-g<group>-sym" (group: decimal, no leading zero, 1..kMaxGroup).
bool ParseQuant(std::string_view quant, uint64_t* group) {
  constexpr std::string_view kHead = "int4-g";
  constexpr std::string_view kTail = "-sym";
  if (quant.size() <= kHead.size() + kTail.size() || quant.substr(0, kHead.size()) != kHead ||
      quant.substr(quant.size() - kTail.size()) != kTail) {
    return false;
  }
  const std::string_view digits =
      quant.substr(kHead.size(), quant.size() - kHead.size() - kTail.size());
  if (digits[0] == '0' || digits.size() > 10) return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > kMaxGroup) return false;
  *group = value;
  return true;
}

std::string Shape2(uint64_t a, uint64_t b) {
  const uint64_t dims[2] = {a, b};
  return ShapeText(dims, 2);
}

}  // namespace

void CheckInt4(std::span<const ShardRef> shards, std::span<const TensorRef> tensors,
               std::span<const TensorRowMatch> matches, const ModelSpec& spec,
               Findings* findings) {
  // 1. The "quant" metadata of every shard: one value, well formed.
  std::optional<std::string_view> quant;
  std::string_view quant_file;
  bool group_known = false;
  uint64_t group = 0;
  for (const ShardRef& shard : shards) {
    const std::optional<std::string_view> value = shard.checkpoint->FindMetadata("quant");
    if (!value) continue;
    if (!quant) {
      quant = *value;
      quant_file = shard.name;
      group_known = ParseQuant(*value, &group);
      if (!group_known) {
        findings->Error("int4-quant-metadata", {}, "int4-g<group>-sym",
                        PrintableText(value->substr(0, 64)),
                        "the \"quant\" metadata is not of the form int4-g<group>-sym",
                        std::string(shard.name));
      }
    } else if (*value != *quant) {
      findings->Error("int4-quant-metadata", {}, PrintableText(quant->substr(0, 64)),
                      PrintableText(value->substr(0, 64)),
                      "shards disagree about the \"quant\" metadata (first seen in " +
                          PrintableText(quant_file) + ")",
                      std::string(shard.name));
    }
  }

  // 2. The qweight/scales tensors, grouped by module name.
  struct Part {
    std::string_view module;
    int part;
    uint32_t tensor;
  };
  std::vector<Part> parts;
  for (uint32_t t = 0; t < tensors.size(); ++t) {
    std::string_view module;
    const int part = Int4Part(tensors[t].view->name, &module);
    if (part != 0) parts.push_back(Part{module, part, t});
  }
  if (parts.empty()) {
    if (quant) {
      findings->Error("int4-quant-metadata", {}, "int4 qweight/scales pairs", "none",
                      "the metadata says \"quant\": \"" + PrintableText(quant->substr(0, 64)) +
                          "\", but no tensor is an int4 qweight or scales",
                      std::string(quant_file));
    }
    return;
  }
  if (!quant) {
    findings->Error("int4-quant-metadata", std::string(tensors[parts[0].tensor].view->name),
                    "\"quant\": \"int4-g<group>-sym\"", "absent",
                    "int4 qweight/scales tensors need \"quant\" in the metadata: without it the "
                    "group size is unknown");
  }
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return std::tie(a.module, a.part) < std::tie(b.module, b.part);
  });

  for (size_t i = 0; i < parts.size();) {
    const TensorView* qweight = nullptr;
    const TensorView* scales = nullptr;
    uint32_t any = parts[i].tensor;
    const std::string_view module = parts[i].module;
    for (; i < parts.size() && parts[i].module == module; ++i) {
      (parts[i].part == 1 ? qweight : scales) = tensors[parts[i].tensor].view;
    }
    const std::string module_name(module);
    if (qweight == nullptr || scales == nullptr) {
      const bool lacks_scales = scales == nullptr;
      findings->Error("int4-unpaired", std::string(tensors[any].view->name),
                      module_name + (lacks_scales ? ".scales" : ".qweight"), "absent",
                      lacks_scales ? "an int4 qweight without its scales"
                                   : "int4 scales without their qweight");
    }
    if (qweight != nullptr && qweight->dtype != Dtype::kU8) {
      findings->Error("int4-dtype", std::string(qweight->name), "U8",
                      std::string(DtypeName(qweight->dtype)),
                      "an int4 qweight packs two 4-bit values per U8 byte");
    }
    if (scales != nullptr && scales->dtype != Dtype::kF16) {
      findings->Error("int4-dtype", std::string(scales->name), "F16",
                      std::string(DtypeName(scales->dtype)), "int4 scales are F16");
    }

    // [out, in]: from the family's row for <module>.weight, else from the qweight.
    bool known = false;
    uint64_t out = 0;
    uint64_t in = 0;
    std::string source = "the family table";
    if (!matches.empty() && matches[any].row >= 0 && spec.family != nullptr) {
      const TensorRow& row = spec.family->rows[static_cast<size_t>(matches[any].row)];
      const RowShape& shape = spec.row_shapes[static_cast<size_t>(matches[any].row)];
      if (shape.known && shape.dims.size() == 2) {
        known = true;
        out = row.int4 == Int4Layout::kInOut ? shape.dims[1] : shape.dims[0];
        in = row.int4 == Int4Layout::kInOut ? shape.dims[0] : shape.dims[1];
      }
    } else if (qweight != nullptr && qweight->shape.size() == 2 &&
               qweight->shape[1] <= std::numeric_limits<uint64_t>::max() / 2) {
      known = true;
      source = "the qweight";
      out = qweight->shape[0];
      in = qweight->shape[1] * 2;
    }
    if (!known) {
      if (qweight != nullptr && qweight->shape.size() != 2) {
        findings->Error("int4-shape", std::string(qweight->name), "[out, in / 2]",
                        ShapeText(qweight->shape),
                        "an int4 qweight has two dimensions");
      }
      continue;
    }
    const std::string weight_shape = Shape2(out, in);
    if (in % 2 != 0) {
      findings->Error("int4-odd-in", module_name, "an even in", weight_shape,
                      "int4 packs two columns per byte, so in must be even (from " + source +
                          ")");
      continue;  // no packing exists: the group and scales checks would only repeat it
    }
    if (qweight != nullptr &&
               !(qweight->shape.size() == 2 && qweight->shape[0] == out &&
                 qweight->shape[1] == in / 2)) {
      findings->Error("int4-shape", std::string(qweight->name), Shape2(out, in / 2),
                      ShapeText(qweight->shape),
                      "a qweight is [out, in / 2] for the weight " + weight_shape + " (from " +
                          source + ")");
    }
    if (!group_known) continue;
    if (in % group != 0) {
      findings->Error("int4-group", module_name, "in divisible by " + std::to_string(group),
                      weight_shape,
                      "the group size " + std::to_string(group) + " does not divide in = " +
                          std::to_string(in));
    } else if (scales != nullptr && !(scales->shape.size() == 2 && scales->shape[0] == out &&
                                      scales->shape[1] == in / group)) {
      findings->Error("int4-shape", std::string(scales->name), Shape2(out, in / group),
                      ShapeText(scales->shape),
                      "scales are [out, in / group] for the weight " + weight_shape +
                          " and group " + std::to_string(group) + " (from " + source + ")");
    }
  }
}

}  // namespace stguard::lint
