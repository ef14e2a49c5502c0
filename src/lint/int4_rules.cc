// SPDX-License-Identifier: Apache-2.0
// CheckInt4: the format page's int4 contract. A linear module <m> of shape [out, in] is
// stored as <m>.qweight (U8, [out, in / 2]) and <m>.scales (F16, [out, in / group]), and
// the metadata says "quant": "int4-g<group>-sym". [out, in] comes from the family's row
// for <m>.weight when the family knows <m>, so a quantized k_proj is checked against
// num_key_value_heads exactly like a plain one; otherwise from the qweight itself.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

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

// Quant is what the shards' "quant" metadata says.
struct Quant {
  std::optional<std::string_view> value;  // the first value seen
  std::string_view file;                  // the shard it was seen in
  bool group_known = false;
  uint64_t group = 0;
};

// ReadQuant is stage 1: the "quant" metadata of every shard: one value, well formed.
Quant ReadQuant(std::span<const ShardRef> shards, Findings* findings) {
  Quant quant;
  for (const ShardRef& shard : shards) {
    const std::optional<std::string_view> value = shard.checkpoint->FindMetadata("quant");
    if (!value) continue;
    if (!quant.value) {
      quant.value = *value;
      quant.file = shard.name;
      quant.group_known = ParseQuant(*value, &quant.group);
      if (!quant.group_known) {
        findings->Error("int4-quant-metadata", {}, "int4-g<group>-sym",
                        PrintableText(value->substr(0, 64)),
                        "the \"quant\" metadata is not of the form int4-g<group>-sym",
                        std::string(shard.name));
      }
    } else if (*value != *quant.value) {
      findings->Error("int4-quant-metadata", {}, PrintableText(quant.value->substr(0, 64)),
                      PrintableText(value->substr(0, 64)),
                      "shards disagree about the \"quant\" metadata (first seen in " +
                          PrintableText(quant.file) + ")",
                      std::string(shard.name));
    }
  }
  return quant;
}

// Part is one qweight or scales tensor.
struct Part {
  std::string_view module;
  int part;
  uint32_t tensor;
};

// CollectParts lists the qweight/scales tensors sorted by module name, then part.
std::vector<Part> CollectParts(std::span<const TensorRef> tensors) {
  std::vector<Part> parts;
  for (uint32_t t = 0; t < tensors.size(); ++t) {
    std::string_view module;
    const int part = Int4Part(tensors[t].view->name, &module);
    if (part != 0) parts.push_back(Part{module, part, t});
  }
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return std::tie(a.module, a.part) < std::tie(b.module, b.part);
  });
  return parts;
}

// Module is one int4 module: its qweight and scales (either may be absent) and the index
// of one of its tensors.
struct Module {
  std::string name;
  const TensorView* qweight = nullptr;
  const TensorView* scales = nullptr;
  uint32_t any = 0;
};

// CheckPairAndDtypes applies int4-unpaired and int4-dtype to one module.
void CheckPairAndDtypes(const Module& module, std::span<const TensorRef> tensors,
                        Findings* findings) {
  if (module.qweight == nullptr || module.scales == nullptr) {
    const bool lacks_scales = module.scales == nullptr;
    findings->Error("int4-unpaired", std::string(tensors[module.any].view->name),
                    module.name + (lacks_scales ? ".scales" : ".qweight"), "absent",
                    lacks_scales ? "an int4 qweight without its scales"
                                 : "int4 scales without their qweight");
  }
  if (module.qweight != nullptr && module.qweight->dtype != Dtype::kU8) {
    findings->Error("int4-dtype", std::string(module.qweight->name), "U8",
                    std::string(DtypeName(module.qweight->dtype)),
                    "an int4 qweight packs two 4-bit values per U8 byte");
  }
  if (module.scales != nullptr && module.scales->dtype != Dtype::kF16) {
    findings->Error("int4-dtype", std::string(module.scales->name), "F16",
                    std::string(DtypeName(module.scales->dtype)), "int4 scales are F16");
  }
}

// WeightShape is the [out, in] of the weight a module quantizes, and where it came from.
struct WeightShape {
  bool known = false;
  uint64_t out = 0;
  uint64_t in = 0;
  std::string source = "the family table";
};

// FindWeightShape takes [out, in] from the family's row for <module>.weight, else from
// the qweight.
WeightShape FindWeightShape(const Module& module, std::span<const TensorRowMatch> matches,
                            const ModelSpec& spec) {
  WeightShape weight;
  const TensorView* qweight = module.qweight;
  if (!matches.empty() && matches[module.any].row >= 0 && spec.family != nullptr) {
    const auto row_index = static_cast<size_t>(matches[module.any].row);
    const TensorRow& row = spec.family->rows[row_index];
    const RowShape& shape = spec.row_shapes[row_index];
    if (shape.known && shape.dims.size() == 2) {
      weight.known = true;
      weight.out = row.int4 == Int4Layout::kInOut ? shape.dims[1] : shape.dims[0];
      weight.in = row.int4 == Int4Layout::kInOut ? shape.dims[0] : shape.dims[1];
    }
  } else if (qweight != nullptr && qweight->shape.size() == 2 &&
             qweight->shape[1] <= std::numeric_limits<uint64_t>::max() / 2) {
    weight.known = true;
    weight.source = "the qweight";
    weight.out = qweight->shape[0];
    weight.in = qweight->shape[1] * 2;
  }
  return weight;
}

// CheckPacking applies int4-odd-in, int4-shape and int4-group to one module whose weight
// shape is known.
void CheckPacking(const Module& module, const WeightShape& weight, const Quant& quant,
                  Findings* findings) {
  const uint64_t out = weight.out;
  const uint64_t in = weight.in;
  const std::string weight_shape = Shape2(out, in);
  if (in % 2 != 0) {
    findings->Error("int4-odd-in", module.name, "an even in", weight_shape,
                    "int4 packs two columns per byte, so in must be even (from " +
                        weight.source + ")");
    return;  // no packing exists: the group and scales checks would only repeat it
  }
  const TensorView* qweight = module.qweight;
  if (qweight != nullptr && !(qweight->shape.size() == 2 && qweight->shape[0] == out &&
                              qweight->shape[1] == in / 2)) {
    findings->Error("int4-shape", std::string(qweight->name), Shape2(out, in / 2),
                    ShapeText(qweight->shape),
                    "a qweight is [out, in / 2] for the weight " + weight_shape + " (from " +
                        weight.source + ")");
  }
  if (!quant.group_known) return;
  const uint64_t group = quant.group;
  const TensorView* scales = module.scales;
  if (in % group != 0) {
    findings->Error("int4-group", module.name, "in divisible by " + std::to_string(group),
                    weight_shape,
                    "the group size " + std::to_string(group) + " does not divide in = " +
                        std::to_string(in));
  } else if (scales != nullptr && !(scales->shape.size() == 2 && scales->shape[0] == out &&
                                    scales->shape[1] == in / group)) {
    findings->Error("int4-shape", std::string(scales->name), Shape2(out, in / group),
                    ShapeText(scales->shape),
                    "scales are [out, in / group] for the weight " + weight_shape +
                        " and group " + std::to_string(group) + " (from " + weight.source + ")");
  }
}

// CheckModule applies every int4 rule to one module.
void CheckModule(const Module& module, std::span<const TensorRef> tensors,
                 std::span<const TensorRowMatch> matches, const ModelSpec& spec,
                 const Quant& quant, Findings* findings) {
  CheckPairAndDtypes(module, tensors, findings);
  const WeightShape weight = FindWeightShape(module, matches, spec);
  if (weight.known) {
    CheckPacking(module, weight, quant, findings);
  } else if (module.qweight != nullptr && module.qweight->shape.size() != 2) {
    findings->Error("int4-shape", std::string(module.qweight->name), "[out, in / 2]",
                    ShapeText(module.qweight->shape), "an int4 qweight has two dimensions");
  }
}

}  // namespace

void CheckInt4(std::span<const ShardRef> shards, std::span<const TensorRef> tensors,
               std::span<const TensorRowMatch> matches, const ModelSpec& spec,
               Findings* findings) {
  const Quant quant = ReadQuant(shards, findings);
  const std::vector<Part> parts = CollectParts(tensors);
  if (parts.empty()) {
    if (quant.value) {
      findings->Error("int4-quant-metadata", {}, "int4 qweight/scales pairs", "none",
                      "the metadata says \"quant\": \"" +
                          PrintableText(quant.value->substr(0, 64)) +
                          "\", but no tensor is an int4 qweight or scales",
                      std::string(quant.file));
    }
    return;
  }
  if (!quant.value) {
    findings->Error("int4-quant-metadata", std::string(tensors[parts[0].tensor].view->name),
                    "\"quant\": \"int4-g<group>-sym\"", "absent",
                    "int4 qweight/scales tensors need \"quant\" in the metadata: without it the "
                    "group size is unknown");
  }
  for (size_t i = 0; i < parts.size();) {
    Module module;
    module.any = parts[i].tensor;
    const std::string_view name = parts[i].module;
    for (; i < parts.size() && parts[i].module == name; ++i) {
      (parts[i].part == 1 ? module.qweight : module.scales) = tensors[parts[i].tensor].view;
    }
    module.name = std::string(name);
    CheckModule(module, tensors, matches, spec, quant, findings);
  }
}

}  // namespace stguard::lint
