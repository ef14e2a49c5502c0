/* SPDX-License-Identifier: Apache-2.0 */
/* The C API's verdict on any file or folder (stguard/stguard_check.h) from a strict C99
 * program (built with -std=c99 -pedantic -Werror).
 *
 * Usage: capi_check_c99_test CORPUS_DIR MIXED_FOLDER   runs the checks; exit 0 when all pass.
 *            MIXED_FOLDER holds a valid model.safetensors and a pytorch_model.bin that
 *            names os.system (CMake makes it).
 *        capi_check_c99_test --json PATH...   prints each path's envelope, one per line, and
 *            exits with the worst verdict's status, as `stguard check --json` does
 *            (tests/front_ends/same_envelopes.py compares the lines with the CLI's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c99_support.h"
#include "stguard/stguard.h"
#include "stguard/stguard_check.h"

static stguard_result* check_path(const char* path) {
  stguard_result* result = NULL;
  stguard_error err;
  CHECK(stguard_check_path(path, NULL, &result, &err) == STGUARD_OK);
  CHECK(result != NULL);
  return result;
}

static void test_files(const char* corpus) {
  char path[4096];
  stguard_result* result;
  stguard_error err;

  /* Accept: a valid safetensors file. */
  join(path, sizeof(path), corpus, "sample.safetensors");
  result = check_path(path);
  CHECK(stguard_result_verdict(result) == STGUARD_VERDICT_VALID);
  CHECK(stguard_result_format(result) == STGUARD_FORMAT_SAFETENSORS);
  CHECK(stguard_result_error(result, &err) == STGUARD_OK);
  CHECK(stguard_result_summary(result).tensors == 7);
  CHECK(strstr(stguard_result_json(result), "\"verdict\":\"valid\"") != NULL);
  CHECK(strstr(stguard_result_json(result), "\"code\"") == NULL);
  stguard_result_free(result);

  /* Invalid: a malformed header, with the byte at fault. */
  join(path, sizeof(path), corpus, "invalid/DuplicateKey__tensor_twice.safetensors");
  result = check_path(path);
  CHECK(stguard_result_verdict(result) == STGUARD_VERDICT_INVALID);
  CHECK(stguard_result_error(result, &err) == STGUARD_DUPLICATE_KEY);
  CHECK(stguard_result_offset_in_file(result) == 1 && err.offset > 0);
  CHECK(strstr(stguard_result_json(result), "\"offset\":") != NULL);
  stguard_result_free(result);

  /* Refused: a PyTorch file naming os.system, checked like any other file. */
  join(path, sizeof(path), corpus, "torch/refuse/PickleGlobalRefused__zip_os_system.pt");
  result = check_path(path);
  CHECK(stguard_result_verdict(result) == STGUARD_VERDICT_REFUSED);
  CHECK(stguard_result_format(result) == STGUARD_FORMAT_PYTORCH_ZIP);
  CHECK(stguard_result_error(result, NULL) == STGUARD_PICKLE_GLOBAL_REFUSED);
  stguard_result_free(result);

  /* Error: no verdict on a file that is not there, and no offset. */
  result = check_path("/nonexistent/model.safetensors");
  CHECK(stguard_result_verdict(result) == STGUARD_VERDICT_ERROR);
  CHECK(stguard_result_error(result, &err) == STGUARD_IO_ERROR && err.offset == 0);
  CHECK(stguard_result_offset_in_file(result) == 0);
  CHECK(strstr(stguard_result_json(result), "\"offset\"") == NULL);
  stguard_result_free(result);
}

/* An archive with no member, what np.savez(f) writes (its end record alone): a valid npz
 * of no array, written beside the mixed folder. */
static void test_empty_npz(const char* folder) {
  static const char kEmpty[22] = {'P', 'K', 5, 6};
  char path[4096];
  FILE* file;
  stguard_result* result;
  join(path, sizeof(path), folder, "../empty.npz");
  file = fopen(path, "wb");
  CHECK(file != NULL);
  if (file == NULL) return;
  CHECK(fwrite(kEmpty, 1, sizeof(kEmpty), file) == sizeof(kEmpty));
  CHECK(fclose(file) == 0);
  result = check_path(path);
  CHECK(stguard_result_verdict(result) == STGUARD_VERDICT_VALID);
  CHECK(stguard_result_format(result) == STGUARD_FORMAT_NPZ);
  CHECK(stguard_result_summary(result).tensors == 0);
  stguard_result_free(result);
}

static void test_mixed_folder(const char* folder) {
  stguard_result* result = check_path(folder);
  const stguard_result* file;
  size_t i;
  int found_pickle = 0;

  /* A valid model beside a malicious pytorch_model.bin: the folder is refused, and the
   * error names the file. */
  CHECK(stguard_result_is_folder(result) == 1);
  CHECK(stguard_result_verdict(result) == STGUARD_VERDICT_REFUSED);
  CHECK(stguard_verdict_exit_status(stguard_result_verdict(result)) == 1);
  CHECK(stguard_result_error(result, NULL) == STGUARD_PICKLE_GLOBAL_REFUSED);
  CHECK(strcmp(stguard_result_member(result), "pytorch_model.bin") == 0);
  for (i = 0; i < stguard_result_num_files(result); ++i) {
    file = stguard_result_file_at(result, i);
    CHECK(file != NULL);
    if (file != NULL && strcmp(stguard_result_path(file), "pytorch_model.bin") == 0) {
      ++found_pickle;
      CHECK(stguard_result_verdict(file) == STGUARD_VERDICT_REFUSED);
      stguard_result_free((stguard_result*)file); /* a no-op: the folder owns it */
    }
  }
  CHECK(found_pickle == 1); /* listed once */
  CHECK(stguard_result_file_at(result, stguard_result_num_files(result)) == NULL);
  stguard_result_free(result);
}

static void test_arguments(void) {
  stguard_result* result = NULL;
  stguard_check_options options;
  stguard_torch_options torch;
  stguard_error err;
  CHECK(stguard_check_path(NULL, NULL, &result, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(result == NULL);
  CHECK(stguard_check_path("x", NULL, NULL, &err) == STGUARD_INVALID_ARGUMENT);
  memset(&options, 0, sizeof(options));
  memset(&torch, 0, sizeof(torch));
  torch.num_keys = 2; /* and no keys */
  options.torch = &torch;
  CHECK(stguard_check_path("x", &options, &result, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(strcmp(stguard_verdict_name(STGUARD_VERDICT_REFUSED), "refused") == 0);
  CHECK(strcmp(stguard_verdict_name((stguard_verdict)42), "error") == 0);
  CHECK(stguard_verdict_exit_status(STGUARD_VERDICT_VALID) == 0);
  CHECK(stguard_verdict_exit_status(STGUARD_VERDICT_ERROR) == 2);
  CHECK(strncmp(stguard_verdict_sentence(STGUARD_VERDICT_REFUSED), "Refused: ", 9) == 0);
  /* The order of verdicts: refused, invalid, error, valid; an unreadable path (error)
   * never hides a refusal or a malformed file. */
  CHECK(stguard_verdict_worse(STGUARD_VERDICT_ERROR, STGUARD_VERDICT_REFUSED) ==
        STGUARD_VERDICT_REFUSED);
  CHECK(stguard_verdict_worse(STGUARD_VERDICT_INVALID, STGUARD_VERDICT_ERROR) ==
        STGUARD_VERDICT_INVALID);
  CHECK(stguard_verdict_worse(STGUARD_VERDICT_VALID, STGUARD_VERDICT_ERROR) ==
        STGUARD_VERDICT_ERROR);
  CHECK(stguard_verdict_worse(STGUARD_VERDICT_VALID, (stguard_verdict)42) ==
        STGUARD_VERDICT_ERROR);
  CHECK(strcmp(stguard_verdict_sentence((stguard_verdict)42),
               stguard_verdict_sentence(STGUARD_VERDICT_ERROR)) == 0);
  CHECK(stguard_result_verdict(NULL) == STGUARD_VERDICT_ERROR);
  CHECK(strcmp(stguard_result_json(NULL), "") == 0);
  stguard_result_free(NULL);
}

/* print_envelopes prints each path's envelope and returns the worst verdict's status. */
static int print_envelopes(int argc, char** argv) {
  int i;
  stguard_verdict worst = STGUARD_VERDICT_VALID;
  for (i = 2; i < argc; ++i) {
    stguard_result* result = check_path(argv[i]);
    printf("%s\n", stguard_result_json(result));
    worst = stguard_verdict_worse(worst, stguard_result_verdict(result));
    stguard_result_free(result);
  }
  return failures != 0 ? 3 : stguard_verdict_exit_status(worst);
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--json") == 0) return print_envelopes(argc, argv);
  if (argc != 3) {
    fprintf(stderr, "usage: %s CORPUS_DIR MIXED_FOLDER | --json PATH...\n", argv[0]);
    return 2;
  }
  test_files(argv[1]);
  test_mixed_folder(argv[2]);
  test_empty_npz(argv[2]);
  test_arguments();
  return finish("all check C99 checks passed");
}
