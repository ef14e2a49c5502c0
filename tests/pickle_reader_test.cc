// SPDX-License-Identifier: Apache-2.0
// The static pickle reader: what torch.save writes is read; every other opcode, global,
// argument shape and memo trick is refused with its code and the opcode's offset.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pickle/pickle_reader.h"

namespace stguard {
namespace {

using namespace std::string_literals;

Result<PickleResult> Read(const std::string& bytes, PersistentIds ids = PersistentIds::kZip,
                          std::vector<GlobalUse>* globals = nullptr) {
  PickleReadOptions options;
  options.persistent_ids = ids;
  options.base_offset = 100;
  return ReadPickle(std::as_bytes(std::span(bytes.data(), bytes.size())), options, globals);
}

Error ErrorOf(const std::string& bytes) {
  Result<PickleResult> result = Read(bytes);
  return result.ok() ? Error{} : result.error();
}

// A state dict {"w": tensor} exactly as torch 1.13 pickles it (protocol 2).
const std::string kStateDict =
    "\x80\x02" "ccollections\nOrderedDict\nq\x00)Rq\x01("
    "X\x01\x00\x00\x00" "wq\x02"
    "ctorch._utils\n_rebuild_tensor_v2\nq\x03((X\x07\x00\x00\x00" "storageq\x04"
    "ctorch\nFloatStorage\nq\x05X\x01\x00\x00\x00" "0q\x06X\x03\x00\x00\x00" "cpuq\x07K\x06tq\x08Q"
    "K\x00K\x02K\x03\x86q\x09K\x03K\x01\x86q\x0a\x89h\x00)Rq\x0btq\x0cRq\x0d"
    "u}q\x0eX\x09\x00\x00\x00" "_metadataq\x0fh\x00)Rq\x10sb."s;

TEST(PickleReaderTest, ReadsTorchStateDict) {
  std::vector<GlobalUse> globals;
  Result<PickleResult> result = Read(kStateDict, PersistentIds::kZip, &globals);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  const PickleValue& root = result->at(result->root);
  EXPECT_EQ(root.kind, ValueKind::kDict);
  EXPECT_TRUE(root.flag);
  ASSERT_EQ(root.items.size(), 2u);
  EXPECT_EQ(result->at(root.items[1]).kind, ValueKind::kTensor);
  ASSERT_EQ(result->storages.size(), 1u);
  EXPECT_EQ(result->storages[0].key, "0");
  EXPECT_EQ(result->storages[0].dtype, Dtype::kF32);
  EXPECT_EQ(result->storages[0].num_elements, 6u);
  ASSERT_EQ(result->tensors.size(), 1u);
  EXPECT_EQ(result->tensors[0].sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(result->tensors[0].strides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(globals.size(), 3u);
  EXPECT_EQ(result->end, 100 + kStateDict.size());
}

TEST(PickleReaderTest, ReadsPlainContainersAtProtocol4) {
  // {"a": [1, -2, 3.5, None, True], "b": (b"x",)} with SHORT_BINUNICODE, MEMOIZE, FRAME.
  const std::string body =
      "}\x94(\x8c\x01\x61\x94]\x94(K\x01J\xfe\xff\xff\xff"
      "G\x40\x0c\x00\x00\x00\x00\x00\x00N\x88" "e\x8c\x01\x62\x94" "C\x01x\x85\x94u."s;
  std::string p = "\x80\x04\x95"s;
  for (int k = 0; k < 8; ++k) p += static_cast<char>(k == 0 ? body.size() : 0);
  p += body;
  Result<PickleResult> result = Read(p, PersistentIds::kNone);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  const PickleValue& root = result->at(result->root);
  ASSERT_EQ(root.items.size(), 4u);
  const PickleValue& list = result->at(root.items[1]);
  ASSERT_EQ(list.items.size(), 5u);
  EXPECT_EQ(result->at(list.items[1]).integer, -2);
  EXPECT_EQ(result->at(list.items[2]).real, 3.5);
}

TEST(PickleReaderTest, RefusesGlobalsOutsideAllowlistWithNameAndOffset) {
  const std::string p = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR."s;
  std::vector<GlobalUse> globals;
  Result<PickleResult> result = Read(p, PersistentIds::kZip, &globals);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kPickleGlobalRefused);
  EXPECT_EQ(result.error().offset, 102u);
  EXPECT_EQ(result.error().context, "os.system");
  ASSERT_EQ(globals.size(), 1u);
  EXPECT_FALSE(globals[0].allowed);
}

TEST(PickleReaderTest, StackGlobalResolvesMemoisedStrings) {
  // The strings come from the memo, not from literals next to STACK_GLOBAL.
  const std::string refused = "\x80\x04\x8c\x02os\x94\x8c\x06system\x94h\x00h\x01\x93."s;
  EXPECT_EQ(ErrorOf(refused).code, ErrorCode::kPickleGlobalRefused);
  EXPECT_EQ(ErrorOf(refused).context, "os.system");
  const std::string allowed = "\x80\x04(\x8c\x0b" "collections\x94\x8c\x0b" "OrderedDict\x94t"
                              "h\x00h\x01\x93)R\x86."s;
  EXPECT_TRUE(ErrorOf(allowed).ok()) << ErrorOf(allowed).ToString();
  EXPECT_EQ(ErrorOf("\x80\x04K\x01K\x02\x93."s).code, ErrorCode::kPickleCorrupt);
}

TEST(PickleReaderTest, MemoIsOneTableAsInCPython) {
  // MEMOIZE stores keys 0 and 1, then BINPUT 1 again: a redefinition.
  const std::string conflict = "\x80\x04\x8c\x01\x61\x94\x8c\x01\x62\x94q\x01."s;
  const Error error = ErrorOf(conflict);
  EXPECT_EQ(error.code, ErrorCode::kPickleMemoConflict);
  EXPECT_EQ(error.offset, 100u + 10);
  // BINPUT 0 then MEMOIZE (key 1) then BINPUT 2 is fine; BINGET 1 gets MEMOIZE's value.
  const std::string ok = "\x80\x04\x8c\x01\x61q\x00\x8c\x01\x62\x94h\x01\x87q\x02."s;
  Result<PickleResult> result = Read(ok, PersistentIds::kNone);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  const PickleValue& pair = result->at(result->root);
  EXPECT_EQ(result->at(pair.items[2]).text, "b");
  EXPECT_EQ(ErrorOf("\x80\x02h\x07."s).code, ErrorCode::kPickleCorrupt);  // undefined key
}

TEST(PickleReaderTest, RequiresGradOnlyWhereTorchAllowsIt) {
  // kStateDict's tensor is a FloatStorage view with requires_grad=False (NEWFALSE).
  const size_t flag = kStateDict.find("\x89h\x00)R");
  ASSERT_NE(flag, std::string::npos);
  std::string float_grad = kStateDict;
  float_grad[flag] = '\x88';
  EXPECT_TRUE(ErrorOf(float_grad).ok()) << ErrorOf(float_grad).ToString();
  // The same on a LongStorage: torch.load fails ("only Tensors of floating point and
  // complex dtype can require gradients"), so stguard refuses, naming the call.
  std::string long_grad = float_grad;
  long_grad.replace(long_grad.find("FloatStorage\n"), 13, "LongStorage\n");
  const Error error = ErrorOf(long_grad);
  EXPECT_EQ(error.code, ErrorCode::kPickleBadArguments);
  EXPECT_EQ(error.context, "torch._utils._rebuild_tensor_v2");
  std::string long_no_grad = kStateDict;
  long_no_grad.replace(long_no_grad.find("FloatStorage\n"), 13, "LongStorage\n");
  EXPECT_TRUE(ErrorOf(long_no_grad).ok()) << ErrorOf(long_no_grad).ToString();
}

TEST(PickleReaderTest, MemoKeysAreTheNextOneAsCPythonWrites) {
  // CPython's C unpickler sizes its memo array by the key: LONG_BINPUT 0xffffffff is a
  // MemoryError in torch, so any key but the next one is refused, however small.
  const Error huge = ErrorOf("\x80\x02}r\xff\xff\xff\xff."s);
  EXPECT_EQ(huge.code, ErrorCode::kPickleMemoKey);
  EXPECT_EQ(huge.offset, 100u + 3);
  EXPECT_EQ(huge.context, "4294967295, expected 0");
  EXPECT_EQ(ErrorOf("\x80\x02}q\x02."s).code, ErrorCode::kPickleMemoKey);
  EXPECT_EQ(ErrorOf("\x80\x02}q\x00]q\x02\x86."s).code, ErrorCode::kPickleMemoKey);
  // Counting from 1 (Python 2's cPickle, torch's legacy files saved under Python 2), the
  // next key is len(memo) + 1; a key 0 after that is out of order.
  EXPECT_TRUE(ErrorOf("\x80\x02}q\x01]q\x02\x86."s).ok());
  EXPECT_TRUE(ErrorOf("\x80\x02}q\x01h\x01\x86."s).ok());  // BINGET 1: the dict
  EXPECT_EQ(ErrorOf("\x80\x02}q\x01]q\x00\x86."s).code, ErrorCode::kPickleMemoKey);
  EXPECT_EQ(ErrorOf("\x80\x02}q\x01h\x00\x86."s).code, ErrorCode::kPickleCorrupt);
  // BINPUT 1 then MEMOIZE: CPython's MEMOIZE takes key len(memo) == 1 again, overwriting.
  const Error confusion = ErrorOf("\x80\x04\x8c\x01\x61q\x01\x8c\x01\x62\x94."s);
  EXPECT_EQ(confusion.code, ErrorCode::kPickleMemoConflict);
  EXPECT_EQ(confusion.offset, 100u + 10);
  // Accept: the next key, by BINPUT or LONG_BINPUT.
  EXPECT_TRUE(ErrorOf("\x80\x02}q\x00."s).ok());
  EXPECT_TRUE(ErrorOf("\x80\x02}r\x00\x00\x00\x00]q\x01\x86."s).ok());
}

// WithFrame builds PROTO 4 followed by `body`, with FRAME <len> inserted at `at`.
std::string WithFrame(const std::string& body, size_t at, uint64_t len) {
  std::string frame = "\x95"s;
  for (int k = 0; k < 8; ++k) frame += static_cast<char>((len >> (8 * k)) & 0xff);
  return "\x80\x04"s + body.substr(0, at) + frame + body.substr(at);
}

TEST(PickleReaderTest, FramesEndAtOrBeforeStop) {
  const std::string body = "}\x94\x8c\x01k\x94K\x07s."s;  // {"k": 7}, 10 bytes
  // Accept: one frame holding the whole pickle (as CPython writes it), two frames that
  // meet between opcodes, an empty frame, a frame ending before STOP.
  EXPECT_TRUE(ErrorOf(WithFrame(body, 0, body.size())).ok());
  const std::string two = WithFrame(body, 0, 2);  // "}\x94", then a frame for the rest
  const std::string split = two.substr(0, 13) + WithFrame(body.substr(2), 0, 8).substr(2);
  EXPECT_TRUE(ErrorOf(split).ok()) << ErrorOf(split).ToString();
  EXPECT_TRUE(ErrorOf(WithFrame(body, 0, 0)).ok());
  EXPECT_TRUE(ErrorOf(WithFrame(body, 0, 6)).ok());
  // Refuse: a frame one byte past STOP (bytes follow, as in a legacy stream), reported
  // at the FRAME.
  const Error past = ErrorOf(WithFrame(body, 0, body.size() + 1) + "\x80"s);
  EXPECT_EQ(past.code, ErrorCode::kPickleFrameAmbiguous);
  EXPECT_EQ(past.offset, 100u + 2);
  EXPECT_EQ(past.context, "1 bytes past STOP");
  // Refuse: a frame that ends inside an opcode (SHORT_BINUNICODE cut after its length).
  EXPECT_EQ(ErrorOf(WithFrame(body, 0, 4)).code, ErrorCode::kPickleFrameAmbiguous);
  // Refuse: a FRAME inside another frame.
  const std::string nested = WithFrame(body, 0, 19);  // to the end, with the inner FRAME
  EXPECT_EQ(ErrorOf(nested.substr(0, 11) + WithFrame(body, 0, 0).substr(2)).code,
            ErrorCode::kPickleFrameAmbiguous);
  // A frame longer than the input stays corrupt (torch: "pickle data was truncated").
  EXPECT_EQ(ErrorOf(WithFrame(body, 0, 100)).code, ErrorCode::kPickleCorrupt);
}

TEST(PickleReaderTest, RefusesOpcodesTorchDoesNotWrite) {
  for (const std::string& p : {"\x80\x02N0N."s, "\x80\x02" "ccollections\nOrderedDict\n)\x81."s,
                               "\x80\x02(I1\n."s, "\x80\x04\x8f."s, "\x80\x02\x82\x01."s}) {
    EXPECT_EQ(ErrorOf(p).code, ErrorCode::kPickleOpcodeRefused) << ErrorOf(p).ToString();
  }
  EXPECT_EQ(ErrorOf("\x80\x01N."s).code, ErrorCode::kPickleOpcodeRefused);  // protocol 1
}

TEST(PickleReaderTest, RefusesWrongArgumentShapes) {
  // OrderedDict with arguments; _rebuild_tensor_v2 with a string offset; storage type called.
  EXPECT_EQ(ErrorOf("\x80\x02" "ccollections\nOrderedDict\n]\x85R."s).code,
            ErrorCode::kPickleBadArguments);
  std::string bad_offset = kStateDict;
  bad_offset.replace(bad_offset.find("QK\x00"s), 3, "QX\x01\x00\x00\x00" "0"s);
  EXPECT_EQ(ErrorOf(bad_offset).code, ErrorCode::kPickleBadArguments);
  EXPECT_EQ(ErrorOf(bad_offset).context, "torch._utils._rebuild_tensor_v2");
  EXPECT_EQ(ErrorOf("\x80\x02" "ctorch\nFloatStorage\n)R."s).code,
            ErrorCode::kPickleBadArguments);
  // REDUCE on a non-global, BUILD as setattr.
  EXPECT_EQ(ErrorOf("\x80\x02N)R."s).code, ErrorCode::kPickleBadArguments);
  EXPECT_EQ(ErrorOf("\x80\x02" "ccollections\nOrderedDict\n)R}X\x09\x00\x00\x00__class__Nsb."s)
                .code,
            ErrorCode::kPickleBadArguments);
  // A persistent id of the wrong shape, and one outside a checkpoint.
  EXPECT_EQ(ErrorOf("\x80\x02X\x07\x00\x00\x00storage\x85Q."s).code,
            ErrorCode::kPickleBadArguments);
  Result<PickleResult> none = Read(kStateDict, PersistentIds::kNone);
  EXPECT_EQ(none.error().code, ErrorCode::kPickleOpcodeRefused);
}

TEST(PickleReaderTest, StructuralCorruptionIsOneCode) {
  for (const std::string& p :
       {""s, "\x80\x02"s, "\x80\x02N"s, "\x80\x02NN."s, "\x80\x02(N."s, "\x80\x02t."s,
        "\x80\x02X\xff\x00\x00\x00ab."s, "\x80\x02" "a."s, "N."s, "\x80\x02\xff."s,
        "\x80\x02N\x80\x02."s, "\x80\x02X\x02\x00\x00\x00\xc3\x28."s}) {
    const Error error = ErrorOf(p);
    EXPECT_EQ(error.code, ErrorCode::kPickleCorrupt) << error.ToString();
    EXPECT_GE(error.offset, 100u);
    EXPECT_LE(error.offset, 100u + p.size());
  }
}

TEST(PickleReaderTest, SameStorageMustAgree) {
  // Two persistent ids for storage "0", one FloatStorage of 6 and one of 7 elements.
  const std::string pid6 =
      "(X\x07\x00\x00\x00" "storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00"
      "cpuK\x06tQ"s;
  std::string pid7 = pid6;
  pid7[pid7.size() - 3] = '\x07';
  EXPECT_TRUE(ErrorOf("\x80\x02" + pid6 + pid6 + "\x86.").ok());
  EXPECT_EQ(ErrorOf("\x80\x02" + pid6 + pid7 + "\x86.").code, ErrorCode::kStorageMismatch);
}

// torch 2.x: _rebuild_tensor_v3(untyped storage, offset, size, stride, requires_grad,
// hooks, dtype) as torch/_tensor.py writes it for float8 and uint16-64.
std::string V3Tensor(const std::string& dtype, const std::string& nbytes_op,
                     const std::string& extra = "") {
  return "ctorch._utils\n_rebuild_tensor_v3\n((X\x07\x00\x00\x00" "storagectorch.storage\n"
         "UntypedStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpu"s +
         nbytes_op + "tQK\x00K\x02\x85K\x01\x85\x89" "ccollections\nOrderedDict\n)R"s + dtype +
         extra + "tR"s;
}

TEST(PickleReaderTest, RebuildTensorV3TypesItsUntypedStorage) {
  // uint16 [2] on an untyped storage of 4 bytes: the storage becomes U16 x 2.
  Result<PickleResult> result = Read("\x80\x02" + V3Tensor("ctorch\nuint16\n", "K\x04") + ".");
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  ASSERT_EQ(result->storages.size(), 1u);
  EXPECT_TRUE(result->storages[0].untyped);
  EXPECT_EQ(result->storages[0].dtype, Dtype::kU16);
  EXPECT_EQ(result->storages[0].num_elements, 2u);
  ASSERT_EQ(result->tensors.size(), 1u);
  EXPECT_EQ(result->tensors[0].sizes, std::vector<int64_t>{2});
  // With metadata None, and float8.
  EXPECT_TRUE(Read("\x80\x02" + V3Tensor("ctorch\nfloat8_e4m3fn\n", "K\x04", "N") + ".").ok());
  // The same storage named again (in bytes) and viewed with the same dtype: fine.
  const std::string two = "\x80\x02" + V3Tensor("ctorch\nuint16\n", "K\x04") +
                          V3Tensor("ctorch\nuint16\n", "K\x04") + "\x86.";
  EXPECT_TRUE(Read(two).ok()) << Read(two).error().ToString();
}

TEST(PickleReaderTest, RebuildTensorV3RefusesWrongShapesAndDtypes) {
  // A dtype safetensors lacks: refused as a global, saying why.
  const Error complex32 = ErrorOf("\x80\x02" + V3Tensor("ctorch\ncomplex32\n", "K\x04") + ".");
  EXPECT_EQ(complex32.code, ErrorCode::kPickleGlobalRefused);
  EXPECT_EQ(complex32.context, "torch.complex32");
  EXPECT_NE(std::string(complex32.message).find("safetensors has no dtype"), std::string::npos);
  // A legacy dtype global, never written by torch for v3: not in the allowlist.
  EXPECT_EQ(ErrorOf("\x80\x02" + V3Tensor("ctorch\nfloat32\n", "K\x04") + ".").code,
            ErrorCode::kPickleGlobalRefused);
  // No dtype (6 arguments), a string for the dtype, a dtype called.
  EXPECT_EQ(ErrorOf("\x80\x02" + V3Tensor("", "K\x04") + ".").code,
            ErrorCode::kPickleBadArguments);
  EXPECT_EQ(ErrorOf("\x80\x02" + V3Tensor("X\x01\x00\x00\x00u"s, "K\x04") + ".").code,
            ErrorCode::kPickleBadArguments);
  EXPECT_EQ(ErrorOf("\x80\x02" "ctorch\nuint16\n)R."s).code, ErrorCode::kPickleBadArguments);
  // 3 bytes are no whole number of uint16; two dtypes on one storage.
  EXPECT_EQ(ErrorOf("\x80\x02" + V3Tensor("ctorch\nuint16\n", "K\x03") + ".").code,
            ErrorCode::kStorageMismatch);
  EXPECT_EQ(ErrorOf("\x80\x02" + V3Tensor("ctorch\nuint16\n", "K\x04") +
                    V3Tensor("ctorch\nfloat8_e5m2\n", "K\x04") + "\x86.")
                .code,
            ErrorCode::kStorageMismatch);
  // _rebuild_tensor_v2 on an untyped storage.
  std::string v2 = V3Tensor("", "K\x04");
  v2.replace(v2.find("_rebuild_tensor_v3"), 18, "_rebuild_tensor_v2");
  EXPECT_EQ(ErrorOf("\x80\x02" + v2 + ".").code, ErrorCode::kPickleBadArguments);
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

std::string Unicode(const std::string& text) {
  const auto n = static_cast<uint32_t>(text.size());
  std::string out = "X";
  for (int k = 0; k < 4; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
  return out + text;
}

// SharedTuplesPickle is a state dict of `tensors` U8 tensors of `dims` unit dimensions,
// all REDUCEd from one memoised size tuple (memo 4), used as sizes and strides: the shape
// a reader that copies shared values pays tensors x dims for.
std::string SharedTuplesPickle(size_t dims, size_t tensors) {
  std::string out = "\x80\x02" "ccollections\nOrderedDict\nq\x00)Rq\x01("s;
  for (size_t k = 0; k < tensors; ++k) {
    out += Unicode("t" + std::to_string(k));
    out += k == 0 ? "ctorch._utils\n_rebuild_tensor_v2\nq\x02"s : "h\x02"s;
    out += "(";
    out += k == 0 ? "(" + Unicode("storage") + "ctorch\nByteStorage\n" + Unicode("0") +
                        Unicode("cpu") + "K\x10tQq\x03"
                  : "h\x03"s;
    out += "K\x00"s;
    if (k == 0) {
      out += "(";
      for (size_t d = 0; d < dims; ++d) out += "K\x01";
      out += "tq\x04"s;
    } else {
      out += "h\x04"s;
    }
    out += "h\x04\x89"s;
    out += k == 0 ? "}q\x05"s : "h\x05"s;
    out += "tR";
  }
  return out + "u.";
}

TEST(PickleBoundsTest, SharedSizeTuplesAreChargedAgainstThePicklesLength) {
  // Accepted: 20 tensors of 1,000 dimensions share one tuple (40,000 items copied, under
  // two per byte plus the allowance).
  const std::string small = SharedTuplesPickle(1000, 20);
  Result<PickleResult> ok = Read(small);
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->tensors.size(), 20u);
  EXPECT_EQ(ok->tensors[19].sizes, std::vector<int64_t>(1000, 1));
  EXPECT_EQ(ok->copied_items, 40'000u + 3);  // and the location "cpu", once
  EXPECT_EQ(ok->length, small.size());
  EXPECT_LE(ok->copied_items, CopyBudget(ok->length));
  // Refused: 200 of them would copy 400,000 items from a 6 KB pickle.
  const std::string big = SharedTuplesPickle(1000, 200);
  const Error error = ErrorOf(big);
  EXPECT_EQ(error.code, ErrorCode::kPickleBadArguments) << error.ToString();
  EXPECT_NE(std::string(error.message).find("copied past the pickle's length"), std::string::npos);
  EXPECT_GT(error.offset, 100u);
  EXPECT_LT(error.offset, 100 + big.size());
  EXPECT_EQ(big[error.offset - 100], 'R');  // the REDUCE that would pass the budget
}

TEST(PickleBoundsTest, RefusesMoreReduceArgumentsThanAnyCallableTakes) {
  // Eight None arguments are read (and refused for their shape); nine are refused unread.
  const std::string eight = "\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n(NNNNNNNNtR."s;
  const std::string nine = "\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n(NNNNNNNNNtR."s;
  EXPECT_NE(std::string(ErrorOf(eight).message).find("expected 6 or 7"), std::string::npos)
      << ErrorOf(eight).ToString();
  const Error error = ErrorOf(nine);
  EXPECT_EQ(error.code, ErrorCode::kPickleBadArguments);
  EXPECT_NE(std::string(error.message).find("more REDUCE arguments"), std::string::npos);
}

}  // namespace
}  // namespace stguard
