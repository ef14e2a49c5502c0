// SPDX-License-Identifier: Apache-2.0
// config_mutator.cc: structure-aware mutation of config.json + checkpoint pairs. See
// config_mutator.h.
#include "config_mutator.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

#include "lint/engine.h"
#include "stguard/dtype.h"
#include "stguard/options.h"

namespace stguard_fuzz::mutator {
namespace {

using stguard::lint::Family;
using stguard::lint::FieldSpec;
using stguard::lint::FieldType;
using stguard::lint::FieldValue;
using stguard::lint::FormulaError;
using stguard::lint::Int4Layout;
using stguard::lint::TensorRow;

// kMaxFitElements bounds the elements FitConfig lets a fitted config ask for (the rows of
// one layer and the others), so that the rebuilt file fits in the target's max_len of
// 8 KiB without LayOut having to shrink shapes (which would break them).
constexpr uint64_t kMaxFitElements = 1200;

std::string_view ToView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <typename T>
const T& PickOne(std::span<const T> items, Rng& rng) {
  return items[rng.Below(items.size())];
}

// SetMember gives the first member `key` of the object `object` the value `value`, adding
// it at the end if absent.
void SetMember(JsonValue* object, std::string_view key, JsonValue value) {
  for (auto& [name, old] : object->members) {
    if (name == key) {
      old = std::move(value);
      return;
    }
  }
  object->members.emplace_back(std::string(key), std::move(value));
}

void EraseMember(JsonValue* object, std::string_view key) {
  auto& members = object->members;
  members.erase(std::remove_if(members.begin(), members.end(),
                               [key](const auto& member) { return member.first == key; }),
                members.end());
}

JsonValue Literal(JsonValue::Kind kind, std::string text) {
  JsonValue value;
  value.kind = kind;
  value.text = std::move(text);
  return value;
}

// FamilyOf finds the family the config names, in the engine's order (model_type, then
// tl_arch, then architectures[0]); nullptr when it names none.
const Family* FamilyOf(const JsonValue& config) {
  const auto by_type = [](const JsonValue* value) -> const Family* {
    if (value == nullptr || value->kind != JsonValue::Kind::kString) return nullptr;
    for (const Family& family : stguard::lint::Families()) {
      if (std::find(family.model_types.begin(), family.model_types.end(), value->text) !=
          family.model_types.end()) {
        return &family;
      }
    }
    return nullptr;
  };
  if (const JsonValue* type = config.Find("model_type"); type != nullptr) return by_type(type);
  if (const JsonValue* arch = config.Find("tl_arch"); arch != nullptr) return by_type(arch);
  const JsonValue* archs = config.Find("architectures");
  if (archs == nullptr || archs->kind != JsonValue::Kind::kArray || archs->items.empty() ||
      archs->items[0].kind != JsonValue::Kind::kString) {
    return nullptr;
  }
  for (const Family& family : stguard::lint::Families()) {
    if (std::find(family.architectures.begin(), family.architectures.end(),
                  archs->items[0].text) != family.architectures.end()) {
      return &family;
    }
  }
  return nullptr;
}

// CountValue returns a value for a count field: mostly small, sometimes at the edges of
// what 32 and 64 bits hold, sometimes of the wrong kind.
JsonValue CountValue(Rng& rng) {
  static constexpr const char* kNumbers[] = {
      "0", "1", "2", "3", "4", "7", "8", "64", "4294967296", "4294967297",
      "18446744073709551615", "18446744073709551616", "4096.0", "-1", "1e3", "-0"};
  switch (rng.Below(8)) {
    case 0: return JsonValue::String("64");
    case 1: return rng.OneIn(2) ? JsonValue() : Literal(JsonValue::Kind::kBool, "true");
    case 2: return rng.OneIn(2) ? JsonValue::Object() : JsonValue::Array();
    default: return Literal(JsonValue::Kind::kNumber, kNumbers[rng.Below(std::size(kNumbers))]);
  }
}

JsonValue BoolValue(Rng& rng) {
  switch (rng.Below(8)) {
    case 0: return JsonValue();
    case 1: return JsonValue::String("true");
    case 2: return JsonValue::Number(1);
    default: return Literal(JsonValue::Kind::kBool, rng.OneIn(2) ? "true" : "false");
  }
}

// A family's fields are the ones worth changing; a config that names none gets a
// random family's.
const Family& FamilyOrAny(const JsonValue& config, Rng& rng) {
  const Family* family = FamilyOf(config);
  return family != nullptr ? *family : PickOne(stguard::lint::Families(), rng);
}

void MutateConfigTree(JsonValue* config, Rng& rng) {
  const size_t changes = 1 + rng.Below(2);
  for (size_t c = 0; c < changes; ++c) {
    auto& members = config->members;
    switch (rng.Below(10)) {
      case 0:
        SetFamily(rng.Below(stguard::lint::Families().size()), config, rng);
        break;
      case 1:
        FitConfig(config, rng);
        break;
      case 2:
      case 3: {  // a field the family reads gets an odd value, or goes
        const FieldSpec& field = PickOne(FamilyOrAny(*config, rng).fields, rng);
        if (rng.OneIn(5)) {
          EraseMember(config, field.name);
        } else {
          SetMember(config, field.name, field.type == FieldType::kBool ? BoolValue(rng) : CountValue(rng));
        }
        break;
      }
      case 4: {  // the family key of another kind, or naming no family
        static constexpr const char* kKeys[] = {"model_type", "tl_arch", "architectures"};
        const char* key = kKeys[rng.Below(std::size(kKeys))];
        JsonValue value = JsonValue::String(rng.OneIn(2) ? "bert" : RandomName(rng));
        if (rng.OneIn(3)) value = rng.OneIn(2) ? JsonValue::Number(1) : JsonValue::Array();
        if (std::string_view(key) == "architectures" && value.kind == JsonValue::Kind::kString) {
          JsonValue list = JsonValue::Array();
          list.items.push_back(std::move(value));
          value = std::move(list);
        }
        SetMember(config, key, std::move(value));
        break;
      }
      case 5: {
        static constexpr const char* kDtypes[] = {"float16", "bfloat16", "float32", "float64",
                                                  "int8", "float8_e4m3fn", "half", ""};
        SetMember(config, rng.OneIn(4) ? "dtype" : "torch_dtype",
                  rng.OneIn(8) ? JsonValue::Number(16)
                               : JsonValue::String(kDtypes[rng.Below(std::size(kDtypes))]));
        break;
      }
      case 6:
        SetMember(config, "tl_tokenizer", JsonValue::String(rng.OneIn(2) ? "file" : "bpe"));
        break;
      case 7:  // a repeated key: config-duplicate-key
        if (!members.empty()) members.push_back(members[rng.Below(members.size())]);
        break;
      case 8:
        if (!members.empty()) members.erase(members.begin() + static_cast<std::ptrdiff_t>(rng.Below(members.size())));
        break;
      default:
        std::shuffle(members.begin(), members.end(), std::minstd_rand(rng.Bits64() & 0x7fffffff));
        break;
    }
  }
}

// BuiltTensor is a rebuilt tensor with the row and layer it came from, for the changes.
struct BuiltTensor {
  TensorModel tensor;
  const TensorRow* row = nullptr;
  uint64_t layer = UINT64_MAX;  // UINT64_MAX: a row without {i}
};

std::string LayerName(std::string_view prefix, const TensorRow& row, std::string_view layer) {
  std::string name(row.unprefixed ? std::string_view() : prefix);
  const size_t at = row.pattern.find("{i}");
  if (at == std::string_view::npos) return name.append(row.pattern);
  return name.append(row.pattern.substr(0, at)).append(layer).append(row.pattern.substr(at + 3));
}

// Build lists what the engine will expect of the config, as BuildCheckpoint documents.
bool Build(const JsonValue& config, uint64_t max_layers, Rng& rng, std::string* prefix,
           std::vector<BuiltTensor>* out, JsonValue* metadata) {
  std::string text;
  WriteJson(config, JsonStyle{}, rng, &text);
  std::vector<stguard::LintFinding> ignored;
  stguard::lint::Findings findings(&ignored);
  stguard::lint::Config parsed;
  if (!stguard::lint::ReadConfig(text, stguard::kDefaultMaxDepth, &parsed, &findings)) return false;
  stguard::lint::ModelSpec spec;
  stguard::lint::BuildModelSpec(&parsed, &findings, &spec);
  if (spec.family == nullptr) return false;
  const Family& family = *spec.family;
  static constexpr const char* kFloats[] = {"F16", "BF16", "F32"};
  const std::string dtype(spec.torch_dtype ? stguard::DtypeName(*spec.torch_dtype)
                                           : kFloats[rng.Below(std::size(kFloats))]);
  *prefix = std::string(PickOne(family.prefixes, rng));
  const uint64_t layers = spec.layers_known ? std::min(spec.num_layers, max_layers) : 1;
  out->clear();
  for (size_t r = 0; r < family.rows.size(); ++r) {
    const TensorRow& row = family.rows[r];
    const bool wanted = spec.RowExpected(row) || (row.when == stguard::lint::When::kOptional && rng.OneIn(3));
    if (!spec.row_shapes[r].known || !wanted) continue;
    const bool layered = row.pattern.find("{i}") != std::string_view::npos;
    for (uint64_t layer = 0; layer < (layered ? layers : 1); ++layer) {
      BuiltTensor built{{}, &row, layered ? layer : UINT64_MAX};
      built.tensor.name = LayerName(*prefix, row, std::to_string(layer));
      built.tensor.dtype = row.dtype ? std::string(stguard::DtypeName(*row.dtype)) : dtype;
      built.tensor.shape = spec.row_shapes[r].dims;
      out->push_back(std::move(built));
    }
  }
  *metadata = JsonValue::Object();
  const bool course = spec.course || family.name == "bigram";
  if (course || !rng.OneIn(8)) metadata->members.emplace_back("format", JsonValue::String(course ? "tinyllm" : "pt"));
  return true;
}

// Int4Form replaces the linear weight (*tensors)[index] by <m>.qweight and appends
// <m>.scales, mostly as the int4 contract says, sometimes not; returns the group used.
uint64_t Int4Form(std::vector<BuiltTensor>* tensors, size_t index, Rng& rng) {
  BuiltTensor scales = (*tensors)[index];
  TensorModel& weight = (*tensors)[index].tensor;
  const bool in_out = scales.row->int4 == Int4Layout::kInOut;
  const uint64_t out_dim = weight.shape[in_out ? 1 : 0];
  const uint64_t in_dim = weight.shape[in_out ? 0 : 1];
  uint64_t group = in_dim;
  if (rng.OneIn(2) && in_dim % 2 == 0) group = in_dim / 2;
  if (rng.OneIn(8)) group = in_dim + 1;  // does not divide in
  if (group == 0) group = 1;
  const std::string module = weight.name.substr(0, weight.name.size() - std::strlen(".weight"));
  weight.name = module + ".qweight";
  weight.dtype = rng.OneIn(10) ? "I8" : "U8";
  weight.shape = {out_dim, rng.OneIn(10) ? in_dim : in_dim / 2};
  scales.tensor.name = module + ".scales";
  scales.tensor.dtype = rng.OneIn(10) ? "F32" : "F16";
  scales.tensor.shape = {out_dim, in_dim / group};
  if (!rng.OneIn(10)) tensors->push_back(std::move(scales));  // else the scales are missing
  return group;
}

// Change applies one change where the lint rules look.
void Change(std::vector<BuiltTensor>* tensors, const std::string& prefix, JsonValue* metadata,
            Rng& rng) {
  if (tensors->empty()) return;
  const size_t picked = rng.Below(tensors->size());
  BuiltTensor& pick = (*tensors)[picked];  // not used once *tensors grows
  std::vector<uint64_t>& shape = pick.tensor.shape;
  switch (rng.Below(8)) {
    case 0:
      tensors->erase(tensors->begin() + static_cast<std::ptrdiff_t>(picked));
      return;
    case 1:  // a dimension off by one, or two swapped (GPT-2's Conv1D weights are [in, out])
      if (shape.size() >= 2 && rng.OneIn(2)) {
        std::swap(shape[0], shape[1]);
      } else if (!shape.empty()) {
        uint64_t& dim = shape[rng.Below(shape.size())];
        dim = dim > 1 && rng.OneIn(2) ? dim - 1 : dim + 1;
      } else {
        shape.push_back(1);
      }
      return;
    case 2: {  // a layer at or past the count, or spelled with a leading zero
      if (pick.layer == UINT64_MAX) return;
      static constexpr const char* kLayers[] = {"2", "3", "100", "01", "18446744073709551616"};
      BuiltTensor extra = pick;
      extra.tensor.name = LayerName(prefix, *pick.row, kLayers[rng.Below(std::size(kLayers))]);
      tensors->push_back(std::move(extra));
      return;
    }
    case 3: {  // a name the family does not know
      static constexpr const char* kNames[] = {"model.layers.0.self_attn.rotary_emb.inv_freq",
                                               "h.0.attn.masked_bias", "lm_head.weight",
                                               "model.embed_tokens.weight", "score.weight"};
      BuiltTensor extra = pick;
      extra.tensor.name = rng.OneIn(3) ? RandomName(rng) : kNames[rng.Below(std::size(kNames))];
      tensors->push_back(std::move(extra));
      return;
    }
    case 4: {  // another dtype, for one tensor or all
      static constexpr const char* kDtypes[] = {"F32", "F16", "BF16", "F64", "I64", "U8", "BOOL"};
      const char* dtype = kDtypes[rng.Below(std::size(kDtypes))];
      if (rng.OneIn(2)) {
        pick.tensor.dtype = dtype;
      } else {
        for (BuiltTensor& t : *tensors) t.tensor.dtype = dtype;
      }
      return;
    }
    case 5: {  // the int4 form for the picked linear module (or the first after it), or all
      const bool all = rng.OneIn(2);
      uint64_t group = 0;
      const size_t count = tensors->size();  // not the scales Int4Form appends
      for (size_t i = picked, seen = 0; seen < count;
           ++seen, i = (i + 1) % count) {
        const BuiltTensor& t = (*tensors)[i];
        if (t.row->int4 == Int4Layout::kNone || t.tensor.shape.size() != 2 ||
            !t.tensor.name.ends_with(".weight")) {
          continue;
        }
        group = Int4Form(tensors, i, rng);
        if (!all) break;
      }
      if (group == 0) return;
      std::string quant = "int4-g" + std::to_string(group) + "-sym";
      if (rng.OneIn(8)) quant = rng.OneIn(2) ? "int4-g0-sym" : "int8-g32-sym";
      if (!rng.OneIn(10)) SetMember(metadata, "quant", JsonValue::String(quant));
      return;
    }
    case 6: {  // another prefix, or none, for every tensor
      static constexpr const char* kPrefixes[] = {"transformer.", "model.", ""};
      const std::string other = kPrefixes[rng.Below(std::size(kPrefixes))];
      for (BuiltTensor& t : *tensors) {
        std::string& name = t.tensor.name;
        if (!t.row->unprefixed && name.starts_with(prefix)) name = other + name.substr(prefix.size());
      }
      return;
    }
    default: {  // the format metadata
      static constexpr const char* kFormats[] = {"pt", "tinyllm", "tf", "np", ""};
      if (rng.OneIn(3)) {
        EraseMember(metadata, "format");
      } else {
        SetMember(metadata, "format", JsonValue::String(kFormats[rng.Below(std::size(kFormats))]));
      }
      return;
    }
  }
}

// ModelOf makes a file model of built tensors and their metadata (an object; none when
// empty).
FileModel ModelOf(std::vector<BuiltTensor>* built, JsonValue* metadata) {
  FileModel model;
  for (BuiltTensor& t : *built) model.tensors.push_back(std::move(t.tensor));
  model.has_metadata = !metadata->members.empty();
  model.metadata = std::move(*metadata);
  return model;
}

// Rebuild replaces *model with the config's expected tensors, changed 2 times in 3.
bool Rebuild(const JsonValue& config, uint64_t max_layers, Rng& rng, FileModel* model) {
  std::string prefix;
  std::vector<BuiltTensor> built;
  JsonValue metadata;
  if (!Build(config, max_layers, rng, &prefix, &built, &metadata)) return false;
  if (!rng.OneIn(3)) {
    const size_t changes = 1 + rng.Below(2);
    for (size_t c = 0; c < changes; ++c) Change(&built, prefix, &metadata, rng);
  }
  *model = ModelOf(&built, &metadata);
  model->metadata_position = rng.OneIn(4) ? rng.Below(model->tensors.size() + 1) : 0;
  return true;
}

std::string EncodeConfig(const JsonValue& config, Rng& rng) {
  JsonStyle style;
  style.space = rng.OneIn(2) ? JsonStyle::Space::kPretty : JsonStyle::Space::kCompact;
  if (rng.OneIn(6)) style = RandomStyle(rng);  // escapes, odd whitespace, sometimes broken
  std::string text;
  WriteJson(config, style, rng, &text);
  if (rng.OneIn(3)) text.push_back('\n');
  return text;
}

std::string EncodeCheckpoint(const FileModel& model, Rng& rng) {
  JsonStyle style;
  if (rng.OneIn(6)) style = RandomStyle(rng);
  return EncodeFile(model, style, static_cast<int>(rng.Below(4)), rng);
}

}  // namespace

void SetFamily(size_t family_index, JsonValue* config, Rng& rng) {
  const Family& family = stguard::lint::Families()[family_index];
  EraseMember(config, "model_type");
  EraseMember(config, "tl_arch");
  // architectures names the family only when the other two keys are absent.
  if (!family.architectures.empty() && rng.OneIn(4)) {
    JsonValue list = JsonValue::Array();
    list.items.push_back(JsonValue::String(std::string(PickOne(family.architectures, rng))));
    SetMember(config, "architectures", std::move(list));
    return;
  }
  SetMember(config, rng.OneIn(4) ? "tl_arch" : "model_type",
            JsonValue::String(std::string(PickOne(family.model_types, rng))));
}

bool FitConfig(JsonValue* config, Rng& rng) {
  const Family* family = FamilyOf(*config);
  if (family == nullptr) return false;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::vector<FieldValue> values;
    bool fits = true;
    for (const FieldSpec& field : family->fields) {
      if (field.type == FieldType::kBool) {
        SetMember(config, field.name, Literal(JsonValue::Kind::kBool, rng.OneIn(2) ? "true" : "false"));
        continue;
      }
      FieldValue value{field.name, 0, true};
      if (!field.fallback.empty() && rng.OneIn(3)) {  // left to its default
        EraseMember(config, field.name);
        std::string detail;
        fits = fits && stguard::lint::EvaluateDim(field.fallback, values, &value.value, &detail) == FormulaError::kOk;
      } else {
        value.value = field.name == family->layers_field ? 1 + rng.Below(2) : uint64_t{1} << rng.Below(3);
        SetMember(config, field.name, JsonValue::Number(value.value));
      }
      values.push_back(value);
    }
    uint64_t elements = 0;
    for (std::string_view constraint : family->constraints) {
      uint64_t ignored = 0;
      std::string detail;
      fits = fits && stguard::lint::EvaluateDim(constraint, values, &ignored, &detail) == FormulaError::kOk;
    }
    for (const TensorRow& row : family->rows) {
      std::vector<uint64_t> dims;
      std::string detail;
      fits = fits && stguard::lint::EvaluateShape(row.shape, values, &dims, &detail) == FormulaError::kOk;
      uint64_t count = 1;
      for (const uint64_t dim : dims) count = std::min<uint64_t>(count * dim, kMaxFitElements + 1);
      elements = std::min<uint64_t>(elements + count, kMaxFitElements + 1);
    }
    if (fits && elements <= kMaxFitElements) return true;
  }
  return false;
}

bool BuildCheckpoint(const JsonValue& config, uint64_t max_layers, Rng& rng, FileModel* model) {
  std::string prefix;
  std::vector<BuiltTensor> built;
  JsonValue metadata;
  if (!Build(config, max_layers, rng, &prefix, &built, &metadata)) return false;
  *model = ModelOf(&built, &metadata);
  return true;
}

ConfigInput SplitConfigInput(std::string_view input) {
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return {input, {}};
  return {input.substr(0, nul), input.substr(nul + 1)};
}

std::string JoinConfigInput(std::string_view config, std::string_view file) {
  std::string input(config);
  input.push_back('\0');
  input.append(file);
  return input;
}

size_t MutateConfigInput(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  if (ByteLevelOnly() || rng.OneIn(16)) return ByteLevelMutate(data, size, max_size, seed);
  const std::string_view input = ToView(data, size);
  const auto [config_text, file_bytes] = SplitConfigInput(input);
  JsonValue config;
  if (!ParseJson(config_text, &config) || config.kind != JsonValue::Kind::kObject) {
    if (rng.OneIn(2)) return ByteLevelMutate(data, size, max_size, seed);
    config = JsonValue::Object();
  }
  FileModel file;
  const bool file_decodes = DecodeFile(file_bytes, &file);
  for (int attempt = 0; attempt < 4; ++attempt) {
    JsonValue changed_config = config;
    FileModel changed_file = file;
    // The plan: the config alone (0-2), the config and then a checkpoint rebuilt from it
    // (3-5), the checkpoint rebuilt (6), or the checkpoint mutated as a file (7).
    const size_t plan = rng.Below(8);
    if (plan <= 5) MutateConfigTree(&changed_config, rng);
    std::string checkpoint(file_bytes);
    if (plan == 7 && file_decodes) {
      MutateModel(&changed_file, rng);
      LayOut(&changed_file, max_size / 2, rng);
      checkpoint = EncodeCheckpoint(changed_file, rng);
    } else if (plan >= 3 || !file_decodes) {
      if (FamilyOf(changed_config) == nullptr || rng.OneIn(4)) {
        // Nothing to rebuild from (or, 1 in 4, start over): a family, with values that fit.
        SetFamily(rng.Below(stguard::lint::Families().size()), &changed_config, rng);
        FitConfig(&changed_config, rng);
      }
      // A file too large for max_size is tried again with one layer.
      if (Rebuild(changed_config, attempt < 2 ? 1 + rng.Below(2) : 1, rng, &changed_file)) {
        LayOut(&changed_file, max_size / 2, rng);
        checkpoint = EncodeCheckpoint(changed_file, rng);
      }
    }
    const std::string mutated = JoinConfigInput(EncodeConfig(changed_config, rng), checkpoint);
    if (mutated != input) {
      const size_t out = CopyOut(mutated, data, max_size);
      if (out != 0) return out;
    }
  }
  return ByteLevelMutate(data, size, max_size, seed);
}

size_t CrossOverConfigInput(const uint8_t* data1, size_t size1, const uint8_t* data2,
                            size_t size2, uint8_t* out, size_t max_out_size, unsigned seed) {
  Rng rng(seed);
  std::string_view first = ToView(data1, size1);
  std::string_view second = ToView(data2, size2);
  if (rng.OneIn(2)) std::swap(first, second);
  const std::string joined = JoinConfigInput(SplitConfigInput(first).config, SplitConfigInput(second).file);
  const size_t size = CopyOut(joined, out, max_out_size);
  if (size != 0) return size;
  const size_t head = std::min(size1, max_out_size);
  std::memcpy(out, data1, head);
  return head;
}

}  // namespace stguard_fuzz::mutator
