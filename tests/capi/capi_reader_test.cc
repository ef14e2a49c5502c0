// SPDX-License-Identifier: Apache-2.0
// C API reading: opening files and buffers, lookups, metadata, alignment, and every
// error path, cross-checked against the C++ reader.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "stguard/reader.h"
#include "stguard/stguard.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

const std::string kCorpus = STGUARD_CORPUS_DIR;
const std::string kSample = kCorpus + "/sample.safetensors";

// ExpectSameAsCpp checks every field of every record of `handle` against the C++ view.
void ExpectSameAsCpp(const stguard_checkpoint* handle, const Checkpoint& cpp) {
  ASSERT_EQ(stguard_checkpoint_num_tensors(handle), cpp.num_tensors());
  for (size_t i = 0; i < cpp.num_tensors(); ++i) {
    const TensorView& view = cpp.tensors()[i];
    const stguard_tensor* tensor = stguard_checkpoint_tensor(handle, i);
    ASSERT_NE(tensor, nullptr);
    EXPECT_EQ(NameOf(*tensor), view.name);
    EXPECT_EQ(static_cast<int>(tensor->dtype), static_cast<int>(view.dtype));
    ASSERT_EQ(tensor->ndim, view.shape.size());
    for (size_t d = 0; d < tensor->ndim; ++d) EXPECT_EQ(tensor->shape[d], view.shape[d]);
    EXPECT_EQ(tensor->num_elements, view.num_elements());
    EXPECT_EQ(tensor->byte_len, view.byte_size());
    EXPECT_EQ(tensor->file_offset, 8 + cpp.header_len() + view.begin);
    // Same content at the same place in the file (the two handles map the file apart).
    EXPECT_EQ(std::memcmp(tensor->data, view.data.data(), view.byte_size()), 0);
    // Lookup by name gives the same record, by pointer.
    EXPECT_EQ(stguard_checkpoint_find(handle, tensor->name, tensor->name_len), tensor);
  }
  ASSERT_EQ(stguard_checkpoint_num_metadata(handle), cpp.metadata().size());
  for (size_t i = 0; i < cpp.metadata().size(); ++i) {
    const stguard_metadata* entry = stguard_checkpoint_metadata(handle, i);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(std::string_view(entry->key, entry->key_len), cpp.metadata()[i].key);
    EXPECT_EQ(std::string_view(entry->value, entry->value_len), cpp.metadata()[i].value);
    EXPECT_EQ(stguard_checkpoint_find_metadata(handle, entry->key, entry->key_len), entry);
  }
}

TEST(CapiReader, OpenSampleMatchesTheCppReader) {
  stguard_checkpoint* handle = nullptr;
  stguard_error err = PoisonedError();
  const stguard_error before = err;
  ASSERT_EQ(stguard_checkpoint_open(kSample.c_str(), &handle, &err), STGUARD_OK);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(std::memcmp(&err, &before, sizeof(err)), 0) << "success must not touch err";
  Result<Checkpoint> cpp = Checkpoint::Open(kSample);
  ASSERT_TRUE(cpp.ok());
  ExpectSameAsCpp(handle, *cpp);
  EXPECT_EQ(stguard_checkpoint_num_tensors(handle), 7u);

  const stguard_tensor* norm = stguard_checkpoint_find_cstr(handle, "model.norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->dtype, STGUARD_DTYPE_F32);
  ASSERT_EQ(norm->ndim, 1u);
  EXPECT_EQ(norm->shape[0], 4u);
  const stguard_tensor* scalar = stguard_checkpoint_find_cstr(handle, "model.rotary.scalar");
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(scalar->ndim, 0u);
  EXPECT_EQ(scalar->num_elements, 1u);

  const stguard_metadata* format = stguard_checkpoint_find_metadata(handle, "format", 6);
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(std::string_view(format->value, format->value_len), "tinyllm");
  stguard_checkpoint_close(handle);
}

TEST(CapiReader, EveryValidCorpusFileMatchesTheCppReader) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus + "/valid")) {
    SCOPED_TRACE(entry.path().string());
    stguard_checkpoint* handle = nullptr;
    ASSERT_EQ(stguard_checkpoint_open(entry.path().c_str(), &handle, nullptr), STGUARD_OK);
    Result<Checkpoint> cpp = Checkpoint::Open(entry.path().string());
    ASSERT_TRUE(cpp.ok());
    ExpectSameAsCpp(handle, *cpp);
    stguard_checkpoint_close(handle);
    ++count;
  }
  EXPECT_GE(count, 10);
}

TEST(CapiReader, FromBufferViewsTheCallersBytesWithoutCopying) {
  const std::string bytes = ReadFileBytes(kSample);
  stguard_checkpoint* handle = nullptr;
  ASSERT_EQ(stguard_checkpoint_from_buffer(bytes.data(), bytes.size(), &handle, nullptr),
            STGUARD_OK);
  ASSERT_EQ(stguard_checkpoint_num_tensors(handle), 7u);
  for (size_t i = 0; i < 7; ++i) {
    const stguard_tensor* tensor = stguard_checkpoint_tensor(handle, i);
    const char* data = static_cast<const char*>(tensor->data);
    EXPECT_EQ(data, bytes.data() + tensor->file_offset) << "data must point into the buffer";
  }
  Result<Checkpoint> cpp = Checkpoint::FromBytes(std::string_view(bytes));
  ASSERT_TRUE(cpp.ok());
  ExpectSameAsCpp(handle, *cpp);
  stguard_checkpoint_close(handle);
}

TEST(CapiReader, NamesAreCountedBytesNotCStrings) {
  // A name with a NUL byte inside ("a\u0000b") and a plain "a": only ptr + len tells them
  // apart; the C-string lookup stops at the NUL and finds "a".
  const std::string file = FileWithHeader(
      R"({"a\u0000b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
      "xy");
  stguard_checkpoint* handle = nullptr;
  ASSERT_EQ(stguard_checkpoint_from_buffer(file.data(), file.size(), &handle, nullptr),
            STGUARD_OK);
  const stguard_tensor* with_nul = stguard_checkpoint_find(handle, "a\0b", 3);
  ASSERT_NE(with_nul, nullptr);
  EXPECT_EQ(NameOf(*with_nul), std::string_view("a\0b", 3));
  EXPECT_EQ(*static_cast<const char*>(with_nul->data), 'x');
  const stguard_tensor* plain = stguard_checkpoint_find_cstr(handle, "a\0b");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(NameOf(*plain), "a");
  EXPECT_EQ(*static_cast<const char*>(plain->data), 'y');
  stguard_checkpoint_close(handle);
}

TEST(CapiReader, UnknownNamesAndIndexesGiveNull) {
  stguard_checkpoint* handle = nullptr;
  ASSERT_EQ(stguard_checkpoint_open(kSample.c_str(), &handle, nullptr), STGUARD_OK);
  EXPECT_EQ(stguard_checkpoint_find_cstr(handle, "model.norm"), nullptr);  // a prefix
  EXPECT_EQ(stguard_checkpoint_find(handle, "model.norm.weightX", 18), nullptr);
  EXPECT_EQ(stguard_checkpoint_find(handle, "model.norm.weight", 16), nullptr);  // cut short
  EXPECT_NE(stguard_checkpoint_find(handle, "model.norm.weight", 17), nullptr);
  EXPECT_EQ(stguard_checkpoint_find(handle, "", 0), nullptr);
  EXPECT_EQ(stguard_checkpoint_find(handle, nullptr, 0), nullptr);
  EXPECT_EQ(stguard_checkpoint_find(handle, nullptr, 5), nullptr);
  EXPECT_EQ(stguard_checkpoint_find_cstr(handle, nullptr), nullptr);
  EXPECT_EQ(stguard_checkpoint_tensor(handle, 7), nullptr);
  EXPECT_EQ(stguard_checkpoint_tensor(handle, SIZE_MAX), nullptr);
  EXPECT_EQ(stguard_checkpoint_metadata(handle, 2), nullptr);
  EXPECT_EQ(stguard_checkpoint_find_metadata(handle, "formats", 7), nullptr);
  EXPECT_EQ(stguard_checkpoint_find_metadata(handle, nullptr, 3), nullptr);
  stguard_checkpoint_close(handle);
}

TEST(CapiReader, NullHandlesAreHarmless) {
  EXPECT_EQ(stguard_checkpoint_num_tensors(nullptr), 0u);
  EXPECT_EQ(stguard_checkpoint_num_metadata(nullptr), 0u);
  EXPECT_EQ(stguard_checkpoint_tensor(nullptr, 0), nullptr);
  EXPECT_EQ(stguard_checkpoint_find(nullptr, "a", 1), nullptr);
  EXPECT_EQ(stguard_checkpoint_find_cstr(nullptr, "a"), nullptr);
  EXPECT_EQ(stguard_checkpoint_metadata(nullptr, 0), nullptr);
  EXPECT_EQ(stguard_checkpoint_find_metadata(nullptr, "a", 1), nullptr);
  stguard_checkpoint_close(nullptr);
}

// ExpectOpenFails opens `path` and checks the code, that *out is NULL and that err is
// filled consistently.
void ExpectOpenFails(const char* path, stguard_code code) {
  stguard_checkpoint* handle = reinterpret_cast<stguard_checkpoint*>(&handle);  // not NULL
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_checkpoint_open(path, &handle, &err), code);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(err.code, code);
  EXPECT_STREQ(err.code_name, stguard_code_name(code));
  EXPECT_GT(std::strlen(err.message), 0u);
  EXPECT_LT(std::strlen(err.message), sizeof(err.message));
  // And the same without an error record.
  EXPECT_EQ(stguard_checkpoint_open(path, &handle, nullptr), code);
}

TEST(CapiReader, BadPathsAreErrors) {
  TempDir dir;
  ExpectOpenFails(dir.File("missing.safetensors").c_str(), STGUARD_IO_ERROR);
  ExpectOpenFails(dir.path().c_str(), STGUARD_NOT_A_REGULAR_FILE);
  ExpectOpenFails("", STGUARD_IO_ERROR);
  ASSERT_TRUE(WriteFileBytes(dir.File("empty"), ""));
  ExpectOpenFails(dir.File("empty").c_str(), STGUARD_HEADER_TOO_SMALL);
  ExpectOpenFails(nullptr, STGUARD_INVALID_ARGUMENT);

  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_checkpoint_open(kSample.c_str(), nullptr, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(err.code, STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(err.offset, 0u);
  EXPECT_STREQ(err.message, "out_checkpoint is NULL");
  EXPECT_EQ(err.tensor_len, 0u);
  EXPECT_STREQ(err.tensor, "");
  EXPECT_EQ(err.truncated, 0);
}

TEST(CapiReader, BadBuffersAreErrors) {
  stguard_checkpoint* handle = nullptr;
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_checkpoint_from_buffer(nullptr, 0, &handle, &err), STGUARD_HEADER_TOO_SMALL);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(stguard_checkpoint_from_buffer(nullptr, 16, &handle, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "data is NULL but len is not 0");
  EXPECT_EQ(stguard_checkpoint_from_buffer("12345678", 8, nullptr, &err),
            STGUARD_INVALID_ARGUMENT);
}

TEST(CapiReader, OptionsOnlyTighten) {
  const std::string bytes = ReadFileBytes(kSample);  // N = 640, nesting depth 3
  stguard_checkpoint* handle = nullptr;
  stguard_options options = {0, 0, 0};
  ASSERT_EQ(stguard_checkpoint_open_with(kSample.c_str(), &options, &handle, nullptr),
            STGUARD_OK) << "zero fields are the defaults";
  stguard_checkpoint_close(handle);
  options.max_header_len = 640;
  options.max_depth = 3;
  ASSERT_EQ(stguard_checkpoint_open_with(kSample.c_str(), &options, &handle, nullptr),
            STGUARD_OK) << "limits are inclusive";
  stguard_checkpoint_close(handle);
  ASSERT_EQ(stguard_checkpoint_from_buffer_with(bytes.data(), bytes.size(), nullptr, &handle,
                                                nullptr),
            STGUARD_OK);
  stguard_checkpoint_close(handle);

  stguard_error err = PoisonedError();
  options.max_header_len = 639;
  EXPECT_EQ(stguard_checkpoint_open_with(kSample.c_str(), &options, &handle, &err),
            STGUARD_HEADER_TOO_LARGE);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(stguard_checkpoint_from_buffer_with(bytes.data(), bytes.size(), &options, &handle,
                                                &err),
            STGUARD_HEADER_TOO_LARGE);
  options.max_header_len = 0;
  options.max_depth = 2;
  EXPECT_EQ(stguard_checkpoint_open_with(kSample.c_str(), &options, &handle, &err),
            STGUARD_DEPTH_EXCEEDED);
  EXPECT_EQ(stguard_checkpoint_open_with(nullptr, &options, &handle, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_checkpoint_from_buffer_with(nullptr, 3, &options, &handle, &err),
            STGUARD_INVALID_ARGUMENT);
}

// The invalid corpus names each file's expected code before "__": the C API must give
// exactly that code, with the C++ reader's offset, message and tensor, from a path and
// from a buffer.
TEST(CapiReader, EveryInvalidCorpusFileGivesItsCode) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus + "/invalid")) {
    const std::string file_name = entry.path().filename().string();
    SCOPED_TRACE(file_name);
    const std::string expected_name = file_name.substr(0, file_name.find("__"));
    const Result<Checkpoint> cpp = Checkpoint::Open(entry.path().string());
    ASSERT_FALSE(cpp.ok());

    stguard_checkpoint* handle = nullptr;
    stguard_error err = PoisonedError();
    const stguard_code code = stguard_checkpoint_open(entry.path().c_str(), &handle, &err);
    EXPECT_NE(code, STGUARD_OK);
    EXPECT_EQ(handle, nullptr);
    EXPECT_EQ(code, err.code);
    EXPECT_EQ(std::string(stguard_code_name(code)), expected_name);
    EXPECT_EQ(std::string(err.code_name), expected_name);
    EXPECT_EQ(err.offset, cpp.error().offset);
    std::string message = cpp.error().message;
    if (!cpp.error().context.empty()) message += ": " + PrintableText(cpp.error().context);
    EXPECT_EQ(std::string(err.message), message);
    EXPECT_EQ(TensorOf(err), cpp.error().tensor);

    const std::string bytes = ReadFileBytes(entry.path().string());
    stguard_error buffer_err = PoisonedError();
    EXPECT_EQ(stguard_checkpoint_from_buffer(bytes.data(), bytes.size(), &handle, &buffer_err),
              code);
    EXPECT_EQ(handle, nullptr);
    EXPECT_EQ(buffer_err.offset, err.offset);
    ++count;
  }
  EXPECT_GE(count, 40);
}

TEST(CapiReader, ErrorTextIsPrintableAndTheTensorNameRaw) {
  // A metadata key given twice ("a<TAB>b", once escaped): the key is the message's detail,
  // shown with the tab escaped.
  const std::string metadata_file =
      FileWithHeader(R"({"__metadata__":{"a	b":"1","a\u0009b":"2"}})");
  stguard_checkpoint* handle = nullptr;
  stguard_error err = PoisonedError();
  ASSERT_EQ(stguard_checkpoint_from_buffer(metadata_file.data(), metadata_file.size(), &handle,
                                           &err),
            STGUARD_CONTROL_CHARACTER) << "a raw tab in a string is itself an error";
  const std::string escaped_file =
      FileWithHeader(R"({"__metadata__":{"a\tb":"1","a\u0009b":"2"}})");
  ASSERT_EQ(stguard_checkpoint_from_buffer(escaped_file.data(), escaped_file.size(), &handle,
                                           &err),
            STGUARD_DUPLICATE_KEY);
  EXPECT_STREQ(err.message, "__metadata__ key appears twice: a\\x09b");
  EXPECT_EQ(err.truncated, 0);

  // A tensor name given twice: the tensor field holds the raw, unescaped name.
  const std::string tensor_file = FileWithHeader(
      R"({"line\nbreak":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      R"("line\u000abreak":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
      "xy");
  ASSERT_EQ(stguard_checkpoint_from_buffer(tensor_file.data(), tensor_file.size(), &handle,
                                           &err),
            STGUARD_DUPLICATE_KEY);
  EXPECT_EQ(TensorOf(err), "line\nbreak");
  EXPECT_EQ(err.tensor[err.tensor_len], '\0');
}

// Utf8Length returns the length of the UTF-8 sequence that `lead` starts (1 for ASCII).
size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  return 2;
}

// EndsOnACharacterBoundary checks that `text` does not end inside a UTF-8 sequence.
bool EndsOnACharacterBoundary(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) i += Utf8Length(static_cast<unsigned char>(text[i]));
  return i == text.size();
}

TEST(CapiReader, LongErrorFieldsAreCutAtCharacterBoundaries) {
  // A 600-byte tensor name of two-byte characters, given twice: the tensor field keeps
  // 127 whole characters (254 of its 255 bytes), never half of one.
  std::string name;
  for (int i = 0; i < 300; ++i) name += "\xC3\xA9";  // U+00E9
  const std::string file = FileWithHeader(
      "{\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},\"" + name +
          "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
      "xy");
  stguard_checkpoint* handle = nullptr;
  stguard_error err = PoisonedError();
  ASSERT_EQ(stguard_checkpoint_from_buffer(file.data(), file.size(), &handle, &err),
            STGUARD_DUPLICATE_KEY);
  EXPECT_EQ(err.truncated, 1);
  EXPECT_EQ(err.tensor_len, 254u);
  EXPECT_EQ(TensorOf(err), name.substr(0, 254));
  EXPECT_EQ(err.tensor[254], '\0');

  // A missing file whose path is 1200 bytes of three-byte characters: the message (which
  // names the path) is cut to fit, on a character boundary.
  TempDir dir;
  std::string long_path = dir.path() + "/";
  for (int i = 0; i < 400; ++i) long_path += "\xE2\x82\xAC";  // U+20AC
  ASSERT_EQ(stguard_checkpoint_open(long_path.c_str(), &handle, &err), STGUARD_IO_ERROR);
  EXPECT_EQ(err.truncated, 1);
  const size_t message_len = std::strlen(err.message);
  EXPECT_LE(message_len, size_t{STGUARD_ERROR_MESSAGE_CAP - 1});
  EXPECT_GE(message_len, size_t{STGUARD_ERROR_MESSAGE_CAP - 3});
  EXPECT_TRUE(EndsOnACharacterBoundary(std::string_view(err.message, message_len)));
}

TEST(CapiReader, AlignmentIsReportedPerTensor) {
  // N = 128 (a multiple of 8) and a buffer aligned to 8: the U8 pair starts the data at
  // an aligned address, the F32 after it is at +2, the I16 at +6 is 2-aligned.
  std::string header =
      R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]},)"
      R"("c":{"dtype":"I16","shape":[1],"data_offsets":[6,8]}})";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  const std::string file = FileWithHeader(header, std::string(8, '\0'));
  std::vector<uint64_t> aligned((file.size() + 7) / 8);
  std::memcpy(aligned.data(), file.data(), file.size());
  stguard_checkpoint* handle = nullptr;
  ASSERT_EQ(stguard_checkpoint_from_buffer(aligned.data(), file.size(), &handle, nullptr),
            STGUARD_OK);
  EXPECT_EQ(stguard_checkpoint_find_cstr(handle, "a")->is_aligned, 1);
  EXPECT_EQ(stguard_checkpoint_find_cstr(handle, "b")->is_aligned, 0);
  EXPECT_EQ(stguard_checkpoint_find_cstr(handle, "c")->is_aligned, 1);
  stguard_checkpoint_close(handle);

  // The same file under require_aligned_data: refused, at the misaligned tensor.
  stguard_options options = {0, 0, 1};
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_checkpoint_from_buffer_with(aligned.data(), file.size(), &options, &handle,
                                                &err),
            STGUARD_MISALIGNED_DATA);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(TensorOf(err), "b");
  EXPECT_STREQ(err.code_name, "MisalignedData");
  // A canonical file passes, every tensor aligned.
  ASSERT_EQ(stguard_checkpoint_open_with(kSample.c_str(), &options, &handle, &err), STGUARD_OK);
  for (size_t i = 0; i < stguard_checkpoint_num_tensors(handle); ++i) {
    EXPECT_EQ(stguard_checkpoint_tensor(handle, i)->is_aligned, 1);
  }
  stguard_checkpoint_close(handle);
}

TEST(CapiCodes, NamesMatchTheCppLibrary) {
  for (int i = 0; i < STGUARD_NUM_CODES; ++i) {
    EXPECT_EQ(std::string_view(stguard_code_name(static_cast<stguard_code>(i))),
              ErrorCodeName(static_cast<ErrorCode>(i)));
  }
  EXPECT_STREQ(stguard_code_name(STGUARD_OK), "Ok");
  EXPECT_STREQ(stguard_code_name(STGUARD_OUT_OF_MEMORY), "OutOfMemory");
  EXPECT_STREQ(stguard_code_name(STGUARD_NUM_CODES), "Unknown");
  EXPECT_STREQ(stguard_code_name(static_cast<stguard_code>(256)), "Unknown");  // not "Ok"
  EXPECT_STREQ(stguard_code_name(static_cast<stguard_code>(-1)), "Unknown");
}

}  // namespace
}  // namespace stguard::testing
