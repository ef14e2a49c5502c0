// SPDX-License-Identifier: Apache-2.0
// `stguard lint` on the command line: the exit status of a clean and a broken model, the
// same findings in --json, and usage errors.
#include <gtest/gtest.h>

#include <string>

#include "stguard/json_tokenizer.h"
#include "support/lint_models.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

TEST_F(LintTest, CommandExitStatusAndJson) {
  Model model = TinyLlama();
  Lint(model);
  CliRun run = RunCli("lint " + dir_.path());
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find(": ok (family llama, 21 tensors in 1 shard, 0 errors, 0 warnings)"),
            std::string::npos)
      << run.output;

  model.Find("model.layers.1.mlp.down_proj.weight")->shape = {24, 16};
  Lint(model);
  run = RunCli("lint " + dir_.File("model.safetensors"));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("error: wrong-shape: tensor 'model.layers.1.mlp.down_proj.weight' "
                            "expected [16, 24], found [24, 16] (transposed)"),
            std::string::npos)
      << run.output;
  run = RunCli("lint --json " + dir_.path());
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(ValidateJson(run.output).ok()) << run.output;
  EXPECT_NE(run.output.find("\"rule\":\"wrong-shape\""), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"transposed\":true"), std::string::npos) << run.output;

  ASSERT_TRUE(WriteFileBytes(dir_.File("other.json"), TinyLlama().config));
  EXPECT_EQ(RunCli("lint --config " + dir_.File("other.json") + " " + dir_.path()).status, 1);
  EXPECT_EQ(RunCli("lint " + dir_.File("absent")).status, 2);
  EXPECT_EQ(RunCli("lint --config " + dir_.File("absent.json") + " " + dir_.path()).status, 2);
  EXPECT_EQ(RunCli("lint").status, 2);
  EXPECT_EQ(RunCli("lint --bogus " + dir_.path()).status, 2);
  // Several inputs are linted in turn (--jobs): the worst verdict's status.
  EXPECT_EQ(RunCli("lint " + dir_.path() + " " + dir_.path()).status, 1);
}

// A valid file lint does not read is a usage error naming what lint reads (not a finding
// that check rejects it); a safetensors file is linted (above).
TEST_F(LintTest, AValidFileOfAnotherFormatIsAUsageError) {
  const std::string npy = std::string(STGUARD_CORPUS_DIR) + "/fuzz_npy/c8_v2.npy";
  const CliRun run = RunCli("lint " + npy);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("lint reads safetensors, folder, not .npy"), std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("invalid-checkpoint"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace stguard::testing
