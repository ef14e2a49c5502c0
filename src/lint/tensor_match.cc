// SPDX-License-Identifier: Apache-2.0
// CheckTensorsAgainstFamily: every tensor name matched against the family's rows, then the
// family rules (see engine.h), in four stages: match, check each group, report missing
// rows, report unknown names (with a bounded "did you mean"). Matching is O(T * R *
// prefixes) string comparisons; grouping sorts the T matches; missing tensors are
// enumerated up to the findings cap and counted beyond it, never looping by the config's
// layer count; a suggestion costs O(R * name length) per unknown name pattern.
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

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

// kMaxSuggestionDistance bounds "did you mean": names at most this many single-character
// edits from a row's pattern are suggested. kMaxSuggestedNameLength bounds the names
// compared, so the check stays linear in the tensor count.
constexpr size_t kMaxSuggestionDistance = 2;
constexpr size_t kMaxSuggestedNameLength = 256;

// EditDistanceAtMost returns the Levenshtein distance between a and b when it is at most
// `limit`, and limit + 1 otherwise. Only a band of 2 * limit + 1 cells per row is filled.
size_t EditDistanceAtMost(std::string_view a, std::string_view b, size_t limit) {
  const size_t too_far = limit + 1;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return too_far;
  std::vector<size_t> previous(b.size() + 1, too_far);
  std::vector<size_t> current(b.size() + 1, too_far);
  for (size_t j = 0; j <= std::min(b.size(), limit); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    std::fill(current.begin(), current.end(), too_far);
    if (i <= limit) current[0] = i;
    const size_t from = i > limit ? i - limit : 1;
    const size_t to = std::min(b.size(), i + limit);
    size_t best = current[0];
    for (size_t j = from; j <= to; ++j) {
      const size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({substitute, previous[j] + 1, current[j - 1] + 1, too_far});
      best = std::min(best, current[j]);
    }
    if (best > limit) return too_far;
    std::swap(previous, current);
  }
  return std::min(previous[b.size()], too_far);
}

// Hit is one tensor that matched a row.
struct Hit {
  uint32_t row;
  uint64_t layer;
  uint32_t tensor;
  uint8_t part;    // 0 plain, 1 qweight, 2 scales
  uint8_t prefix;  // index into the family's prefixes
};

// UnknownNames counts the tensors of one unknown name pattern and keeps the least name.
struct UnknownNames {
  uint64_t count = 0;
  std::string_view first;
};

// Matching is stage 1's result: every hit, the unknown names, the prefix most used.
struct Matching {
  std::vector<RowPattern> patterns;
  std::vector<Hit> hits;
  std::map<std::string, UnknownNames> unknown;  // by NamePattern
  size_t prefix = 0;
};

// Presence is what stage 2 saw: which expected rows are present, and floating tensors
// whose dtype differs from torch_dtype (count and least name per dtype).
struct Presence {
  std::vector<uint8_t> global_present;
  uint64_t layered_present = 0;  // distinct (layer < num_layers, expected row) groups
  std::map<Dtype, UnknownNames> off_dtype;
};

// MatchOne finds the row `target` matches under one of the family's prefixes.
bool MatchOne(std::string_view target, int part, const Family& family, const Matching& matching,
              Hit* out) {
  for (size_t p = 0; p < family.prefixes.size(); ++p) {
    const std::string_view prefix = family.prefixes[p];
    for (uint32_t r = 0; r < family.rows.size(); ++r) {
      const TensorRow& row = family.rows[r];
      std::string_view candidate = target;
      if (row.unprefixed) {
        if (p != 0) continue;
      } else {
        if (candidate.substr(0, prefix.size()) != prefix) continue;
        candidate.remove_prefix(prefix.size());
      }
      uint64_t layer = 0;
      if (!MatchPattern(candidate, matching.patterns[r], &layer)) continue;
      if (part != 0 && row.int4 == Int4Layout::kNone) break;  // int4 of a non-linear
      *out = Hit{r, layer, 0, static_cast<uint8_t>(part), static_cast<uint8_t>(p)};
      return true;
    }
  }
  return false;
}

// MatchNames is stage 1: every name matched against the rows. A qweight/scales tensor
// matches through its module's ".weight".
void MatchNames(std::span<const TensorRef> tensors, const Family& family, Matching* matching,
                std::vector<TensorRowMatch>* out_matches) {
  for (const TensorRow& row : family.rows) matching->patterns.push_back(SplitPattern(row.pattern));
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
    Hit hit{};
    if (MatchOne(target, part, family, *matching, &hit)) {
      hit.tensor = t;
      matching->hits.push_back(hit);
      (*out_matches)[t] = TensorRowMatch{static_cast<int32_t>(hit.row), hit.layer};
      if (!family.rows[hit.row].unprefixed) ++prefix_uses[hit.prefix];
    } else {
      UnknownNames& entry = matching->unknown[NamePattern(name)];
      if (entry.count++ == 0 || name < entry.first) entry.first = name;
    }
  }
  matching->prefix = static_cast<size_t>(
      std::max_element(prefix_uses.begin(), prefix_uses.end()) - prefix_uses.begin());
}

// CheckShapeAndDtype applies wrong-shape and wrong-dtype to one plain tensor of a row.
void CheckShapeAndDtype(const TensorRef& tensor, const TensorRow& row, const RowShape& shape,
                        const ModelSpec& spec, Presence* presence, Findings* findings) {
  const TensorView& view = *tensor.view;
  if (shape.known && !std::equal(shape.dims.begin(), shape.dims.end(), view.shape.begin(),
                                 view.shape.end())) {
    LintFinding finding;
    finding.severity = LintSeverity::kError;
    finding.rule = "wrong-shape";
    finding.file = std::string(tensor.shard_name);
    finding.tensor = std::string(view.name);
    finding.expected = ShapeText(shape.dims.data(), shape.dims.size());
    finding.found = ShapeText(view.shape);
    finding.expected_shape = shape.dims;
    finding.found_shape = std::vector<uint64_t>(view.shape.begin(), view.shape.end());
    finding.transposed = shape.dims.size() == 2 && view.shape.size() == 2 &&
                         shape.dims[0] == view.shape[1] && shape.dims[1] == view.shape[0];
    finding.message = finding.transposed
                          ? "the shape is transposed: the two dimensions are swapped"
                          : "the shape differs from what config.json implies";
    if (!shape.formula.empty()) finding.message += " (" + shape.formula + ")";
    findings->Add(std::move(finding));
  }
  if (row.dtype && view.dtype != *row.dtype) {
    findings->Error("wrong-dtype", std::string(view.name), std::string(DtypeName(*row.dtype)),
                    std::string(DtypeName(view.dtype)),
                    "the format page requires this dtype for this tensor",
                    std::string(tensor.shard_name));
  } else if (!row.dtype && spec.torch_dtype && IsConvertibleFloat(view.dtype) &&
             view.dtype != *spec.torch_dtype) {
    UnknownNames& entry = presence->off_dtype[view.dtype];
    if (entry.count++ == 0 || view.name < entry.first) entry.first = view.name;
  }
}

// CheckGroup applies the rules of one group of hits (one row, one layer): layer range,
// duplicates, unexpected rows, then shape and dtype of each plain tensor.
void CheckGroup(std::span<const TensorRef> tensors, std::span<const Hit> group,
                const ModelSpec& spec, const Matching& matching, Presence* presence,
                Findings* findings) {
  const Family& family = *spec.family;
  const Hit& first = group.front();
  const TensorRow& row = family.rows[first.row];
  const RowPattern& pattern = matching.patterns[first.row];
  const TensorRef& first_tensor = tensors[first.tensor];
  const std::string first_name(first_tensor.view->name);
  const std::string first_file(first_tensor.shard_name);
  if (pattern.layered && spec.layers_known && first.layer >= spec.num_layers) {
    for (const Hit& hit : group) {
      findings->Error("layer-out-of-range", std::string(tensors[hit.tensor].view->name),
                      "layer < " + std::to_string(spec.num_layers),
                      first.layer == kNoLayer ? "a layer beyond 2^64"
                                              : "layer " + std::to_string(first.layer),
                      "the config has " + std::to_string(spec.num_layers) + " layers (" +
                          std::string(family.layers_field) + ")",
                      std::string(tensors[hit.tensor].shard_name));
    }
    return;
  }
  int counts[3] = {0, 0, 0};
  for (const Hit& hit : group) ++counts[hit.part];
  if (counts[0] > 1 || counts[1] > 1 || counts[2] > 1) {
    findings->Error("duplicate-tensor", first_name, {}, {},
                    "one tensor of the table is stored under several names (with and "
                    "without a prefix)", first_file);
  } else if (counts[0] == 1 && counts[1] + counts[2] > 0) {
    findings->Error("duplicate-tensor", first_name, {}, {},
                    "this weight is stored both plainly and as an int4 qweight/scales pair",
                    first_file);
  }
  if (!spec.RowExpected(row) && row.when != When::kOptional) {
    const std::string_view rule =
        row.unexpected_rule.empty() ? std::string_view("unexpected-tensor") : row.unexpected_rule;
    findings->Warning(rule, first_name, {}, {},
                      "present although config.json sets " + std::string(row.when_field) +
                          " to " + (row.when == When::kIfTrue ? "false" : "true") +
                          ": loaders ignore it", first_file);
  } else if (spec.RowExpected(row)) {
    if (pattern.layered) {
      ++presence->layered_present;
    } else {
      presence->global_present[first.row] = 1;
    }
  }
  for (const Hit& hit : group) {
    if (hit.part != 0) continue;  // int4 parts: int4_rules.cc
    CheckShapeAndDtype(tensors[hit.tensor], row, spec.row_shapes[first.row], spec, presence,
                       findings);
  }
}

// CheckGroups is stage 2: the hits sorted and walked grouped by (row kind, layer, row).
void CheckGroups(std::span<const TensorRef> tensors, const ModelSpec& spec, Matching* matching,
                 Presence* presence, Findings* findings) {
  std::vector<Hit>& hits = matching->hits;
  auto key = [&](const Hit& hit) {
    return std::make_tuple(matching->patterns[hit.row].layered, hit.layer, hit.row, hit.part,
                           hit.tensor);
  };
  std::sort(hits.begin(), hits.end(), [&](const Hit& a, const Hit& b) { return key(a) < key(b); });
  presence->global_present.assign(spec.family->rows.size(), 0);
  for (size_t begin = 0; begin < hits.size();) {
    size_t end = begin;
    while (end < hits.size() && hits[end].row == hits[begin].row &&
           hits[end].layer == hits[begin].layer) {
      ++end;
    }
    CheckGroup(tensors, std::span(hits).subspan(begin, end - begin), spec, *matching, presence,
               findings);
    begin = end;
  }
}

// ReportMissingOne reports row r (at `layer`) as missing.
void ReportMissingOne(const ModelSpec& spec, const Matching& matching, uint32_t r,
                      uint64_t layer, Findings* findings) {
  const TensorRow& row = spec.family->rows[r];
  const RowShape& shape = spec.row_shapes[r];
  const std::string_view rule =
      row.missing_rule.empty() ? std::string_view("missing-tensor") : row.missing_rule;
  std::string message = "config.json implies this tensor, but no shard holds it";
  if (row.when != When::kAlways) {
    message = "config.json sets " + std::string(row.when_field) + " to " +
              (row.when == When::kIfTrue ? "true" : "false") + ", but no shard holds it";
  }
  LintFinding finding;
  finding.severity = LintSeverity::kError;
  finding.rule = std::string(rule);
  finding.tensor = RowName(spec.family->prefixes[matching.prefix], row, matching.patterns[r], layer);
  if (shape.known) {
    finding.expected = ShapeText(shape.dims.data(), shape.dims.size());
    finding.expected_shape = shape.dims;
    if (!shape.formula.empty()) message += " (" + shape.formula + ")";
  }
  finding.found = "absent";
  finding.message = std::move(message);
  findings->Add(std::move(finding));
}

// ReportMissing is stage 3: missing global rows, then layers in order, enumerated up to
// the cap and counted beyond it. Each loop step either finds a complete layer (at most T
// of them) or lists a missing tensor (at most kMaxFindingsPerRule), so it ends quickly
// whatever num_layers says.
void ReportMissing(const ModelSpec& spec, const Matching& matching, const Presence& presence,
                   Findings* findings) {
  const Family& family = *spec.family;
  std::vector<uint32_t> layered_rows;
  for (uint32_t r = 0; r < family.rows.size(); ++r) {
    if (!spec.RowExpected(family.rows[r])) continue;
    if (matching.patterns[r].layered) {
      layered_rows.push_back(r);
    } else if (!presence.global_present[r]) {
      ReportMissingOne(spec, matching, r, 0, findings);
    }
  }
  if (!spec.layers_known || layered_rows.empty()) return;
  // expected = num_layers * rows, saturating; the hits of layers in range are sorted.
  const uint64_t per_layer = layered_rows.size();
  const uint64_t expected =
      spec.num_layers > kNoLayer / per_layer ? kNoLayer : spec.num_layers * per_layer;
  const uint64_t missing = expected - presence.layered_present;
  const std::vector<Hit>& hits = matching.hits;
  uint64_t listed = 0;
  size_t cursor = 0;  // into hits, at the first layered hit of the current layer
  while (cursor < hits.size() && !matching.patterns[hits[cursor].row].layered) ++cursor;
  for (uint64_t layer = 0;
       layer < spec.num_layers && listed < missing && listed < kMaxFindingsPerRule; ++layer) {
    size_t layer_end = cursor;
    while (layer_end < hits.size() && hits[layer_end].layer == layer) ++layer_end;
    for (uint32_t r : layered_rows) {
      bool present = false;
      for (size_t i = cursor; i < layer_end && !present; ++i) present = hits[i].row == r;
      if (!present && listed < kMaxFindingsPerRule) {
        ReportMissingOne(spec, matching, r, layer, findings);
        ++listed;
      }
    }
    cursor = layer_end;
  }
  // Rule ids of layered rows are "missing-tensor" (only lm_head has its own, unlayered).
  if (missing > listed) {
    findings->AddUnlisted(LintSeverity::kError, "missing-tensor", missing - listed);
  }
}

// SuggestRow returns the row pattern (with the prefix most used) nearest to an unknown
// name pattern, within kMaxSuggestionDistance edits; the first row wins a tie. Empty when
// none is that near.
std::string SuggestRow(std::string_view name_pattern, const Family& family,
                       const Matching& matching) {
  if (name_pattern.size() > kMaxSuggestedNameLength) return {};
  std::string best;
  size_t best_distance = kMaxSuggestionDistance + 1;
  for (const TensorRow& row : family.rows) {
    std::string candidate =
        row.unprefixed ? std::string() : std::string(family.prefixes[matching.prefix]);
    candidate += row.pattern;
    const size_t distance = EditDistanceAtMost(name_pattern, candidate, kMaxSuggestionDistance);
    if (distance < best_distance) {
      best_distance = distance;
      best = std::move(candidate);
    }
  }
  return best;
}

// ReportUnknown is stage 4: unknown names, one finding per name pattern (with a "did you
// mean" when a row is near), and dtypes that differ from torch_dtype.
void ReportUnknown(const ModelSpec& spec, const Matching& matching, const Presence& presence,
                   Findings* findings) {
  const Family& family = *spec.family;
  for (const auto& [name_pattern, entry] : matching.unknown) {
    std::string message = "the " + std::string(family.name) +
                          " family has no tensor named like " + name_pattern +
                          "; loaders ignore it";
    // NamePattern writes {i} for layer numbers, as the table's patterns do.
    if (const std::string near = SuggestRow(name_pattern, family, matching); !near.empty()) {
      message += "; did you mean " + near + "?";
    }
    findings->Warning("unknown-tensor", std::string(entry.first), {},
                      std::to_string(entry.count) + (entry.count == 1 ? " tensor" : " tensors"),
                      std::move(message));
  }
  for (const auto& [dtype, entry] : presence.off_dtype) {
    findings->Warning("dtype-mismatch", std::string(entry.first),
                      std::string(DtypeName(*spec.torch_dtype)), std::string(DtypeName(dtype)),
                      std::to_string(entry.count) + " weight tensor(s) are " +
                          std::string(DtypeName(dtype)) + " but config.json's torch_dtype is " +
                          spec.torch_dtype_text);
  }
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
  Matching matching;
  MatchNames(tensors, *spec.family, &matching, out_matches);
  Presence presence;
  CheckGroups(tensors, spec, &matching, &presence, findings);
  ReportMissing(spec, matching, presence, findings);
  ReportUnknown(spec, matching, presence, findings);
}

}  // namespace stguard::lint
