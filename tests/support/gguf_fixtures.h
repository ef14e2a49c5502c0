// SPDX-License-Identifier: Apache-2.0
// GoogleTest fixtures shared by the GGUF library tests and the command-line tests: one
// fixture class per suite, so a suite whose tests live in two files is still one suite.
#ifndef STGUARD_TESTS_SUPPORT_GGUF_FIXTURES_H_
#define STGUARD_TESTS_SUPPORT_GGUF_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/gguf_convert.h"
#include "support/gguf_encoder.h"
#include "support/temp_dir.h"

namespace stguard::testing {

// GgufConvert writes GGUF models into a temporary folder and converts them to out_.
class GgufConvert : public ::testing::Test {
 protected:
  // WriteModel encodes `model` as the file `name` in the folder and returns its path.
  std::string WriteModel(const GgufModel& model, const std::string& name = "in.gguf");
  // Convert converts `in` to out_, its report in report_.
  Error Convert(const std::string& in, const GgufConvertOptions& options = {});

  TempDir dir_;
  std::string out_ = dir_.File("out.safetensors");
  GgufConvertReport report_;
};

// SplitPart is part `no` (0-based) of a split model of `count` parts and `total` tensors,
// holding the F32 tensors `names` of 4 elements each.
GgufModel SplitPart(uint16_t no, uint16_t count, int32_t total, std::vector<std::string> names);

// GgufSplit writes the parts of a split model, m-0000N-of-00003.gguf, into a folder.
class GgufSplit : public ::testing::Test {
 protected:
  std::string PartPath(int n) const;
  void Write(int n, const GgufModel& model);
  // WriteValidSet writes three parts holding tensors a, b | c, d | e.
  void WriteValidSet();
  // Verdict is the code CheckSplitSet gives the set from its first part.
  ErrorCode Verdict();

  TempDir dir_;
};

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_GGUF_FIXTURES_H_
