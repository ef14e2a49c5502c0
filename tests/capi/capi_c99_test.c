/* SPDX-License-Identifier: Apache-2.0 */
/* The C API from a strict C99 program (built with -std=c99 -pedantic -Werror): a
 * round trip through the writer and the reader, and the error paths a C caller meets.
 * Usage: capi_c99_test CORPUS_DIR SCRATCH_DIR. Exit status 0 when every check passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c99_support.h"
#include "stguard/stguard.h"

static void test_round_trip(const char* scratch) {
  char path[4096];
  const float weights[6] = {1.0f, -2.0f, 0.5f, 0.25f, 3.0f, -0.125f};
  const uint64_t shape[2] = {2, 3};
  const int32_t ids[3] = {7, -8, 9};
  const uint64_t ids_shape[1] = {3};
  stguard_writer* writer = NULL;
  stguard_checkpoint* ckpt = NULL;
  const stguard_tensor* tensor;
  const stguard_metadata* entry;
  float out[6];
  stguard_error err;
  size_t i;

  join(path, sizeof(path), scratch, "round_trip.safetensors");
  remove(path);
  CHECK(stguard_writer_create(&writer, &err) == STGUARD_OK);
  CHECK(stguard_writer_add_tensor(writer, "w", 1, STGUARD_DTYPE_F32, shape, 2, weights,
                                  sizeof(weights), &err) == STGUARD_OK);
  CHECK(stguard_writer_add_tensor_copy(writer, "ids", 3, STGUARD_DTYPE_I32, ids_shape, 1, ids,
                                       sizeof(ids), &err) == STGUARD_OK);
  CHECK(stguard_writer_add_metadata(writer, "format", 6, "pt", 2, &err) == STGUARD_OK);
  CHECK(stguard_writer_num_tensors(writer) == 2);
  CHECK(stguard_writer_write_file(writer, path, &err) == STGUARD_OK);
  stguard_writer_free(writer);

  CHECK(stguard_checkpoint_open(path, &ckpt, &err) == STGUARD_OK);
  CHECK(stguard_checkpoint_num_tensors(ckpt) == 2);
  tensor = stguard_checkpoint_find_cstr(ckpt, "w");
  CHECK(tensor != NULL);
  if (tensor != NULL) {
    CHECK(tensor->dtype == STGUARD_DTYPE_F32);
    CHECK(tensor->ndim == 2 && tensor->shape[0] == 2 && tensor->shape[1] == 3);
    CHECK(tensor->num_elements == 6 && tensor->byte_len == 24);
    CHECK(tensor->is_aligned);
    CHECK(memcmp(tensor->data, weights, sizeof(weights)) == 0);
    CHECK(stguard_tensor_to_f32(tensor, out, 6, &err) == STGUARD_OK);
    for (i = 0; i < 6; ++i) CHECK(out[i] == weights[i]);
  }
  tensor = stguard_checkpoint_find(ckpt, "ids", 3);
  CHECK(tensor != NULL);
  if (tensor != NULL) {
    CHECK(stguard_tensor_to_f32(tensor, out, 6, &err) == STGUARD_OK);
    CHECK(out[0] == 7.0f && out[1] == -8.0f && out[2] == 9.0f);
    /* Canonical order: F32 before I32 (descending dtype), so "ids" is second. */
    CHECK(stguard_checkpoint_tensor(ckpt, 1) == tensor);
  }
  CHECK(stguard_checkpoint_num_metadata(ckpt) == 1);
  entry = stguard_checkpoint_metadata(ckpt, 0);
  CHECK(entry != NULL && entry->key_len == 6 && memcmp(entry->key, "format", 6) == 0);
  CHECK(entry != NULL && entry->value_len == 2 && memcmp(entry->value, "pt", 2) == 0);
  stguard_checkpoint_close(ckpt);
  remove(path);
}

static void test_open_errors(const char* corpus, const char* scratch) {
  char path[4096];
  stguard_checkpoint* ckpt = NULL;
  stguard_error err;

  join(path, sizeof(path), scratch, "no_such_file.safetensors");
  CHECK(stguard_checkpoint_open(path, &ckpt, &err) == STGUARD_IO_ERROR);
  CHECK(ckpt == NULL);
  CHECK(err.code == STGUARD_IO_ERROR && strcmp(err.code_name, "IoError") == 0);
  CHECK(stguard_checkpoint_open(scratch, &ckpt, &err) == STGUARD_NOT_A_REGULAR_FILE);
  CHECK(stguard_checkpoint_open(NULL, &ckpt, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_checkpoint_open(path, NULL, NULL) == STGUARD_INVALID_ARGUMENT);

  join(path, sizeof(path), corpus, "invalid/DuplicateKey__tensor_twice.safetensors");
  CHECK(stguard_checkpoint_open(path, &ckpt, &err) == STGUARD_DUPLICATE_KEY);
  CHECK(ckpt == NULL);
  CHECK(strcmp(err.code_name, "DuplicateKey") == 0);
  CHECK(err.offset > 8);
  CHECK(strlen(err.message) > 0);
  join(path, sizeof(path), corpus, "invalid/HeaderTooSmall__seven_bytes.safetensors");
  CHECK(stguard_checkpoint_open(path, &ckpt, NULL) == STGUARD_HEADER_TOO_SMALL);

  {
    /* The documented idiom: zero-initialised options are the defaults. */
    stguard_options options = {0};
    join(path, sizeof(path), corpus, "sample.safetensors");
    CHECK(stguard_checkpoint_open_with(path, &options, &ckpt, &err) == STGUARD_OK);
    stguard_checkpoint_close(ckpt);
    options.max_header_len = 64;
    CHECK(stguard_checkpoint_open_with(path, &options, &ckpt, &err) == STGUARD_HEADER_TOO_LARGE);
    CHECK(ckpt == NULL);
  }
  CHECK(stguard_checkpoint_from_buffer(NULL, 0, &ckpt, &err) == STGUARD_HEADER_TOO_SMALL);
  CHECK(stguard_checkpoint_from_buffer(NULL, 9, &ckpt, &err) == STGUARD_INVALID_ARGUMENT);
  stguard_checkpoint_close(NULL);
}

static void test_lookups_and_conversion(const char* corpus) {
  char path[4096];
  stguard_checkpoint* ckpt = NULL;
  const stguard_tensor* tensor;
  float out[32];
  stguard_error err;

  join(path, sizeof(path), corpus, "sample.safetensors");
  CHECK(stguard_checkpoint_open(path, &ckpt, &err) == STGUARD_OK);
  CHECK(stguard_checkpoint_num_tensors(ckpt) == 7);
  CHECK(stguard_checkpoint_find_cstr(ckpt, "no.such.tensor") == NULL);
  CHECK(stguard_checkpoint_find(ckpt, "model.norm.weight", 5) == NULL);
  CHECK(stguard_checkpoint_tensor(ckpt, 7) == NULL);
  CHECK(stguard_checkpoint_find_metadata(ckpt, "nope", 4) == NULL);
  tensor = stguard_checkpoint_find_cstr(ckpt, "model.embed_tokens.weight");
  CHECK(tensor != NULL);
  if (tensor != NULL) {
    CHECK(tensor->dtype == STGUARD_DTYPE_BF16 && tensor->num_elements == 32);
    CHECK(stguard_tensor_to_f32(tensor, out, 31, &err) == STGUARD_INVALID_ARGUMENT);
    CHECK(err.tensor_len == 25 && memcmp(err.tensor, "model.embed_tokens.weight", 25) == 0);
    CHECK(strstr(err.message, "too small") != NULL);
    CHECK(stguard_tensor_to_f32(tensor, out, 32, &err) == STGUARD_OK);
  }
  CHECK(stguard_tensor_to_f32(NULL, out, 32, &err) == STGUARD_INVALID_ARGUMENT);
  stguard_checkpoint_close(ckpt);

  CHECK(strcmp(stguard_dtype_name(STGUARD_DTYPE_F8_E4M3FNUZ), "F8_E4M3FNUZ") == 0);
  CHECK(stguard_dtype_bits(STGUARD_DTYPE_F6_E2M3) == 6);
  CHECK(stguard_dtype_name(STGUARD_NUM_DTYPES) == NULL);
  CHECK(strcmp(stguard_code_name(STGUARD_OUT_OF_MEMORY), "OutOfMemory") == 0);
}

static void test_writer_refusals(const char* scratch) {
  char path[4096];
  const uint8_t byte = 1;
  const uint64_t one[1] = {1};
  const uint64_t two[1] = {2};
  stguard_writer* writer = NULL;
  stguard_error err;

  join(path, sizeof(path), scratch, "refused.safetensors");
  remove(path);

  /* Duplicate names: found when writing; nothing written. */
  CHECK(stguard_writer_create(&writer, NULL) == STGUARD_OK);
  CHECK(stguard_writer_add_tensor(writer, "x", 1, STGUARD_DTYPE_U8, one, 1, &byte, 1, NULL) ==
        STGUARD_OK);
  CHECK(stguard_writer_add_tensor(writer, "x", 1, STGUARD_DTYPE_U8, one, 1, &byte, 1, NULL) ==
        STGUARD_OK);
  CHECK(stguard_writer_write_file(writer, path, &err) == STGUARD_DUPLICATE_NAME);
  CHECK(!file_exists(path));
  stguard_writer_free(writer);

  /* The reserved name: refused at once, and the refusal sticks. */
  CHECK(stguard_writer_create(&writer, NULL) == STGUARD_OK);
  CHECK(stguard_writer_add_tensor(writer, "__metadata__", 12, STGUARD_DTYPE_U8, one, 1, &byte,
                                  1, &err) == STGUARD_INVALID_TENSOR_NAME);
  CHECK(stguard_writer_add_tensor(writer, "y", 1, STGUARD_DTYPE_U8, one, 1, &byte, 1, NULL) ==
        STGUARD_OK);
  CHECK(stguard_writer_write_file(writer, path, &err) == STGUARD_INVALID_TENSOR_NAME);
  CHECK(!file_exists(path));
  stguard_writer_free(writer);

  /* Size mismatch: two elements declared, one byte given. */
  CHECK(stguard_writer_create(&writer, NULL) == STGUARD_OK);
  CHECK(stguard_writer_add_tensor(writer, "z", 1, STGUARD_DTYPE_U8, two, 1, &byte, 1, &err) ==
        STGUARD_INVALID_ARGUMENT);
  CHECK(err.tensor_len == 1 && err.tensor[0] == 'z');
  CHECK(stguard_writer_write_file(writer, path, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(!file_exists(path));
  stguard_writer_free(writer);

  /* NULL arguments. */
  CHECK(stguard_writer_create(NULL, &err) == STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_writer_add_tensor(NULL, "x", 1, STGUARD_DTYPE_U8, one, 1, &byte, 1, &err) ==
        STGUARD_INVALID_ARGUMENT);
  CHECK(stguard_writer_write_file(NULL, path, &err) == STGUARD_INVALID_ARGUMENT);
  stguard_writer_free(NULL);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s CORPUS_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  test_round_trip(argv[2]);
  test_open_errors(argv[1], argv[2]);
  test_lookups_and_conversion(argv[1]);
  test_writer_refusals(argv[2]);
  return finish("all C99 checks passed");
}
