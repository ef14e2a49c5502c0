// SPDX-License-Identifier: Apache-2.0
#include "support/gguf_fixtures.h"

#include "stguard/gguf.h"

namespace stguard::testing {

std::string GgufConvert::WriteModel(const GgufModel& model, const std::string& name) {
  const std::string path = dir_.File(name);
  EXPECT_TRUE(WriteFileBytes(path, Encode(model)));
  return path;
}

Error GgufConvert::Convert(const std::string& in, const GgufConvertOptions& options) {
  report_ = {};
  return ConvertGguf(in, out_, options, &report_);
}

GgufModel SplitPart(uint16_t no, uint16_t count, int32_t total, std::vector<std::string> names) {
  GgufModel model;
  model.kvs = {GgufStr("general.architecture", "llama"), GgufU16("split.no", no),
               GgufU16("split.count", count), GgufI32("split.tensors.count", total)};
  for (const std::string& name : names) model.tensors.push_back({name, 0, {4}, {}, {}});
  return model;
}

std::string GgufSplit::PartPath(int n) const {
  return dir_.File("m-0000" + std::to_string(n) + "-of-00003.gguf");
}

void GgufSplit::Write(int n, const GgufModel& model) {
  ASSERT_TRUE(WriteFileBytes(PartPath(n), Encode(model)));
}

void GgufSplit::WriteValidSet() {
  Write(1, SplitPart(0, 3, 5, {"a", "b"}));
  Write(2, SplitPart(1, 3, 5, {"c", "d"}));
  Write(3, SplitPart(2, 3, 5, {"e"}));
}

ErrorCode GgufSplit::Verdict() {
  Result<gguf::GgufSplitSet> set = gguf::CheckSplitSet(PartPath(1));
  return set.ok() ? ErrorCode::kOk : set.error().code;
}

}  // namespace stguard::testing
