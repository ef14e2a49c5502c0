// SPDX-License-Identifier: Apache-2.0
// CheckTensorsAgainstFamily: every tensor name matched against the family's rows, then the
// family rules (see engine.h). Matching is O(T * R * prefixes) string comparisons; grouping
// sorts the T matches; missing tensors are enumerated up to the findings cap and counted
// beyond it, never looping by the config's layer count.
#include <algorithm>
#include <limits>
#include <map>

#include "lint/engine.h"

namespace stguard::lint {
namespace {

constexpr uint64_t kNoLayer = std::numeric_limits<uint64_t>::max();

// RowPattern is a row's pattern split at "{i}".
struct RowPattern {
  std::string_view head;
  std::string_view tail;
  bool layered = false;
};

RowPattern SplitPattern(std::string_view pattern) {
  const size_t at = pattern.find("{i}");
  if (at == std::string_view::npos) return RowPattern{pattern, {}, false};
  return RowPattern{pattern.substr(0, at), pattern.substr(at + 3), true};
}

// MatchPattern says whether `name` is `pattern` with a layer index (no leading zeros; an
// index beyond 64 bits becomes kNoLayer, which is out of range of any layer count).
bool MatchPattern(std::string_view name, const RowPattern& pattern, uint64_t* layer) {
  if (!pattern.layered) {
    *layer = 0;
    return name == pattern.head;
  }
  if (name.size() <= pattern.head.size() + pattern.tail.size() ||
      name.substr(0, pattern.head.size()) != pattern.head ||
      name.substr(name.size() - pattern.tail.size()) != pattern.tail) {
    return false;
  }
  const std::string_view digits =
      name.substr(pattern.head.size(), name.size() - pattern.head.size() - pattern.tail.size());
  if (digits.size() > 1 && digits[0] == '0') return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  uint64_t value = 0;
  for (char c : digits) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (kNoLayer - 1 - digit) / 10) {
      value = kNoLayer;
      break;
    }
    value = value * 10 + digit;
  }
  *layer = value;
  return true;
}

// Hit is one tensor that matched a row.
struct Hit {
  uint32_t row;
  uint64_t layer;
  uint32_t tensor;
  uint8_t part;    // 0 plain, 1 qweight, 2 scales
  uint8_t prefix;  // index into the family's prefixes
};

// NamePattern replaces each all-digit dot-separated component with {i}, so that the
// unknown names of 400 layers collapse to one line.
std::string NamePattern(std::string_view name) {
  std::string out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(start, end - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    out += digits ? std::string_view("{i}") : part;
    if (end == name.size()) break;
    out += '.';
    start = end + 1;
  }
  return out;
}

std::string RowName(std::string_view prefix, const TensorRow& row, const RowPattern& pattern,
                    uint64_t layer) {
  std::string name = row.unprefixed ? std::string() : std::string(prefix);
  name += pattern.head;
  if (pattern.layered) {
    name += std::to_string(layer);
    name += pattern.tail;
  }
  return name;
}

}  // namespace

int Int4Part(std::string_view name, std::string_view* out_module) {
  constexpr std::string_view kQweight = ".qweight";
  constexpr std::string_view kScales = ".scales";
  if (name.size() > kQweight.size() && name.substr(name.size() - kQweight.size()) == kQweight) {
    *out_module = name.substr(0, name.size() - kQweight.size());
    return 1;
  }
  if (name.size() > kScales.size() && name.substr(name.size() - kScales.size()) == kScales) {
    *out_module = name.substr(0, name.size() - kScales.size());
    return 2;
  }
  *out_module = {};
  return 0;
}

void CheckTensorsAgainstFamily(std::span<const TensorRef> tensors, const ModelSpec& spec,
                               Findings* findings, std::vector<TensorRowMatch>* out_matches) {
  out_matches->assign(tensors.size(), TensorRowMatch{});
  if (spec.family == nullptr) return;
  const Family& family = *spec.family;
  std::vector<RowPattern> patterns;
  for (const TensorRow& row : family.rows) patterns.push_back(SplitPattern(row.pattern));

  // 1. Match every name. A qweight/scales tensor matches through its module's ".weight".
  std::vector<Hit> hits;
  std::map<std::string, std::pair<uint64_t, std::string_view>> unknown;  // pattern -> count
  std::vector<uint64_t> prefix_uses(family.prefixes.size(), 0);
  std::string base;
  for (uint32_t t = 0; t < tensors.size(); ++t) {
    const std::string_view name = tensors[t].view->name;
    std::string_view module;
    const int part = Int4Part(name, &module);
    std::string_view target = name;
    if (part != 0) {
      base.assign(module);
      base += ".weight";
      target = base;
    }
    bool matched = false;
    for (size_t p = 0; p < family.prefixes.size() && !matched; ++p) {
      const std::string_view prefix = family.prefixes[p];
      for (uint32_t r = 0; r < family.rows.size() && !matched; ++r) {
        const TensorRow& row = family.rows[r];
        std::string_view candidate = target;
        if (row.unprefixed) {
          if (p != 0) continue;
        } else {
          if (candidate.substr(0, prefix.size()) != prefix) continue;
          candidate.remove_prefix(prefix.size());
        }
        uint64_t layer = 0;
        if (!MatchPattern(candidate, patterns[r], &layer)) continue;
        if (part != 0 && row.int4 == Int4Layout::kNone) break;  // int4 of a non-linear
        matched = true;
        hits.push_back(Hit{r, layer, t, static_cast<uint8_t>(part), static_cast<uint8_t>(p)});
        (*out_matches)[t] = TensorRowMatch{static_cast<int32_t>(r), layer};
        if (!row.unprefixed) ++prefix_uses[p];
      }
    }
    if (!matched) {
      auto& entry = unknown[NamePattern(name)];
      if (entry.first++ == 0 || name < entry.second) entry.second = name;
    }
  }
  const size_t prefix =
      static_cast<size_t>(std::max_element(prefix_uses.begin(), prefix_uses.end()) -
                          prefix_uses.begin());

  // 2. Walk the hits grouped by (row kind, layer, row).
  auto key = [&](const Hit& hit) {
    return std::make_tuple(patterns[hit.row].layered, hit.layer, hit.row, hit.part, hit.tensor);
  };
  std::sort(hits.begin(), hits.end(), [&](const Hit& a, const Hit& b) { return key(a) < key(b); });
  std::map<Dtype, std::pair<uint64_t, std::string_view>> off_dtype;  // vs torch_dtype
  std::vector<uint8_t> global_present(family.rows.size(), 0);
  uint64_t layered_present = 0;  // distinct (layer < num_layers, expected row) groups
  for (size_t begin = 0; begin < hits.size();) {
    size_t end = begin;
    int counts[3] = {0, 0, 0};
    while (end < hits.size() && hits[end].row == hits[begin].row &&
           hits[end].layer == hits[begin].layer) {
      ++counts[hits[end].part];
      ++end;
    }
    const Hit& first = hits[begin];
    const TensorRow& row = family.rows[first.row];
    const RowPattern& pattern = patterns[first.row];
    const RowShape& shape = spec.row_shapes[first.row];
    const std::string_view first_name = tensors[first.tensor].view->name;
    if (pattern.layered && spec.layers_known && first.layer >= spec.num_layers) {
      for (size_t i = begin; i < end; ++i) {
        findings->Error("layer-out-of-range", std::string(tensors[hits[i].tensor].view->name),
                        "layer < " + std::to_string(spec.num_layers),
                        first.layer == kNoLayer ? "a layer beyond 2^64"
                                                : "layer " + std::to_string(first.layer),
                        "the config has " + std::to_string(spec.num_layers) + " layers (" +
                            std::string(family.layers_field) + ")");
      }
      begin = end;
      continue;
    }
    if (counts[0] > 1 || counts[1] > 1 || counts[2] > 1) {
      findings->Error("duplicate-tensor", std::string(first_name), {}, {},
                      "one tensor of the table is stored under several names (with and "
                      "without a prefix)");
    } else if (counts[0] == 1 && counts[1] + counts[2] > 0) {
      findings->Error("duplicate-tensor", std::string(first_name), {}, {},
                      "this weight is stored both plainly and as an int4 qweight/scales pair");
    }
    if (!spec.RowExpected(row) && row.when != When::kOptional) {
      const std::string_view rule =
          row.unexpected_rule.empty() ? std::string_view("unexpected-tensor") : row.unexpected_rule;
      findings->Warning(rule, std::string(first_name), {}, {},
                        "present although config.json sets " + std::string(row.when_field) +
                            " to " + (row.when == When::kIfTrue ? "false" : "true") +
                            ": loaders ignore it");
    } else if (spec.RowExpected(row)) {
      if (pattern.layered) {
        ++layered_present;
      } else {
        global_present[first.row] = 1;
      }
    }
    for (size_t i = begin; i < end; ++i) {
      if (hits[i].part != 0) continue;  // int4 parts: int4_rules.cc
      const TensorView& view = *tensors[hits[i].tensor].view;
      if (shape.known && !std::equal(shape.dims.begin(), shape.dims.end(), view.shape.begin(),
                                     view.shape.end())) {
        LintFinding finding;
        finding.severity = LintSeverity::kError;
        finding.rule = "wrong-shape";
        finding.tensor = std::string(view.name);
        finding.expected = ShapeText(shape.dims.data(), shape.dims.size());
        finding.found = ShapeText(view.shape);
        finding.transposed = shape.dims.size() == 2 && view.shape.size() == 2 &&
                             shape.dims[0] == view.shape[1] && shape.dims[1] == view.shape[0];
        finding.message = finding.transposed
                              ? "the shape is transposed: the two dimensions are swapped"
                              : "the shape differs from what config.json implies";
        findings->Add(std::move(finding));
      }
      if (row.dtype && view.dtype != *row.dtype) {
        findings->Error("wrong-dtype", std::string(view.name), std::string(DtypeName(*row.dtype)),
                        std::string(DtypeName(view.dtype)),
                        "the format page requires this dtype for this tensor");
      } else if (!row.dtype && spec.torch_dtype && IsConvertibleFloat(view.dtype) &&
                 view.dtype != *spec.torch_dtype) {
        auto& entry = off_dtype[view.dtype];
        if (entry.first++ == 0 || view.name < entry.second) entry.second = view.name;
      }
    }
    begin = end;
  }

  // 3. Missing tensors: global rows, then layers in order, enumerated up to the cap.
  const std::string_view shown_prefix = family.prefixes[prefix];
  auto report_missing = [&](uint32_t r, uint64_t layer) {
    const TensorRow& row = family.rows[r];
    const RowShape& shape = spec.row_shapes[r];
    const std::string_view rule =
        row.missing_rule.empty() ? std::string_view("missing-tensor") : row.missing_rule;
    std::string message = "config.json implies this tensor, but no shard holds it";
    if (row.when != When::kAlways) {
      message = "config.json sets " + std::string(row.when_field) + " to " +
                (row.when == When::kIfTrue ? "true" : "false") + ", but no shard holds it";
    }
    findings->Error(rule, RowName(shown_prefix, row, patterns[r], layer),
                    shape.known ? ShapeText(shape.dims.data(), shape.dims.size()) : "",
                    "absent", std::move(message));
  };
  for (uint32_t r = 0; r < family.rows.size(); ++r) {
    if (!patterns[r].layered && spec.RowExpected(family.rows[r]) && !global_present[r]) {
      report_missing(r, 0);
    }
  }
  std::vector<uint32_t> layered_rows;
  for (uint32_t r = 0; r < family.rows.size(); ++r) {
    if (patterns[r].layered && spec.RowExpected(family.rows[r])) layered_rows.push_back(r);
  }
  if (spec.layers_known && !layered_rows.empty()) {
    // expected = num_layers * rows, saturating; the hits of layers in range are sorted.
    const uint64_t per_layer = layered_rows.size();
    const uint64_t expected = spec.num_layers > kNoLayer / per_layer
                                  ? kNoLayer
                                  : spec.num_layers * per_layer;
    const uint64_t missing = expected - layered_present;
    uint64_t listed = 0;
    size_t cursor = 0;  // into hits, at the first layered hit of the current layer
    while (cursor < hits.size() && !patterns[hits[cursor].row].layered) ++cursor;
    // Each loop step either finds a complete layer (at most T of them) or lists a missing
    // tensor (at most kMaxFindingsPerRule), so it ends quickly whatever num_layers says.
    for (uint64_t layer = 0; layer < spec.num_layers && listed < missing &&
                             listed < kMaxFindingsPerRule;
         ++layer) {
      size_t layer_end = cursor;
      while (layer_end < hits.size() && hits[layer_end].layer == layer) ++layer_end;
      for (uint32_t r : layered_rows) {
        bool present = false;
        for (size_t i = cursor; i < layer_end && !present; ++i) present = hits[i].row == r;
        if (!present && listed < kMaxFindingsPerRule) {
          report_missing(r, layer);
          ++listed;
        }
      }
      cursor = layer_end;
    }
    // Rule ids of layered rows are "missing-tensor" (only lm_head has its own, unlayered).
    if (missing > listed) findings->AddUnlisted(LintSeverity::kError, "missing-tensor", missing - listed);
  }

  // 4. Unknown names, one finding per name pattern; dtypes that differ from torch_dtype.
  for (const auto& [name_pattern, entry] : unknown) {
    findings->Warning("unknown-tensor", std::string(entry.second), {},
                      std::to_string(entry.first) + (entry.first == 1 ? " tensor" : " tensors"),
                      "the " + std::string(family.name) + " family has no tensor named like " +
                          name_pattern + "; loaders ignore it");
  }
  for (const auto& [dtype, entry] : off_dtype) {
    findings->Warning("dtype-mismatch", std::string(entry.second),
                      std::string(DtypeName(*spec.torch_dtype)), std::string(DtypeName(dtype)),
                      std::to_string(entry.first) + " weight tensor(s) are " +
                          std::string(DtypeName(dtype)) + " but config.json's torch_dtype is " +
                          spec.torch_dtype_text);
  }
}

}  // namespace stguard::lint
