// SPDX-License-Identifier: Apache-2.0
// The GGUF reader against ggml itself (the test-only reference library fetched by
// tools/fetch_ggml.sh; these tests skip with a message when it is absent):
// - the type table equals ggml_type_name / ggml_blck_size / ggml_type_size for every id;
// - files the reference writer makes (every type, 1-4 dims, every value type, a big
//   string array) are accepted with the same keys, values and tensor infos;
// - over thousands of mutants, stguard never accepts a file the reference rejects, and
//   every file only stguard rejects breaks one of the stricter rules of stguard/gguf.h;
// - each file of a strict rule that some ggml build reads otherwise (zero and overflowing
//   dims, NUL in strings, a cut last padding) is refused, its control accepted by both.
// Every test prints the ggml build it ran ("ggml reference: ...").
#include <unistd.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "stguard/gguf.h"
#include "support/ggml_reference.h"
#include "support/gguf_encoder.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

using gguf::GgufFile;
using Reference = GgmlReference;

const GgmlReference* ReferenceOrSkip() {
  std::string why;
  const GgmlReference* reference = GgmlReference::Load(&why);
  if (reference == nullptr) {
    std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
  } else {
    std::printf("ggml reference: %s\n", reference->Build().c_str());
  }
  return reference;
}

#define STGUARD_REFERENCE_OR_SKIP(var)                              \
  const GgmlReference* var = ReferenceOrSkip();                     \
  if (var == nullptr) GTEST_SKIP() << "ggml's reference library is absent (tools/fetch_ggml.sh)"

std::string ReadAll(const std::string& path) {
  std::string bytes;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return bytes;
  char buffer[65536];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) bytes.append(buffer, got);
  std::fclose(file);
  return bytes;
}

TEST(GgufReference, TypeTableMatchesGgml) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  for (uint32_t id = 0; id < gguf::kNumGgmlTypeIds; ++id) {
    const gguf::GgmlType* row = gguf::FindGgmlType(id);
    if (row == nullptr) {
      EXPECT_EQ(reference->BlockSize(id), 0) << "id " << id << " is removed here";
      continue;
    }
    EXPECT_EQ(row->name, reference->TypeName(id)) << id;
    EXPECT_EQ(static_cast<int64_t>(row->block_size), reference->BlockSize(id)) << id;
    EXPECT_EQ(row->type_size, reference->TypeSize(id)) << id;
  }
}

// Renders stguard's view of a file as the reference's Contents, for comparison.
Reference::Contents StguardContents(const GgufFile& file) {
  Reference::Contents out;
  out.version = file.version();
  out.alignment = file.alignment();
  out.data_offset = file.data_offset();
  for (const gguf::MetadataEntry& entry : file.metadata()) {
    Reference::Kv kv;
    kv.key = std::string(entry.key);
    kv.type = static_cast<int>(entry.value.type);
    const gguf::Value& value = entry.value;
    if (value.type == gguf::ValueType::kArray) {
      kv.element_type = static_cast<int>(value.element_type);
      if (value.element_type == gguf::ValueType::kString) {
        value.StringElements([&](uint64_t, std::string_view text) {
          kv.values.emplace_back(text);
          return true;
        });
      } else {
        for (uint64_t i = 0; i < value.count; ++i) {
          kv.values.push_back(ValueText(kv.element_type, value.Element(i).bytes.data()));
        }
      }
    } else if (value.type == gguf::ValueType::kString) {
      kv.values.emplace_back(*value.AsString());
    } else {
      kv.values.push_back(ValueText(kv.type, value.bytes.data()));
    }
    out.kvs.push_back(std::move(kv));
  }
  for (const gguf::TensorInfo& info : file.tensors()) {
    Reference::Tensor tensor;
    tensor.name = std::string(info.name);
    tensor.type = static_cast<int>(info.type->id);
    for (size_t d = 0; d < 4; ++d) tensor.ne[d] = static_cast<int64_t>(info.ne[d]);
    tensor.offset = info.offset;
    tensor.size = info.byte_size;
    out.tensors.push_back(std::move(tensor));
  }
  return out;
}

void ExpectSameContents(const Reference::Contents& ours, const Reference::Contents& theirs) {
  EXPECT_EQ(ours.version, theirs.version);
  EXPECT_EQ(ours.alignment, theirs.alignment);
  EXPECT_EQ(ours.data_offset, theirs.data_offset);
  ASSERT_EQ(ours.kvs.size(), theirs.kvs.size());
  for (size_t i = 0; i < ours.kvs.size(); ++i) {
    EXPECT_EQ(ours.kvs[i].key, theirs.kvs[i].key);
    EXPECT_EQ(ours.kvs[i].type, theirs.kvs[i].type) << ours.kvs[i].key;
    EXPECT_EQ(ours.kvs[i].element_type, theirs.kvs[i].element_type) << ours.kvs[i].key;
    EXPECT_EQ(ours.kvs[i].values, theirs.kvs[i].values) << ours.kvs[i].key;
  }
  ASSERT_EQ(ours.tensors.size(), theirs.tensors.size());
  for (size_t i = 0; i < ours.tensors.size(); ++i) {
    EXPECT_EQ(ours.tensors[i].name, theirs.tensors[i].name);
    EXPECT_EQ(ours.tensors[i].type, theirs.tensors[i].type) << ours.tensors[i].name;
    EXPECT_EQ(ours.tensors[i].ne, theirs.tensors[i].ne) << ours.tensors[i].name;
    EXPECT_EQ(ours.tensors[i].offset, theirs.tensors[i].offset) << ours.tensors[i].name;
    EXPECT_EQ(ours.tensors[i].size, theirs.tensors[i].size) << ours.tensors[i].name;
  }
}

// EveryValueType is one key of each scalar type and one array of each element type.
std::vector<Reference::WriteKv> EveryValueType() {
  std::vector<Reference::WriteKv> kvs = {
      {"v.u8", 0, 0, {"200"}},        {"v.i8", 1, 0, {"-100"}},
      {"v.u16", 2, 0, {"65535"}},     {"v.i16", 3, 0, {"-32768"}},
      {"v.u32", 4, 0, {"4294967295"}}, {"v.i32", 5, 0, {"-2147483648"}},
      {"v.f32", 6, 0, {"0.1"}},       {"v.bool", 7, 0, {"1"}},
      {"v.string", 8, 0, {"caf\xc3\xa9 \xf0\x9f\x99\x82"}},
      {"v.u64", 10, 0, {"18446744073709551615"}},
      {"v.i64", 11, 0, {"-9223372036854775807"}}, {"v.f64", 12, 0, {"1e300"}}};
  for (int type : {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12}) {
    kvs.push_back({"a.t" + std::to_string(type), 9, type, {"0", "1", "1", "0", "1"}});
  }
  std::vector<std::string> tokens;
  for (int i = 0; i < 5000; ++i) tokens.push_back("tok_" + std::to_string(i * 7919));
  kvs.push_back({"tokenizer.ggml.tokens", 9, 8, tokens});
  kvs.push_back({"a.empty", 9, 8, {}});
  return kvs;
}

TEST(GgufReference, ReferenceWriterFilesAreAcceptedIdentically) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  TempDir dir;
  int files = 0;
  for (const gguf::GgmlType& type : gguf::GgmlTypes()) {
    std::vector<Reference::WriteTensor> tensors;
    for (int dims = 1; dims <= 4; ++dims) {
      std::vector<int64_t> ne = {static_cast<int64_t>(type.block_size) * (1 + dims % 3)};
      for (int d = 1; d < dims; ++d) ne.push_back(1 + (d + dims) % 3);
      tensors.push_back({"t." + std::string(type.name) + "." + std::to_string(dims),
                         static_cast<int>(type.id), ne});
    }
    const std::string path = dir.File(std::string(type.name) + ".gguf");
    const auto kvs = type.id == 0 ? EveryValueType() : std::vector<Reference::WriteKv>{
                                                           {"general.name", 8, 0, {"x"}}};
    ASSERT_TRUE(reference->Write(path, kvs, tensors)) << type.name;
    Reference::Contents theirs;
    ASSERT_TRUE(reference->Read(path, &theirs)) << type.name;
    Result<GgufFile> ours = GgufFile::Open(path);
    ASSERT_TRUE(ours.ok()) << type.name << ": " << ours.error().ToString();
    ExpectSameContents(StguardContents(*ours), theirs);
    EXPECT_TRUE(reference->AcceptsFullLoad(path)) << type.name;  // the last padding is there
    ++files;
  }
  EXPECT_EQ(files, 35);
}

TEST(GgufReference, AlignmentsBothReadersAccept) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  TempDir dir;
  for (uint32_t alignment : {8u, 16u, 32u, 64u, 128u, 4096u}) {
    GgufModel model = SimpleGgufModel();
    model.kvs.push_back(GgufU32("general.alignment", alignment));
    model.alignment = alignment;
    const std::string path = dir.File("a" + std::to_string(alignment) + ".gguf");
    ASSERT_TRUE(WriteFileBytes(path, Encode(model)));
    Reference::Contents theirs;
    ASSERT_TRUE(reference->Read(path, &theirs)) << alignment;
    Result<GgufFile> ours = GgufFile::Open(path);
    ASSERT_TRUE(ours.ok()) << alignment << ": " << ours.error().ToString();
    ExpectSameContents(StguardContents(*ours), theirs);
  }
}

// The rules stguard adds to the reference's (stguard/gguf.h, STRICTNESS POLICY).
bool IsStrictRule(const Error& error) {
  switch (error.code) {
    case ErrorCode::kGgufInvalidKey:
    case ErrorCode::kGgufInvalidBool:
    case ErrorCode::kInvalidUtf8:
    case ErrorCode::kGgufInvalidAlignment:
    case ErrorCode::kGgufNonZeroPadding:
    case ErrorCode::kGgufTrailingBytes:
    case ErrorCode::kGgufNulInString:
    case ErrorCode::kGgufMissingPadding:  // refused by the full load, not by this no_alloc one
      return true;
    case ErrorCode::kGgufInvalidDims:  // its zero-dims and zero-in-ne[1..3] halves
      return error.context == "0" || error.context.find("] = 0") != std::string::npos;
    case ErrorCode::kValidationOverflow:  // its overflow-beside-a-zero half
      return std::string(error.message).find("element count") != std::string::npos;
    default:
      return false;
  }
}

std::string WriteModel(const TempDir& dir, const std::string& name, const GgufModel& model) {
  const std::string path = dir.File(name);
  EXPECT_TRUE(WriteFileBytes(path, Encode(model)));
  return path;
}

ErrorCode StguardCode(const std::string& path) {
  Result<GgufFile> ours = GgufFile::Open(path);
  return ours.ok() ? ErrorCode::kOk : ours.error().code;
}

// Zero dims: ggml built from llama.cpp in July 2026 dies of SIGFPE on a zero in ne[1..3],
// and a zero there hid an overflow from npm 3.21.1; stguard refuses both, whatever the
// build at hand does (printed). A zero in ne[0] alone stays an empty tensor both accept.
TEST(GgufReference, ZeroAndOverflowingDims) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  TempDir dir;
  const uint64_t p40 = uint64_t{1} << 40, p62 = uint64_t{1} << 62;
  const struct {
    std::vector<uint64_t> ne;
    ErrorCode code;
  } rows[] = {{{32, 0}, ErrorCode::kGgufInvalidDims},
              {{4, 2, 0}, ErrorCode::kGgufInvalidDims},
              {{p40, p40, 0}, ErrorCode::kValidationOverflow},
              {{p62, p62, p62, 0}, ErrorCode::kValidationOverflow},
              {{0, 32}, ErrorCode::kOk},
              {{0, 3, 5, 7}, ErrorCode::kOk}};
  int n = 0;
  for (const auto& row : rows) {
    GgufModel model = SimpleGgufModel();
    model.tensors.insert(model.tensors.begin(), GgufTensor{"z", 0, row.ne, {}, {""}});
    const std::string path = WriteModel(dir, "z" + std::to_string(n++) + ".gguf", model);
    const bool theirs = reference->Accepts(path);
    std::printf("ne[0]=%llu ne[1]=%llu n_dims=%zu: this ggml %s; stguard %s\n",
                static_cast<unsigned long long>(row.ne[0]),
                static_cast<unsigned long long>(row.ne[1]), row.ne.size(),
                theirs ? "accepts" : "refuses", std::string(ErrorCodeName(StguardCode(path))).c_str());
    EXPECT_EQ(StguardCode(path), row.code) << path;
    if (row.code == ErrorCode::kOk) EXPECT_TRUE(theirs) << path;
  }
  // (ggml's own writer cannot write an empty tensor: gguf_write_to_file asserts its data.)
}

// NUL in strings: the reference hands strings out as C strings, so two tokens that differ
// after a NUL come out equal; stguard refuses the file.
TEST(GgufReference, NulInStringsIsRefused) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  TempDir dir;
  GgufModel model = SimpleGgufModel();
  model.kvs.push_back(GgufStrArray("some.tokens",
                                   {std::string("a\0x", 3), std::string("a\0y", 3)}));
  model.kvs.push_back(GgufStr("some.name", std::string("cut\0here", 8)));
  const std::string path = WriteModel(dir, "nul.gguf", model);
  Reference::Contents theirs;
  ASSERT_TRUE(reference->Read(path, &theirs));
  bool compared = false;
  for (const Reference::Kv& kv : theirs.kvs) {
    if (kv.key == "some.tokens") {
      ASSERT_EQ(kv.values.size(), 2u);
      EXPECT_EQ(kv.values[0], kv.values[1]);  // "a" and "a": one token to llama.cpp
      compared = true;
    }
  }
  EXPECT_TRUE(compared);
  EXPECT_EQ(StguardCode(path), ErrorCode::kGgufNulInString);
  model.kvs.pop_back();
  model.kvs.pop_back();
  EXPECT_EQ(StguardCode(WriteModel(dir, "control.gguf", model)), ErrorCode::kOk);
}

// The last tensor's padding: ggml's full load (no_alloc = false) reads every tensor's
// padded size and refuses a file cut inside the last padding, which its no_alloc load
// accepts; stguard refuses it. The control, padding complete, is accepted by all three.
TEST(GgufReference, CutLastPaddingIsRefusedAsTheFullLoadDoes) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  TempDir dir;
  GgufModel model = SimpleGgufModel();
  const std::string padded = WriteModel(dir, "padded.gguf", model);
  EXPECT_TRUE(reference->Accepts(padded));
  EXPECT_TRUE(reference->AcceptsFullLoad(padded));
  EXPECT_EQ(StguardCode(padded), ErrorCode::kOk);
  model.pad_last = false;
  const std::string cut = WriteModel(dir, "cut.gguf", model);
  EXPECT_TRUE(reference->Accepts(cut));
  EXPECT_FALSE(reference->AcceptsFullLoad(cut));
  EXPECT_EQ(StguardCode(cut), ErrorCode::kGgufMissingPadding);
}

// Mutate changes one thing in `file`: a byte, a 4- or 8-byte field set to an interesting
// value, a cut, or bytes appended. Most land in the header, where the rules are.
std::string Mutate(std::string file, uint64_t header_end, std::mt19937_64* random) {
  const uint64_t span = std::max<uint64_t>(1, std::min<uint64_t>(header_end, file.size()));
  const uint64_t at = (*random)() % span;
  static const uint64_t kInteresting[] = {0, 1, 2, 3, 4, 7, 8, 9, 12, 13, 31, 32, 33, 64,
                                          255, 256, 65535, 0x7FFFFFFF, 0xFFFFFFFF,
                                          0x100000000ull, 0x7FFFFFFFFFFFFFFFull,
                                          0xFFFFFFFFFFFFFFFFull, 0x8000000000000000ull};
  switch ((*random)() % 6) {
    case 0:
      file[at] = static_cast<char>((*random)() & 0xFF);
      break;
    case 1:
    case 2: {
      const size_t width = (*random)() % 2 ? 8 : 4;
      const uint64_t value = kInteresting[(*random)() % std::size(kInteresting)];
      for (size_t i = 0; i < width && at + i < file.size(); ++i) {
        file[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
      }
      break;
    }
    case 3:
      file[at] = static_cast<char>(file[at] + ((*random)() % 2 ? 1 : -1));
      break;
    case 4:
      file.resize((*random)() % (file.size() + 1));
      break;
    default:
      file.append(1 + (*random)() % 40, static_cast<char>((*random)() % 3 == 0 ? 1 : 0));
      break;
  }
  return file;
}

TEST(GgufReference, MutantsNeverAcceptedWhenTheReferenceRefuses) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  TempDir dir;
  std::vector<std::string> seeds;
  {
    const std::string path = dir.File("seed.gguf");
    ASSERT_TRUE(reference->Write(path, EveryValueType(),
                                 {{"a", 0, {4, 3}}, {"b", 8, {64, 2}}, {"c", 12, {256}}}));
    seeds.push_back(ReadAll(path));
    seeds.push_back(Encode(SimpleGgufModel()));
    GgufModel aligned = SimpleGgufModel();
    aligned.kvs.push_back(GgufU32("general.alignment", 64));
    aligned.alignment = 64;
    seeds.push_back(Encode(aligned));
  }
  const int mutants_per_seed = 700;  // about 2,100 mutants: a few seconds
  std::mt19937_64 random(20261203);
  std::map<std::string, int> stguard_only;
  int both_accept = 0, both_reject = 0;
  const std::string path = dir.File("mutant.gguf");
  for (const std::string& seed : seeds) {
    Result<GgufFile> parsed = GgufFile::FromBytes(std::as_bytes(std::span(seed.data(), seed.size())));
    ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
    const uint64_t header_end = parsed->data_offset() + 64;
    for (int i = 0; i < mutants_per_seed; ++i) {
      const std::string mutant = Mutate(seed, header_end, &random);
      ASSERT_TRUE(WriteFileBytes(path, mutant));
      const bool theirs = reference->Accepts(path);
      Result<GgufFile> ours =
          GgufFile::FromBytes(std::as_bytes(std::span(mutant.data(), mutant.size())));
      if (ours.ok()) {
        ASSERT_TRUE(theirs) << "stguard accepts a mutant the reference refuses (kept at "
                            << path << ")";
        ++both_accept;
      } else if (theirs) {
        ASSERT_TRUE(IsStrictRule(ours.error()))
            << "stguard refuses, the reference accepts, and the rule is not a listed strict "
               "one: "
            << ours.error().ToString() << " (kept at " << path << ")";
        ++stguard_only[std::string(ErrorCodeName(ours.error().code))];
      } else {
        ++both_reject;
      }
    }
  }
  std::string summary;
  for (const auto& [code, count] : stguard_only) summary += " " + code + "=" + std::to_string(count);
  std::printf("mutants: %d both accept, %d both refuse, stguard-only refusals:%s\n", both_accept,
              both_reject, summary.c_str());
  EXPECT_GT(both_accept, 0);
  EXPECT_GT(both_reject, 0);
}

}  // namespace
}  // namespace stguard::testing
