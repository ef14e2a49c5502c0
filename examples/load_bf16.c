/* SPDX-License-Identifier: Apache-2.0 */
/* load_bf16: load a BF16 safetensors checkpoint into float arrays, the way a small C
 * inference engine loads its weights.
 *
 * The engine knows its architecture: a table of the weights it needs, with their shapes.
 * It opens the checkpoint (which stguard validates completely first), looks each weight
 * up by name, checks dtype and shape against the table, and decodes the BF16 bytes
 * into its own float buffer. Nothing from the file is trusted before validation, and a
 * file that does not match the model is refused with a message, not read out of bounds.
 *
 * Build:  cc -std=c99 load_bf16.c $(pkg-config --cflags --libs stguard)
 * Usage:  load_bf16 MODEL.safetensors */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"

#define MAX_DIMS 2

/* One weight of the model: its name in the checkpoint, its shape, and where it lands. */
typedef struct weight {
  const char* name;
  size_t ndim;
  uint64_t shape[MAX_DIMS];
  float* values; /* malloc'ed by load_weight, owned by the model */
} weight;

/* A toy transformer layer: embeddings, one attention projection, a norm. */
typedef struct model {
  weight tok_embeddings;
  weight wq;
  weight norm;
} model;

static void print_error(const char* what, const stguard_error* err) {
  fprintf(stderr, "%s: %s at byte %llu: %s", what, err->code_name,
          (unsigned long long)err->offset, err->message);
  if (err->tensor_len > 0) fprintf(stderr, " (tensor '%.*s')", (int)err->tensor_len, err->tensor);
  fprintf(stderr, "\n");
}

/* load_weight finds w->name, checks it against the table and decodes it to floats.
 * Returns 0 on success. */
static int load_weight(const stguard_checkpoint* ckpt, weight* w) {
  const stguard_tensor* tensor = stguard_checkpoint_find_cstr(ckpt, w->name);
  stguard_error err;
  size_t d;
  if (tensor == NULL) {
    fprintf(stderr, "missing weight %s\n", w->name);
    return 1;
  }
  if (tensor->dtype != STGUARD_DTYPE_BF16) {
    fprintf(stderr, "%s: expected BF16, found %s\n", w->name, stguard_dtype_name(tensor->dtype));
    return 1;
  }
  if (tensor->ndim != w->ndim) {
    fprintf(stderr, "%s: expected %u dimensions, found %u\n", w->name, (unsigned)w->ndim,
            (unsigned)tensor->ndim);
    return 1;
  }
  for (d = 0; d < w->ndim; ++d) {
    if (tensor->shape[d] != w->shape[d]) {
      fprintf(stderr, "%s: dimension %u is %llu, expected %llu\n", w->name, (unsigned)d,
              (unsigned long long)tensor->shape[d], (unsigned long long)w->shape[d]);
      return 1;
    }
  }
  /* The shape matched the table, so num_elements is small and known; a real engine
   * would also bound it before malloc. */
  w->values = malloc((size_t)tensor->num_elements * sizeof(float));
  if (w->values == NULL) {
    fprintf(stderr, "%s: out of memory\n", w->name);
    return 1;
  }
  if (stguard_tensor_to_f32(tensor, w->values, (size_t)tensor->num_elements, &err) != STGUARD_OK) {
    print_error(w->name, &err);
    return 1;
  }
  return 0;
}

static void print_weight(const weight* w) {
  uint64_t count = 1;
  size_t d;
  uint64_t i;
  printf("%s BF16 [", w->name);
  for (d = 0; d < w->ndim; ++d) {
    printf(d == 0 ? "%llu" : ", %llu", (unsigned long long)w->shape[d]);
    count *= w->shape[d];
  }
  printf("] ->");
  for (i = 0; i < count && i < 6; ++i) printf(" %g", w->values[i]);
  printf("%s\n", count > 6 ? " ..." : "");
}

int main(int argc, char** argv) {
  model m = {
      {"tok_embeddings.weight", 2, {4, 3}, NULL},
      {"layers.0.attention.wq.weight", 2, {3, 3}, NULL},
      {"norm.weight", 1, {3, 0}, NULL},
  };
  weight* weights[3];
  stguard_checkpoint* ckpt = NULL;
  stguard_error err;
  int status = 0;
  size_t i;

  weights[0] = &m.tok_embeddings;
  weights[1] = &m.wq;
  weights[2] = &m.norm;
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.safetensors\n", argv[0]);
    return 2;
  }
  if (stguard_checkpoint_open(argv[1], &ckpt, &err) != STGUARD_OK) {
    print_error(argv[1], &err);
    return 1;
  }
  for (i = 0; i < 3 && status == 0; ++i) status = load_weight(ckpt, weights[i]);
  /* The engine has its floats: the checkpoint (and its mapping) can go. */
  stguard_checkpoint_close(ckpt);
  if (status == 0) {
    for (i = 0; i < 3; ++i) print_weight(weights[i]);
    printf("loaded 3 weights\n");
  }
  for (i = 0; i < 3; ++i) free(weights[i]->values);
  return status;
}
