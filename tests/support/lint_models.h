// SPDX-License-Identifier: Apache-2.0
// Model folders for `lint` tests: a folder to lint (config.json and one header-only shard),
// the tiny llama every rule starts from, and the LintTest fixture that lints them, shared
// by the library's rule tests and the command's tests (one fixture class per suite).
#ifndef STGUARD_TESTS_SUPPORT_LINT_MODELS_H_
#define STGUARD_TESTS_SUPPORT_LINT_MODELS_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/lint.h"
#include "support/sparse_checkpoint.h"
#include "support/temp_dir.h"

namespace stguard::testing {

// Model is a folder to lint: config.json text (none when empty) and one shard.
struct Model {
  std::string config;
  std::vector<ShapedTensor> tensors;
  std::vector<std::pair<std::string, std::string>> metadata = {{"format", "pt"}};

  ShapedTensor* Find(const std::string& name) {
    for (ShapedTensor& tensor : tensors) {
      if (tensor.name == name) return &tensor;
    }
    return nullptr;
  }
  void Remove(const std::string& name) {
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [&](const ShapedTensor& t) { return t.name == name; }),
                  tensors.end());
  }
  void SetConfig(const std::string& from, const std::string& to) {
    const size_t at = config.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    config.replace(at, from.size(), to);
  }
};

// TinyLlama: vocab 32, hidden 16, 2 layers, 4 heads of 4, 2 kv heads, mlp 24, untied.
Model TinyLlama(Dtype dtype = Dtype::kF32);

// LintTest writes a Model into its folder and lints it; its checks print the findings.
class LintTest : public ::testing::Test {
 protected:
  LintReport Lint(const Model& model) {
    EXPECT_TRUE(
        WriteSparseCheckpoint(dir_.File("model.safetensors"), model.tensors, model.metadata)
            .ok());
    if (!model.config.empty()) {
      EXPECT_TRUE(WriteFileBytes(dir_.File("config.json"), model.config));
    }
    return LintModel(dir_.path());
  }

  static std::string Describe(const LintReport& report) {
    std::string out;
    for (const LintFinding& f : report.findings) {
      out += std::string(LintSeverityName(f.severity)) + " " + f.rule + " '" + f.tensor +
             "' expected " + f.expected + " found " + f.found + ": " + f.message + "\n";
    }
    return out;
  }
  static size_t Count(const LintReport& report, const std::string& rule) {
    return static_cast<size_t>(std::count_if(report.findings.begin(), report.findings.end(),
                                             [&](const LintFinding& f) { return f.rule == rule; }));
  }
  static const LintFinding* First(const LintReport& report, const std::string& rule) {
    for (const LintFinding& f : report.findings) {
      if (f.rule == rule) return &f;
    }
    return nullptr;
  }
  // ExpectClean: no findings at all.
  static void ExpectClean(const LintReport& report) {
    EXPECT_TRUE(report.error.ok()) << report.error.ToString();
    EXPECT_TRUE(report.findings.empty()) << Describe(report);
  }
  // ExpectOnly: exactly the findings of `rule`, `count` of them, with `severity`.
  static void ExpectOnly(const LintReport& report, const std::string& rule, size_t count,
                         LintSeverity severity = LintSeverity::kError) {
    EXPECT_EQ(Count(report, rule), count) << Describe(report);
    EXPECT_EQ(report.findings.size(), count) << Describe(report);
    for (const LintFinding& f : report.findings) EXPECT_EQ(f.severity, severity) << Describe(report);
  }

  TempDir dir_;
};

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_LINT_MODELS_H_
