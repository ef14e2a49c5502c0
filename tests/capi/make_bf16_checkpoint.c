/* SPDX-License-Identifier: Apache-2.0 */
/* Writes, with the C writer, the BF16 checkpoint that examples/load_bf16.c loads in the
 * tests: tok_embeddings.weight [4, 3], layers.0.attention.wq.weight [3, 3] (identity)
 * and norm.weight [3], all BF16, plus one metadata entry.
 * Usage: make_bf16_checkpoint OUT.safetensors */
#include <stdio.h>
#include <string.h>

#include "stguard/stguard.h"

/* to_bf16 keeps the upper 16 bits of an F32: exact for the values used here. */
static uint16_t to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return (uint16_t)(bits >> 16);
}

/* add adds `count` floats as BF16 (copied: the buffer is on this function's stack). */
static stguard_code add(stguard_writer* writer, const char* name, const uint64_t* shape,
                        size_t ndim, const float* values, size_t count, stguard_error* err) {
  uint16_t bf16[16];
  unsigned char bytes[32];
  size_t i;
  for (i = 0; i < count; ++i) {
    bf16[i] = to_bf16(values[i]);
    bytes[2 * i] = (unsigned char)(bf16[i] & 0xFF); /* little-endian whatever the host */
    bytes[2 * i + 1] = (unsigned char)(bf16[i] >> 8);
  }
  return stguard_writer_add_tensor_copy(writer, name, strlen(name), STGUARD_DTYPE_BF16, shape,
                                        ndim, bytes, 2 * count, err);
}

int main(int argc, char** argv) {
  const float embeddings[12] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f,
                                2.0f,  2.5f,  3.0f, 3.5f, 4.0f, 4.5f};
  const float wq[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const float norm[3] = {1.0f, 0.25f, -0.125f};
  const uint64_t embeddings_shape[2] = {4, 3};
  const uint64_t wq_shape[2] = {3, 3};
  const uint64_t norm_shape[1] = {3};
  stguard_writer* writer = NULL;
  stguard_error err;

  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.safetensors\n", argv[0]);
    return 2;
  }
  if (stguard_writer_create(&writer, &err) != STGUARD_OK ||
      add(writer, "tok_embeddings.weight", embeddings_shape, 2, embeddings, 12, &err) != STGUARD_OK ||
      add(writer, "layers.0.attention.wq.weight", wq_shape, 2, wq, 9, &err) != STGUARD_OK ||
      add(writer, "norm.weight", norm_shape, 1, norm, 3, &err) != STGUARD_OK ||
      stguard_writer_add_metadata(writer, "format", 6, "pt", 2, &err) != STGUARD_OK ||
      stguard_writer_write_file(writer, argv[1], &err) != STGUARD_OK) {
    fprintf(stderr, "%s: %s\n", err.code_name, err.message);
    stguard_writer_free(writer);
    return 1;
  }
  stguard_writer_free(writer);
  return 0;
}
