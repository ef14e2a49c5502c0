// SPDX-License-Identifier: Apache-2.0
// safetensors_mutator.cc: structure-aware mutation of safetensors files. See
// safetensors_mutator.h for what it does and why.
#include "safetensors_mutator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "reference_checker.h"
#include "stguard/dtype.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

// libFuzzer defines LLVMFuzzerMutate; other engines and the replay main() may not, so it
// is weak: null when absent.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size)
    __attribute__((weak));

namespace stguard_fuzz::mutator {
namespace {

// ParseU64 reads a plain decimal literal; anything else (sign, fraction, exponent,
// overflow) gives false.
bool ParseU64(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

std::string RandomDtype(Rng& rng) {
  if (rng.OneIn(48)) {
    using namespace std::string_view_literals;
    static constexpr std::string_view kInvalid[] = {"F128", "f32", "", "F8", "U4", "I8 ", "BF16\0"sv};
    return std::string(kInvalid[rng.Below(std::size(kInvalid))]);
  }
  return std::string(stguard::DtypeName(stguard::kAllDtypes[rng.Below(stguard::kNumDtypes)]));
}

uint64_t RandomDim(Rng& rng) {
  switch (rng.Below(24)) {
    case 0: return 0;
    case 1: return uint64_t{1} << (20 + rng.Below(44));  // overflow and size bait
    case 2: return rng.Bits64();
    default: return 1 + rng.Below(6);
  }
}

std::vector<uint64_t> RandomShape(Rng& rng) {
  std::vector<uint64_t> shape(rng.Below(4));
  for (uint64_t& dim : shape) dim = RandomDim(rng);
  return shape;
}

// PickName returns a fresh random name, or (sometimes) one already in the model.
std::string PickName(const FileModel& model, Rng& rng) {
  if (!model.tensors.empty() && rng.OneIn(10)) {
    return model.tensors[rng.Below(model.tensors.size())].name;  // a duplicate
  }
  if (rng.OneIn(24)) return "__metadata__";
  if (rng.OneIn(2)) return "t" + std::to_string(rng.Below(1000));
  return RandomName(rng);
}

void MutateMetadata(FileModel* model, Rng& rng) {
  if (!model->has_metadata) {
    model->has_metadata = true;
    model->metadata = JsonValue::Object();
    model->metadata_position = rng.Below(model->tensors.size() + 1);
    const size_t count = rng.Below(3);
    for (size_t i = 0; i < count; ++i) {
      model->metadata.members.emplace_back(RandomName(rng), JsonValue::String(RandomName(rng)));
    }
    return;
  }
  JsonValue& meta = model->metadata;
  switch (rng.Below(16)) {
    case 0: model->has_metadata = false; return;
    case 1: model->metadata_position = rng.Below(model->tensors.size() + 1); return;
    case 2: meta = JsonValue::Object(); return;  // {}: valid, and not canonical
    case 3:
      if (rng.OneIn(4)) {
        meta = JsonValue();  // null
      } else {
        meta = rng.OneIn(2) ? JsonValue::Array() : JsonValue::String("format");
      }
      return;
    default: break;
  }
  if (meta.kind != JsonValue::Kind::kObject) meta = JsonValue::Object();
  const size_t pick = meta.members.empty() ? 0 : rng.Below(meta.members.size());
  switch (rng.Below(5)) {
    case 0:
      if (!meta.members.empty()) {
        meta.members.erase(meta.members.begin() + static_cast<std::ptrdiff_t>(pick));
        return;
      }
      [[fallthrough]];
    case 1: {
      std::string key = RandomName(rng);
      if (!meta.members.empty() && rng.OneIn(5)) key = meta.members[pick].first;  // duplicate
      meta.members.emplace(meta.members.begin() + static_cast<std::ptrdiff_t>(
                                                      rng.Below(meta.members.size() + 1)),
                           std::move(key), JsonValue::String(RandomName(rng)));
      return;
    }
    case 2:
      if (!meta.members.empty()) {
        // A value that is not a string (number, object, null) sometimes.
        meta.members[pick].second = rng.OneIn(8) ? JsonValue::Number(rng.Below(100))
                                                 : JsonValue::String(RandomName(rng));
      }
      return;
    case 3:
      if (!meta.members.empty()) meta.members[pick].first = RandomName(rng);
      return;
    default:
      std::shuffle(meta.members.begin(), meta.members.end(), std::minstd_rand(rng.Bits64() & 0x7fffffff));
      return;
  }
}

void ChangeShape(TensorModel* tensor, Rng& rng) {
  std::vector<uint64_t>& shape = tensor->shape;
  switch (rng.Below(4)) {
    case 0: shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(rng.Below(shape.size() + 1)), RandomDim(rng)); return;
    case 1:
      if (!shape.empty()) shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(rng.Below(shape.size())));
      return;
    case 2:
      if (!shape.empty()) shape[rng.Below(shape.size())] = RandomDim(rng);
      return;
    default: shape = RandomShape(rng); return;
  }
}

// BreakLayout makes one change that LayOut would have fixed: the ways a real file's
// offsets go wrong.
void BreakLayout(FileModel* model, Rng& rng) {
  if (model->tensors.empty() || rng.OneIn(6)) {
    if (rng.OneIn(2) || model->data.empty()) {
      model->data.push_back('\0');  // a trailing byte
    } else {
      model->data.pop_back();  // one byte short
    }
    return;
  }
  TensorModel& tensor = model->tensors[rng.Below(model->tensors.size())];
  switch (rng.Below(7)) {
    case 0: tensor.begin += rng.OneIn(2) ? 1 : static_cast<uint64_t>(-1); return;  // wraps at 0
    case 1: tensor.end += rng.OneIn(2) ? 1 : static_cast<uint64_t>(-1); return;
    case 2: std::swap(tensor.begin, tensor.end); return;
    case 3: tensor.dtype = RandomDtype(rng); return;  // without fixing the offsets
    case 4: ChangeShape(&tensor, rng); return;
    case 5: {
      TensorModel& other = model->tensors[rng.Below(model->tensors.size())];
      std::swap(tensor.begin, other.begin);
      std::swap(tensor.end, other.end);
      return;
    }
    default:
      tensor.end = tensor.begin + (rng.OneIn(2) ? rng.Bits64() : uint64_t{1} << 63);
      return;
  }
}

std::string_view ToView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Finish returns the bytes of `model` as a file in a style `rng` picks: sometimes
// canonical (CanonicalBytes of the file, when the reader accepts it), and rarely with the
// length prefix off by one.
std::string Finish(const FileModel& model, Rng& rng) {
  JsonStyle style;
  if (!rng.OneIn(3)) style = RandomStyle(rng);
  std::string file = EncodeFile(model, style, static_cast<int>(rng.Below(4)), rng);
  if (rng.OneIn(5)) {
    const auto checkpoint = stguard::Checkpoint::FromBytes(std::string_view(file));
    if (checkpoint.ok()) {
      auto canon = stguard::CanonicalBytes(*checkpoint);
      if (canon.ok()) file = std::move(*canon);
    }
  }
  if (rng.OneIn(40) && file.size() >= 8) file[0] = static_cast<char>(file[0] + (rng.OneIn(2) ? 1 : -1));
  return file;
}

}  // namespace

bool ByteLevelOnly() {
  static const bool bytes_only = [] {
    const char* value = std::getenv("STGUARD_FUZZ_MUTATOR");
    return value != nullptr && std::strcmp(value, "bytes") == 0;
  }();
  return bytes_only;
}

size_t ByteLevelMutate(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  if (LLVMFuzzerMutate != nullptr) return LLVMFuzzerMutate(data, size, max_size);
  Rng rng(seed);
  const size_t choice = rng.Below(3);
  if ((choice == 0 || size == 0) && size < max_size) {  // insert
    const size_t at = rng.Below(size + 1);
    std::memmove(data + at + 1, data + at, size - at);
    data[at] = static_cast<uint8_t>(rng.Below(256));
    return size + 1;
  }
  if (size == 0) return 0;
  const size_t at = rng.Below(size);
  if (choice == 1) {  // erase
    std::memmove(data + at, data + at + 1, size - at - 1);
    return size - 1;
  }
  data[at] = static_cast<uint8_t>(data[at] ^ (1u << rng.Below(8)));  // flip a bit
  return size;
}

size_t CopyOut(std::string_view bytes, uint8_t* data, size_t max_size) {
  if (bytes.empty() || bytes.size() > max_size) return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

bool DecodeFile(std::string_view bytes, FileModel* model) {
  if (bytes.size() < 8) return false;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  uint64_t header_begin = 8;
  uint64_t header_len = std::min<uint64_t>(n, bytes.size() - 8);
  JsonValue header;
  if (!ParseJson(bytes.substr(header_begin, header_len), &header)) {
    // A broken length prefix: try the text from the first '{' to the last '}' instead.
    const size_t open = bytes.find('{');
    const size_t close = bytes.rfind('}');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
        !ParseJson(bytes.substr(open, close + 1 - open), &header)) {
      return false;
    }
    header_begin = open;
    header_len = close + 1 - open;
  }
  if (header.kind != JsonValue::Kind::kObject) return false;
  *model = FileModel();
  model->data = std::string(bytes.substr(header_begin + header_len));
  for (auto& [key, value] : header.members) {
    if (key == "__metadata__" && !model->has_metadata) {
      model->has_metadata = true;
      model->metadata = std::move(value);
      model->metadata_position = model->tensors.size();
      continue;
    }
    TensorModel tensor;
    tensor.name = key;
    if (const JsonValue* dtype = value.Find("dtype");
        dtype != nullptr && dtype->kind == JsonValue::Kind::kString) {
      tensor.dtype = dtype->text;
    }
    if (const JsonValue* shape = value.Find("shape");
        shape != nullptr && shape->kind == JsonValue::Kind::kArray) {
      for (const JsonValue& dim : shape->items) {
        uint64_t d = 0;
        if (ParseU64(dim.text, &d)) tensor.shape.push_back(d);
      }
    }
    if (const JsonValue* offsets = value.Find("data_offsets");
        offsets != nullptr && offsets->items.size() == 2) {
      ParseU64(offsets->items[0].text, &tensor.begin);
      ParseU64(offsets->items[1].text, &tensor.end);
    }
    if (tensor.begin <= tensor.end && tensor.end <= model->data.size()) {
      tensor.bytes = model->data.substr(tensor.begin, tensor.end - tensor.begin);
    }
    model->tensors.push_back(std::move(tensor));
  }
  return true;
}

bool ExpectedByteSize(const TensorModel& tensor, uint64_t* out) {
  const uint64_t element_bits = reference::DtypeBits(tensor.dtype);
  if (element_bits == 0) return false;
  uint64_t count = 1;
  for (const uint64_t dim : tensor.shape) {
    if (__builtin_mul_overflow(count, dim, &count)) return false;
  }
  uint64_t bits = 0;
  if (__builtin_mul_overflow(count, element_bits, &bits) || bits % 8 != 0) return false;
  *out = bits / 8;
  return true;
}

std::string EncodeFile(const FileModel& model, const JsonStyle& style, int padding, Rng& rng) {
  JsonValue header = JsonValue::Object();
  // One key order for the file, or (1 in 4 files) a new one for every entry.
  static constexpr int kOrders[][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const bool order_per_entry = rng.OneIn(4);
  const int* order = kOrders[rng.OneIn(2) ? 0 : rng.Below(6)];
  const size_t metadata_at = std::min(model.metadata_position, model.tensors.size());
  for (size_t i = 0; i <= model.tensors.size(); ++i) {
    if (i == metadata_at && model.has_metadata) header.members.emplace_back("__metadata__", model.metadata);
    if (i == model.tensors.size()) break;
    const TensorModel& tensor = model.tensors[i];
    JsonValue shape = JsonValue::Array();
    for (const uint64_t dim : tensor.shape) shape.items.push_back(JsonValue::Number(dim));
    JsonValue offsets = JsonValue::Array();
    offsets.items.push_back(JsonValue::Number(tensor.begin));
    offsets.items.push_back(JsonValue::Number(tensor.end));
    JsonValue entry = JsonValue::Object();
    if (order_per_entry) order = kOrders[rng.Below(6)];
    for (int k = 0; k < 3; ++k) {
      switch (order[k]) {
        case 0: entry.members.emplace_back("dtype", JsonValue::String(tensor.dtype)); break;
        case 1: entry.members.emplace_back("shape", std::move(shape)); break;
        default: entry.members.emplace_back("data_offsets", std::move(offsets)); break;
      }
    }
    header.members.emplace_back(tensor.name, std::move(entry));
  }
  std::string text;
  if (padding == 3) text.append(1 + rng.Below(3), rng.OneIn(2) ? ' ' : '\n');
  WriteJson(header, style, rng, &text);
  if (padding == 1) text.append((8 - text.size() % 8) % 8, ' ');
  if (padding == 2) text.append(rng.Below(9), rng.OneIn(4) ? '\t' : ' ');
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<char>((uint64_t{text.size()} >> (8 * i)) & 0xFF);
  file += text;
  file += model.data;
  return file;
}

void LayOut(FileModel* model, size_t max_data_bytes, Rng& rng) {
  std::vector<size_t> order(model->tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  switch (rng.Below(4)) {
    case 0: break;  // header order
    case 1: std::reverse(order.begin(), order.end()); break;
    case 2: std::shuffle(order.begin(), order.end(), std::minstd_rand(rng.Bits64() & 0x7fffffff)); break;
    default:
      std::sort(order.begin(), order.end(), [model](size_t a, size_t b) {
        return model->tensors[a].name < model->tensors[b].name;
      });
      break;
  }
  std::string data;
  for (const size_t index : order) {
    TensorModel& tensor = model->tensors[index];
    uint64_t size = 0;
    if (!ExpectedByteSize(tensor, &size) && reference::DtypeBits(tensor.dtype) % 8 != 0 &&
        !rng.OneIn(4)) {
      tensor.shape.push_back(8);  // 4- and 6-bit elements fill whole bytes by eights
    }
    // A tensor too large for what is left of max_data_bytes gets dims of at most 2 (a file
    // above max_size would be thrown away, after the work of building it).
    const size_t left = max_data_bytes - std::min(max_data_bytes, data.size());
    if (ExpectedByteSize(tensor, &size) && size > left) {
      for (uint64_t& dim : tensor.shape) dim = std::min<uint64_t>(dim, 2);
    }
    if (ExpectedByteSize(tensor, &size) && size <= left) {
      // Keep the tensor's own bytes as far as they go; fill the rest with a pattern.
      tensor.bytes.resize(size, static_cast<char>(0x40 + index % 16));
    }
    tensor.begin = data.size();
    data += tensor.bytes;
    tensor.end = data.size();
  }
  model->data = std::move(data);
}

void MutateModel(FileModel* model, Rng& rng) {
  const size_t changes = 1 + rng.Below(rng.OneIn(4) ? 4 : 2);
  std::vector<TensorModel>& tensors = model->tensors;
  for (size_t c = 0; c < changes; ++c) {
    const size_t pick = tensors.empty() ? 0 : rng.Below(tensors.size());
    switch (tensors.empty() ? 0 : rng.Below(9)) {
      case 0: {  // add
        TensorModel tensor;
        tensor.name = PickName(*model, rng);
        tensor.dtype = RandomDtype(rng);
        tensor.shape = RandomShape(rng);
        tensors.insert(tensors.begin() + static_cast<std::ptrdiff_t>(rng.Below(tensors.size() + 1)),
                       std::move(tensor));
        break;
      }
      case 1:  // drop
        tensors.erase(tensors.begin() + static_cast<std::ptrdiff_t>(pick));
        break;
      case 2:  // rename
        tensors[pick].name = PickName(*model, rng);
        break;
      case 3:
        tensors[pick].dtype = RandomDtype(rng);
        break;
      case 4:
        ChangeShape(&tensors[pick], rng);
        break;
      case 5:  // swap two entries in the header
        std::swap(tensors[pick], tensors[rng.Below(tensors.size())]);
        break;
      case 6:
        MutateMetadata(model, rng);
        break;
      case 7:  // the same tensor again under another name
        tensors.push_back(tensors[pick]);
        tensors.back().name = PickName(*model, rng);
        break;
      default:  // a zero-size tensor (they may share an offset)
        tensors[pick].shape.push_back(0);
        break;
    }
  }
}

size_t MutateSafetensors(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  FileModel model;
  if (ByteLevelOnly() || rng.OneIn(16)) return ByteLevelMutate(data, size, max_size, seed);
  if (!DecodeFile(ToView(data, size), &model)) {
    // Nothing to decode: half the time byte-level mutation, half the time a new file
    // from the empty one (as libprotobuf-mutator starts from an empty message), so that a
    // corpus of mostly broken inputs still yields valid files.
    if (rng.OneIn(2)) return ByteLevelMutate(data, size, max_size, seed);
    model = FileModel();
  }
  // A change can come out as the same bytes (a swap of equal entries, the canonical form
  // of a canonical file): try again a few times before giving up on structure.
  const std::string_view input = ToView(data, size);
  for (int attempt = 0; attempt < 4; ++attempt) {
    FileModel changed = model;
    MutateModel(&changed, rng);
    LayOut(&changed, max_size, rng);
    if (rng.OneIn(8)) BreakLayout(&changed, rng);  // the changes "without fixing offsets"
    const std::string file = Finish(changed, rng);
    if (file != input) {
      const size_t out = CopyOut(file, data, max_size);
      if (out != 0) return out;
    }
  }
  return ByteLevelMutate(data, size, max_size, seed);
}

size_t CrossOverSafetensors(const uint8_t* data1, size_t size1, const uint8_t* data2,
                            size_t size2, uint8_t* out, size_t max_out_size, unsigned seed) {
  Rng rng(seed);
  FileModel first;
  FileModel second;
  const bool first_decodes = !ByteLevelOnly() && DecodeFile(ToView(data1, size1), &first);
  const bool second_decodes = !ByteLevelOnly() && DecodeFile(ToView(data2, size2), &second);
  if (!first_decodes && !second_decodes) {
    // A splice: a prefix of the first input and a suffix of the second.
    const size_t head = std::min(rng.Below(size1 + 1), max_out_size);
    const size_t tail = std::min(rng.Below(size2 + 1), max_out_size - head);
    std::memcpy(out, data1, head);
    std::memcpy(out + head, data2 + size2 - tail, tail);
    return head + tail;
  }
  // Only one decodes: it is the base, and the other gives nothing.
  if (!first_decodes) std::swap(first, second);
  if (first_decodes != second_decodes) second = FileModel();
  for (TensorModel& tensor : second.tensors) {
    if (rng.OneIn(2)) continue;
    const bool taken = std::any_of(first.tensors.begin(), first.tensors.end(),
                                   [&tensor](const TensorModel& t) { return t.name == tensor.name; });
    if (taken && !rng.OneIn(4)) tensor.name += "." + std::to_string(rng.Below(100));  // mostly unique
    first.tensors.insert(first.tensors.begin() +
                             static_cast<std::ptrdiff_t>(rng.Below(first.tensors.size() + 1)),
                         std::move(tensor));
  }
  if (second.has_metadata && (!first.has_metadata || rng.OneIn(2))) {
    first.has_metadata = true;
    first.metadata = std::move(second.metadata);
  }
  LayOut(&first, max_out_size, rng);
  const size_t size = CopyOut(Finish(first, rng), out, max_out_size);
  if (size != 0) return size;
  const size_t head = std::min(size1, max_out_size);
  std::memcpy(out, data1, head);
  return head;
}

}  // namespace stguard_fuzz::mutator
