// SPDX-License-Identifier: Apache-2.0
// The per-input results (CheckInput, ScanInput, LintInput), the many-inputs runner
// (RunInputs: order, window, summary, threads over mixed formats) and the SARIF log.
#include "stguard/inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace stguard {
namespace {

const std::string kCorpus = STGUARD_CORPUS_DIR;

std::string TempDir(const std::string& name) {
  const std::string dir = testing::TempDir() + "/inputs_test_" + name + "_" +
                          std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Npy is a version 1.0 .npy file of two elements of `descr`.
std::string Npy(const std::string& descr) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(descr == "|O" ? 0 : 8, '\0');
}

InputReport Judged(Verdict verdict) {
  InputReport report;
  report.verdict = verdict;
  return report;
}

TEST(RunInputs, DeliversInInputOrderWhileLaterInputsFinishFirst) {
  // Input 0 finishes only after inputs 1 and 2 have: with 3 jobs they run at once, and
  // the delivery still starts with 0. (With one job this would never finish.)
  const std::vector<std::string> inputs = {"0", "1", "2", "3", "4", "5", "6"};
  std::mutex mutex;
  std::condition_variable done;
  int later_done = 0;
  std::vector<size_t> delivered;
  const RunSummary summary = RunInputs(
      inputs, 3,
      [&](const std::string& input) {
        std::unique_lock lock(mutex);
        if (input == "0") {
          done.wait(lock, [&] { return later_done >= 2; });
        } else if (input == "1" || input == "2") {
          ++later_done;
          done.notify_all();
        }
        InputReport report;
        report.lines.push_back(input);
        return report;
      },
      [&](size_t index, InputReport& report) {
        EXPECT_EQ(report.lines.at(0), inputs[index]);
        delivered.push_back(index);
      });
  EXPECT_EQ(delivered, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(summary.inputs, 7u);
  EXPECT_EQ(summary.valid, 7u);
  EXPECT_EQ(summary.exit_status(), 0);
}

TEST(RunInputs, HoldsAtMostTheWindowAheadOfTheDelivery) {
  const unsigned jobs = 2;
  std::vector<std::string> inputs(200, "x");
  std::atomic<size_t> judged = 0;
  size_t most_ahead = 0;
  RunInputs(
      inputs, jobs,
      [&](const std::string&) {
        ++judged;
        return InputReport{};
      },
      [&](size_t index, InputReport&) {
        // Inputs judged but not yet delivered (this one, being delivered, excluded).
        most_ahead = std::max(most_ahead, judged.load() - (index + 1));
        if (index == 0) usleep(50000);  // let the workers run ahead: they must stop
      });
  EXPECT_LE(most_ahead, kPendingPerJob * jobs);
  EXPECT_GT(most_ahead, 1u);
}

TEST(RunInputs, ExitStatusIsTheWorstVerdictsNotTheLargestNumber) {
  // An unreadable input (error, 2) does not hide a refused one (1).
  const std::vector<std::string> inputs = {"valid", "error", "refused", "invalid"};
  const RunSummary summary = RunInputs(
      inputs, 2,
      [](const std::string& input) {
        return Judged(input == "valid"     ? Verdict::kValid
                      : input == "error"   ? Verdict::kError
                      : input == "refused" ? Verdict::kRefused
                                           : Verdict::kInvalid);
      },
      [](size_t, InputReport&) {});
  EXPECT_EQ(summary.worst, Verdict::kRefused);
  EXPECT_EQ(summary.exit_status(), 1);
  EXPECT_EQ(summary.errors, 1u);
  const std::vector<std::string> readable_only = {"valid", "error"};
  EXPECT_EQ(RunInputs(
                readable_only, 2,
                [](const std::string& input) {
                  return Judged(input == "valid" ? Verdict::kValid : Verdict::kError);
                },
                [](size_t, InputReport&) {})
                .exit_status(),
            2);
}

TEST(RunInputs, ADeliveryThatThrowsStopsTheRunInsteadOfHanging) {
  const std::vector<std::string> inputs(100, "x");
  std::atomic<size_t> judged = 0;
  EXPECT_THROW(RunInputs(
                   inputs, 2,
                   [&](const std::string&) {
                     ++judged;
                     return InputReport{};
                   },
                   [](size_t index, InputReport&) {
                     if (index == 3) throw std::runtime_error("no room to print");
                   }),
               std::runtime_error);
  EXPECT_LE(judged.load(), 4 + kPendingPerJob * 2);
}

TEST(RunInputs, NoInputsNoThreads) {
  const RunSummary summary = RunInputs({}, 4, [](const std::string&) { return InputReport{}; },
                                       [](size_t, InputReport&) { FAIL(); });
  EXPECT_EQ(summary.inputs, 0u);
  EXPECT_EQ(summary.exit_status(), 0);
}

TEST(SummaryLine, GroupsThousandsAndNamesInvalidOnlyWhenThereAreSome) {
  RunSummary summary;
  summary.inputs = 10010;
  summary.valid = 10000;
  summary.refused = 10;
  summary.seconds = 1.44;
  EXPECT_EQ(SummaryLine(summary), "10,010 files: 10,000 valid, 10 refused, 0 errors; 1.4 s");
  summary.inputs = 1;
  summary.valid = 0;
  summary.refused = 0;
  summary.invalid = 1;
  summary.seconds = 0;
  EXPECT_EQ(SummaryLine(summary), "1 file: 0 valid, 1 invalid, 0 refused, 0 errors; 0.0 s");
  summary = RunSummary{};
  summary.inputs = 1234567;
  summary.valid = 999;
  summary.errors = 1000;
  EXPECT_EQ(SummaryLine(summary), "1,234,567 files: 999 valid, 0 refused, 1,000 errors; 0.0 s");
}

// Many threads over every format at once give what one thread gives: every reader keeps its
// state in the call.
TEST(RunInputs, ThreadsOverMixedFormatsMatchOneThread) {
  const std::string dir = TempDir("mixed");
  WriteFile(dir + "/a.npy", Npy("<f4"));
  WriteFile(dir + "/object.npy", Npy("|O"));
  std::vector<std::string> inputs;
  for (const char* sub :
       {"/torch/valid", "/torch/refuse", "/torch/bypass", "/gguf/refuse", "/valid", "/invalid"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kCorpus + sub)) {
      inputs.push_back(entry.path().string());
    }
  }
  inputs.push_back(dir + "/a.npy");
  inputs.push_back(dir + "/object.npy");
  inputs.push_back(dir + "/missing");
  inputs.push_back(kCorpus + "/torch/valid");  // a folder
  const size_t one_pass = inputs.size();
  for (size_t i = 0; i < one_pass; ++i) inputs.push_back(inputs[i]);
  OutputOptions json;
  json.json = true;
  auto run = [&](unsigned jobs, bool scan) {
    std::vector<std::string> lines;
    RunInputs(
        inputs, jobs,
        [&](const std::string& path) {
          return scan ? ScanInput(path, {}, json) : CheckInput(path, {}, json);
        },
        [&](size_t, InputReport& report) {
          for (std::string& line : report.lines) lines.push_back(std::move(line));
        });
    return lines;
  };
  for (const bool scan : {false, true}) {
    const std::vector<std::string> one = run(1, scan);
    EXPECT_GE(one.size(), inputs.size());
    EXPECT_EQ(run(4, scan), one) << (scan ? "scan" : "check");
  }
  std::filesystem::remove_all(dir);
}

TEST(CheckInput, JsonIsTheEnvelopeThenTheSummaryAndTextIsOneLine) {
  OutputOptions json;
  json.json = true;
  const InputReport valid = CheckInput(kCorpus + "/sample.safetensors", {}, json);
  ASSERT_EQ(valid.lines.size(), 1u);
  EXPECT_TRUE(valid.lines[0].starts_with("{\"schema_version\":"));
  EXPECT_NE(valid.lines[0].find("\"verdict\":\"valid\""), std::string::npos);
  EXPECT_NE(valid.lines[0].find("\"header_bytes\":"), std::string::npos);
  EXPECT_TRUE(valid.findings.empty());
  OutputOptions quiet;
  quiet.quiet = true;
  EXPECT_TRUE(CheckInput(kCorpus + "/sample.safetensors", {}, quiet).lines.empty());
  const InputReport refused =
      CheckInput(kCorpus + "/torch/bypass/PickleGlobalRefused__bdb_run.pt", {}, quiet);
  ASSERT_EQ(refused.lines.size(), 1u);  // quiet keeps what is not valid
  EXPECT_NE(refused.lines[0].find(": refused: "), std::string::npos);
  ASSERT_EQ(refused.findings.size(), 1u);
  EXPECT_EQ(refused.exit_status(), 1);
}

TEST(ScanInput, NpyObjectArrayIsRefusedPlainArrayValid) {
  const std::string dir = TempDir("npy");
  WriteFile(dir + "/a.npy", Npy("<f4"));
  WriteFile(dir + "/o.npy", Npy("|O"));
  OutputOptions json;
  json.json = true;
  const InputReport plain = ScanInput(dir + "/a.npy", {}, json);
  EXPECT_EQ(plain.verdict, Verdict::kValid);
  EXPECT_NE(plain.lines.at(0).find("\"pickle\":false"), std::string::npos);
  const InputReport object = ScanInput(dir + "/o.npy", {}, json);
  EXPECT_EQ(object.verdict, Verdict::kRefused);
  EXPECT_NE(object.lines.at(0).find("\"pickle\":true"), std::string::npos);
  ASSERT_EQ(object.findings.size(), 1u);
  EXPECT_EQ(object.findings[0].error.code, ErrorCode::kNpyObjectArray);
  std::filesystem::remove_all(dir);
}

TEST(ScanInput, RequireConvertibleMakesANeedsKeyFileInvalid) {
  const std::string nested = kCorpus + "/torch/valid/nested.zip.pt";
  EXPECT_EQ(ScanInput(nested, {}, {}).verdict, Verdict::kValid);
  ScanInputOptions strict;
  strict.require_convertible = true;
  const InputReport report = ScanInput(nested, strict, {});
  EXPECT_EQ(report.verdict, Verdict::kInvalid);
  EXPECT_EQ(report.findings.size(), 1u);
}

TEST(LintInput, AFormatLintDoesNotReadIsAUsageErrorAndSafetensorsIsLinted) {
  const std::string dir = TempDir("lint");
  WriteFile(dir + "/a.npy", Npy("<f4"));
  OutputOptions json;
  json.json = true;
  const InputReport npy = LintInput(dir + "/a.npy", {}, json);
  EXPECT_EQ(npy.verdict, Verdict::kError);
  ASSERT_EQ(npy.findings.size(), 1u);
  EXPECT_EQ(npy.findings[0].error.code, ErrorCode::kInvalidArgument);
  // A safetensors file without config.json beside it: lint runs and says so.
  const InputReport sample = LintInput(kCorpus + "/sample.safetensors", {}, json);
  ASSERT_EQ(sample.lines.size(), 1u);
  EXPECT_TRUE(sample.lines[0].starts_with("{\"schema_version\":"));
  std::filesystem::remove_all(dir);
}

TEST(Sarif, RulesCarryTheErrorListsTextAndResultsTheirRegion) {
  EXPECT_EQ(ErrorCodeHelp(ErrorCode::kNotARegularFile),
            "the path names a directory, device or other non-file");
  // Every row of the list has its comment, so every rule has help text.
  for (int code = 1; code < static_cast<int>(ErrorCode::kNumErrorCodes); ++code) {
    EXPECT_FALSE(ErrorCodeHelp(static_cast<ErrorCode>(code)).empty()) << code;
  }
  EXPECT_EQ(ErrorCodeHelp(ErrorCode::kNumErrorCodes), "");
  std::vector<InputFinding> findings(2);
  findings[0] = {"dir/a b.pt", Verdict::kRefused,
                 Error{ErrorCode::kPickleGlobalRefused, 71, "global not in the allowlist", "os.system"},
                 true};
  findings[1] = {"/abs/\xff.bin", Verdict::kError, Error{ErrorCode::kIoError, 0, "open", ""},
                 false};
  const std::string log = SarifLog(findings, "1.2.3");
  EXPECT_NE(log.find("\"version\":\"2.1.0\""), std::string::npos);
  EXPECT_NE(log.find("\"uri\":\"dir/a%20b.pt\"},\"region\":{\"startLine\":1,\"byteOffset\":71}"),
            std::string::npos);
  EXPECT_NE(log.find("\"uri\":\"file:///abs/%FF.bin\"},\"region\":{\"startLine\":1}}"),
            std::string::npos);
  EXPECT_NE(log.find("\"level\":\"warning\""), std::string::npos);
}

TEST(Sarif, IsNeverWrittenOntoAnInputAndIsWrittenWhole) {
  const std::string dir = TempDir("sarif");
  const std::string input = dir + "/model.bin";
  WriteFile(input, "weights");
  const std::vector<std::string> inputs = {input};
  const Error refused = WriteSarifFile(input, inputs, {}, "1");
  EXPECT_EQ(refused.code, ErrorCode::kInvalidArgument);
  std::ifstream kept(input);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "weights");
  ASSERT_TRUE(WriteSarifFile(dir + "/log.sarif", inputs, {}, "1").ok());
  std::ifstream log(dir + "/log.sarif");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(log), {}), SarifLog({}, "1"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stguard
