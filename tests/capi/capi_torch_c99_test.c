/* SPDX-License-Identifier: Apache-2.0 */
/* The C API for PyTorch files (stguard/stguard_torch.h, stguard/stguard_check.h) from a
 * strict C99 program (built with -std=c99 -pedantic -Werror).
 *
 * Usage: capi_torch_c99_test CORPUS_DIR SCRATCH_DIR   runs the checks; exit 0 when all pass.
 *        capi_torch_c99_test --describe FILE...       prints "FILE: FORMAT: SENTENCE" per
 *            file, the first line `stguard scan FILE` prints (ctest compares the two). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c99_support.h"
#include "stguard/stguard.h"
#include "stguard/stguard_check.h"
#include "stguard/stguard_torch.h"

static int starts_with(const char* text, const char* prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

static stguard_format sniff(const char* corpus, const char* name) {
  char path[4096];
  stguard_format format = STGUARD_NUM_FORMATS;
  stguard_error err;
  join(path, sizeof(path), corpus, name);
  CHECK(stguard_sniff_file(path, &format, &err) == STGUARD_OK);
  return format;
}

static void test_sniffer(const char* corpus) {
  stguard_format format = STGUARD_FORMAT_SAFETENSORS;
  stguard_error err;
  const char json[] = "{\"not\": \"a checkpoint\"}";
  const char text[] = "just some words\n";

  CHECK(sniff(corpus, "torch/valid/dtypes.zip.pt") == STGUARD_FORMAT_PYTORCH_ZIP);
  CHECK(sniff(corpus, "torch/valid/dtypes.legacy.pt") == STGUARD_FORMAT_PYTORCH_LEGACY);
  CHECK(sniff(corpus, "torch/refuse/RawPickle__raw_clean_pickle.pt") == STGUARD_FORMAT_PICKLE);
  CHECK(sniff(corpus, "sample.safetensors") == STGUARD_FORMAT_SAFETENSORS);
  CHECK(stguard_sniff_buffer(json, sizeof(json) - 1) == STGUARD_FORMAT_JSON);
  CHECK(stguard_sniff_buffer(text, sizeof(text) - 1) == STGUARD_FORMAT_UNKNOWN);
  CHECK(stguard_sniff_buffer(NULL, 10) == STGUARD_FORMAT_UNKNOWN);

  CHECK(stguard_sniff_file("/nonexistent/model.bin", &format, &err) == STGUARD_IO_ERROR);
  CHECK(format == STGUARD_FORMAT_UNKNOWN);
  CHECK(err.code == STGUARD_IO_ERROR);
  CHECK(stguard_sniff_file(corpus, &format, &err) == STGUARD_NOT_A_REGULAR_FILE);
  CHECK(stguard_sniff_file(NULL, &format, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_sniff_file(corpus, NULL, NULL) == STGUARD_INVALID_ARGUMENT);

  CHECK(strcmp(stguard_format_name(STGUARD_FORMAT_PYTORCH_ZIP), "pytorch-zip") == 0);
  CHECK(strcmp(stguard_format_name(STGUARD_FORMAT_SAFETENSORS), "safetensors") == 0);
  CHECK(strcmp(stguard_format_name((stguard_format)999), "unknown") == 0);
  CHECK(stguard_format_is_pickle_bearing(STGUARD_FORMAT_PYTORCH_LEGACY) == 1);
  CHECK(stguard_format_is_pickle_bearing(STGUARD_FORMAT_SAFETENSORS) == 0);
  CHECK(stguard_format_is_pickle_bearing((stguard_format)-1) == 0);
}

/* scan opens a report on corpus/NAME, which must be readable. */
static stguard_torch_report* scan(const char* corpus, const char* name,
                                  const stguard_torch_options* options) {
  char path[4096];
  stguard_torch_report* report = NULL;
  stguard_error err;
  join(path, sizeof(path), corpus, name);
  CHECK(stguard_torch_scan_file(path, options, &report, &err) == STGUARD_OK);
  CHECK(report != NULL);
  return report;
}

static void test_scan_verdicts(const char* corpus) {
  stguard_torch_report* report;
  stguard_error reason;
  const stguard_torch_tensor* tensor;
  const stguard_torch_global* global;
  size_t i;
  int refused_global = 0;

  /* Accept: a clean checkpoint lists its tensors and converts. */
  report = scan(corpus, "torch/valid/dtypes.zip.pt", NULL);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_CLEAN);
  CHECK(stguard_torch_report_format(report) == STGUARD_FORMAT_PYTORCH_ZIP);
  CHECK(stguard_torch_report_reason(report, &reason) == STGUARD_OK);
  CHECK(starts_with(stguard_torch_report_description(report), "clean: pytorch-zip checkpoint"));
  CHECK(stguard_torch_report_num_tensors(report) > 0);
  for (i = 0; i < stguard_torch_report_num_tensors(report); ++i) {
    tensor = stguard_torch_report_tensor(report, i);
    CHECK(tensor != NULL && tensor->name_len > 0);
    CHECK(tensor != NULL && (unsigned)tensor->dtype < (unsigned)STGUARD_NUM_DTYPES);
  }
  CHECK(stguard_torch_report_tensor(report, stguard_torch_report_num_tensors(report)) == NULL);
  CHECK(stguard_torch_report_num_key_paths(report) == 0);
  stguard_torch_report_free(report);

  /* Reject: a pickle that names os.system names code, and says where. */
  report = scan(corpus, "torch/refuse/PickleGlobalRefused__zip_os_system.pt", NULL);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_NAMES_CODE);
  CHECK(stguard_torch_report_reason(report, &reason) == STGUARD_PICKLE_GLOBAL_REFUSED);
  CHECK(reason.code == STGUARD_PICKLE_GLOBAL_REFUSED && reason.offset > 0);
  CHECK(starts_with(stguard_torch_report_description(report), "names code: "));
  for (i = 0; i < stguard_torch_report_num_globals(report); ++i) {
    global = stguard_torch_report_global(report, i);
    if (global != NULL && !global->allowed) refused_global = 1;
  }
  CHECK(refused_global);
  stguard_torch_report_free(report);

  /* A truncated container cannot be proven safe. */
  report = scan(corpus, "torch/refuse/PickleCorrupt__no_stop.pt", NULL);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_CANNOT_PROVE_SAFE);
  CHECK(stguard_torch_report_reason(report, NULL) == STGUARD_PICKLE_CORRUPT);
  stguard_torch_report_free(report);

  CHECK(strcmp(stguard_scan_verdict_name(STGUARD_SCAN_NEEDS_KEY), "needs-key") == 0);
  CHECK(strcmp(stguard_scan_verdict_name((stguard_scan_verdict)7), "unknown") == 0);
}

static void test_needs_key(const char* corpus, const char* scratch) {
  char in[4096], out[4096];
  const char* keys[1] = {"state_dict"};
  stguard_torch_options options;
  stguard_torch_report* report;
  stguard_checkpoint* ckpt = NULL;
  stguard_error err;

  report = scan(corpus, "torch/valid/training.zip.pt", NULL);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_NEEDS_KEY);
  CHECK(stguard_torch_report_reason(report, NULL) == STGUARD_NOT_A_STATE_DICT);
  CHECK(stguard_torch_report_num_key_paths(report) >= 1);
  CHECK(stguard_torch_report_key_path(report, 0) != NULL &&
        strcmp(stguard_torch_report_key_path(report, 0), "--key state_dict") == 0);
  CHECK(stguard_torch_report_key_path(report, 99) == NULL);
  stguard_torch_report_free(report);

  memset(&options, 0, sizeof(options));
  options.key_path = keys;
  options.num_keys = 1;
  report = scan(corpus, "torch/valid/training.zip.pt", &options);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_CLEAN);
  stguard_torch_report_free(report);

  join(in, sizeof(in), corpus, "torch/valid/training.zip.pt");
  join(out, sizeof(out), scratch, "training.safetensors");
  remove(out);
  CHECK(stguard_torch_convert_file(in, out, NULL, &err) == STGUARD_NOT_A_STATE_DICT);
  CHECK(!file_exists(out));
  CHECK(stguard_torch_convert_file(in, out, &options, &err) == STGUARD_OK);
  CHECK(stguard_checkpoint_open(out, &ckpt, &err) == STGUARD_OK);
  CHECK(stguard_checkpoint_num_tensors(ckpt) > 0);
  stguard_checkpoint_close(ckpt);

  options.num_keys = 1;
  options.key_path = NULL;
  CHECK(stguard_torch_convert_file(in, out, &options, &err) == STGUARD_INVALID_ARGUMENT);

  /* stguard_convert, any format's one call: the same refusal and the same key, a
     dtype, and OUT that is IN refused with the input kept. */
  options.key_path = keys;
  remove(out);
  CHECK(stguard_convert(in, out, STGUARD_NUM_DTYPES, NULL, &err) == STGUARD_NOT_A_STATE_DICT);
  CHECK(!file_exists(out));
  CHECK(stguard_convert(in, out, STGUARD_DTYPE_F16, &options, &err) == STGUARD_OK);
  CHECK(stguard_convert(in, in, STGUARD_NUM_DTYPES, &options, &err) ==
        STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_convert(in, out, STGUARD_DTYPE_I8, &options, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_checkpoint_open(out, &ckpt, &err) == STGUARD_OK);  /* OUT kept, in F16 */
  CHECK(stguard_checkpoint_num_tensors(ckpt) > 0);
  stguard_checkpoint_close(ckpt);
  report = scan(corpus, "torch/valid/training.zip.pt", &options);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_CLEAN);  /* IN intact */
  stguard_torch_report_free(report);
}

static void test_convert(const char* corpus, const char* scratch) {
  char in[4096], out[4096], folder_in[4096], folder_out[4096], shard[4096];
  stguard_torch_report* report;
  stguard_checkpoint* ckpt = NULL;
  const stguard_metadata* format;
  stguard_torch_options options;
  stguard_error err;

  /* Accept: the tensors the scan lists are the tensors written. */
  join(in, sizeof(in), corpus, "torch/valid/dtypes.legacy.pt");
  join(out, sizeof(out), scratch, "dtypes.safetensors");
  remove(out);
  CHECK(stguard_torch_convert_file(in, out, NULL, &err) == STGUARD_OK);
  report = scan(corpus, "torch/valid/dtypes.legacy.pt", NULL);
  CHECK(stguard_checkpoint_open(out, &ckpt, &err) == STGUARD_OK);
  CHECK(stguard_checkpoint_num_tensors(ckpt) == stguard_torch_report_num_tensors(report));
  format = stguard_checkpoint_find_metadata(ckpt, "format", 6);
  CHECK(format != NULL && format->value_len == 2 && memcmp(format->value, "pt", 2) == 0);
  stguard_checkpoint_close(ckpt);
  stguard_torch_report_free(report);

  /* Reject: a malicious file writes nothing. */
  join(in, sizeof(in), corpus, "torch/refuse/PickleGlobalRefused__legacy_os_system.pt");
  join(out, sizeof(out), scratch, "os_system.safetensors");
  remove(out);
  CHECK(stguard_torch_convert_file(in, out, NULL, &err) == STGUARD_PICKLE_GLOBAL_REFUSED);
  CHECK(err.code == STGUARD_PICKLE_GLOBAL_REFUSED && err.offset > 0);
  CHECK(!file_exists(out));
  CHECK(stguard_torch_convert_file(NULL, out, NULL, &err) == STGUARD_INVALID_ARGUMENT);

  /* A folder of shards converts into an empty (or new) folder, never into one holding
     files; a key there is a usage error. */
  join(folder_in, sizeof(folder_in), corpus, "torch/valid/sharded");
  join(folder_out, sizeof(folder_out), scratch, "sharded_out");
  join(shard, sizeof(shard), folder_out, "model-00001-of-00002.safetensors");
  remove(shard);
  join(shard, sizeof(shard), folder_out, "model-00002-of-00002.safetensors");
  remove(shard);
  join(shard, sizeof(shard), folder_out, "model.safetensors.index.json");
  remove(shard);
  CHECK(stguard_torch_convert_folder(folder_in, folder_out, NULL, &err) == STGUARD_OK);
  CHECK(file_exists(shard));
  CHECK(stguard_torch_convert_folder(folder_in, folder_out, NULL, &err) == STGUARD_IO_ERROR);
  memset(&options, 0, sizeof(options));
  options.max_output_ratio = 8;
  CHECK(stguard_torch_convert_folder(folder_in, folder_out, &options, &err) ==
        STGUARD_INVALID_ARGUMENT);
}

static void test_read_failures(const char* corpus) {
  stguard_torch_report* report = (stguard_torch_report*)&failures; /* must be reset */
  stguard_error err;
  CHECK(stguard_torch_scan_file("/nonexistent/model.bin", NULL, &report, &err) ==
        STGUARD_IO_ERROR);
  CHECK(report == NULL);
  CHECK(stguard_torch_scan_file(corpus, NULL, &report, &err) == STGUARD_NOT_A_REGULAR_FILE);
  CHECK(stguard_torch_scan_file(NULL, NULL, &report, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_torch_scan_buffer(NULL, 4, NULL, &report, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_torch_scan_buffer("abc", 3, NULL, NULL, NULL) == STGUARD_INVALID_ARGUMENT);
  /* Bytes that are no checkpoint still get a verdict. */
  CHECK(stguard_torch_scan_buffer("abc", 3, NULL, &report, &err) == STGUARD_OK);
  CHECK(stguard_torch_report_verdict(report) == STGUARD_SCAN_CANNOT_PROVE_SAFE);
  stguard_torch_report_free(report);
  stguard_torch_report_free(NULL);
  CHECK(stguard_torch_report_num_tensors(NULL) == 0);
  CHECK(strcmp(stguard_torch_report_description(NULL), "") == 0);
}

/* describe prints the first line `stguard scan FILE` prints, from the C API alone. */
static int describe(int argc, char** argv) {
  int i;
  int status = 0;
  for (i = 2; i < argc; ++i) {
    stguard_torch_report* report = NULL;
    stguard_error err;
    if (stguard_torch_scan_file(argv[i], NULL, &report, &err) != STGUARD_OK) {
      printf("%s: error: %s\n", argv[i], err.message);
      status = 2;
      continue;
    }
    printf("%s: %s: %s\n", argv[i], stguard_format_name(stguard_torch_report_format(report)),
           stguard_torch_report_description(report));
    stguard_torch_report_free(report);
  }
  return status;
}

/* check_exit verdicts corpus/NAME as `stguard check` does and returns its exit status. */
static int check_exit(const char* corpus, const char* name) {
  char path[4096];
  stguard_result* result = NULL;
  int status;
  join(path, sizeof(path), corpus, name);
  CHECK(stguard_check_path(path, NULL, &result, NULL) == STGUARD_OK);
  status = stguard_verdict_exit_status(stguard_result_verdict(result));
  stguard_result_free(result);
  return status;
}

/* One exit status per scan verdict: clean and needs-key are safe (0), names-code and
 * cannot-prove-safe are not (1); bytes after a bare pickle's STOP cannot be proven safe. */
static void test_exit_per_verdict(const char* corpus) {
  static const struct {
    const char* name;
    stguard_scan_verdict verdict;
    int exit_status;
  } cases[] = {
      {"torch/valid/dtypes.zip.pt", STGUARD_SCAN_CLEAN, 0},
      {"torch/refuse/RawPickle__raw_clean_pickle.pt", STGUARD_SCAN_CLEAN, 0},
      {"torch/valid/training.legacy.pt", STGUARD_SCAN_NEEDS_KEY, 0},
      {"torch/refuse/NotAStateDict__not_a_dict.pt", STGUARD_SCAN_NEEDS_KEY, 0},
      {"torch/bypass/PickleGlobalRefused__pip_main.pt", STGUARD_SCAN_NAMES_CODE, 1},
      {"torch/bypass/TrailingContent__stacked_list_then_call.pt",
       STGUARD_SCAN_CANNOT_PROVE_SAFE, 1},
  };
  size_t i;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    stguard_torch_report* report = scan(corpus, cases[i].name, NULL);
    CHECK(stguard_torch_report_verdict(report) == cases[i].verdict);
    CHECK(check_exit(corpus, cases[i].name) == cases[i].exit_status);
    stguard_torch_report_free(report);
  }
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--describe") == 0) return describe(argc, argv);
  if (argc != 3) {
    fprintf(stderr, "usage: %s CORPUS_DIR SCRATCH_DIR | --describe FILE...\n", argv[0]);
    return 2;
  }
  test_sniffer(argv[1]);
  test_scan_verdicts(argv[1]);
  test_exit_per_verdict(argv[1]);
  test_needs_key(argv[1], argv[2]);
  test_convert(argv[1], argv[2]);
  test_read_failures(argv[1]);
  return finish("all PyTorch C99 checks passed");
}
