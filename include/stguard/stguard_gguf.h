/* SPDX-License-Identifier: Apache-2.0 */
/* stguard/stguard_gguf.h: the C99 API of the strict GGUF reader (stguard/gguf.h).
 *
 * A stguard_gguf is an opened, validated GGUF file: its version, alignment, metadata
 * (typed values, views of the file) and tensors (ggml type, ne, shape, bytes). Errors are
 * stguard_error values, as everywhere in stguard.h. Everything a stguard_gguf returns
 * lives until stguard_gguf_close. Example:
 *
 *   stguard_gguf* g; stguard_error err;
 *   if (stguard_gguf_open("model.gguf", &g, &err) != STGUARD_OK) { puts(err.message); }
 *   for (size_t i = 0; i < stguard_gguf_num_tensors(g); ++i) {
 *     const stguard_gguf_tensor* t = stguard_gguf_tensor_at(g, i);
 *     printf("%.*s %s\n", (int)t->name_len, t->name, t->type_name);
 *   }
 *   stguard_gguf_close(g);
 */
#ifndef STGUARD_STGUARD_GGUF_H_
#define STGUARD_STGUARD_GGUF_H_

#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stguard_gguf stguard_gguf;

/* stguard_gguf_value_type is a metadata value's type as stored (gguf_type). */
typedef enum stguard_gguf_value_type {
  STGUARD_GGUF_U8 = 0, STGUARD_GGUF_I8 = 1, STGUARD_GGUF_U16 = 2, STGUARD_GGUF_I16 = 3,
  STGUARD_GGUF_U32 = 4, STGUARD_GGUF_I32 = 5, STGUARD_GGUF_F32 = 6, STGUARD_GGUF_BOOL = 7,
  STGUARD_GGUF_STRING = 8, STGUARD_GGUF_ARRAY = 9, STGUARD_GGUF_U64 = 10,
  STGUARD_GGUF_I64 = 11, STGUARD_GGUF_F64 = 12
} stguard_gguf_value_type;

/* stguard_gguf_metadata is one key/value pair, in file order. `data` points into the
 * file: a scalar's little-endian bytes, a string's bytes (not NUL-terminated, and holding
 * no NUL: a file with one is refused, GgufNulInString), or an array's elements
 * as stored (for strings: each one's u64 length, then its bytes; walk them with
 * stguard_gguf_next_string). */
typedef struct stguard_gguf_metadata {
  const char* key;   /* not NUL-terminated: key_len bytes */
  size_t key_len;
  stguard_gguf_value_type type;
  stguard_gguf_value_type element_type; /* arrays only */
  uint64_t count;                       /* arrays: elements; scalars: 1 */
  const void* data;
  size_t data_len;
} stguard_gguf_metadata;

/* stguard_gguf_tensor describes one tensor, in file order. */
typedef struct stguard_gguf_tensor {
  const char* name;       /* not NUL-terminated: name_len bytes */
  size_t name_len;
  uint32_t type;          /* the ggml type id */
  const char* type_name;  /* ggml's name ("f32", "q4_K"), NUL-terminated, static */
  uint32_t n_dims;        /* 1..4 */
  uint64_t ne[4];         /* ggml order, innermost first; 1 past n_dims */
  uint64_t shape[4];      /* ne[0..n_dims) reversed: outermost first */
  uint64_t file_offset;   /* absolute offset of the tensor's bytes */
  uint64_t byte_len;
  const void* data;       /* the tensor's bytes in the file (NULL when byte_len is 0) */
} stguard_gguf_tensor;

/* stguard_is_gguf returns 1 when `prefix` (a file's first bytes) begins with "GGUF". */
STGUARD_API int stguard_is_gguf(const void* prefix, size_t len);

/* stguard_gguf_open validates the file at `path` and, on success, stores a handle in
 * *out and returns STGUARD_OK; otherwise it returns the error's code and fills *err (when
 * not NULL). stguard_gguf_from_buffer does the same for bytes the caller keeps alive
 * until stguard_gguf_close. */
STGUARD_API stguard_code stguard_gguf_open(const char* path, stguard_gguf** out,
                                           stguard_error* err);
STGUARD_API stguard_code stguard_gguf_from_buffer(const void* data, size_t len,
                                                  stguard_gguf** out, stguard_error* err);
/* stguard_gguf_close frees the handle; NULL is a no-op. */
STGUARD_API void stguard_gguf_close(stguard_gguf* gguf);

STGUARD_API uint32_t stguard_gguf_version(const stguard_gguf* gguf);
STGUARD_API uint32_t stguard_gguf_alignment(const stguard_gguf* gguf);
/* stguard_gguf_data_offset is the absolute offset where the data section begins. */
STGUARD_API uint64_t stguard_gguf_data_offset(const stguard_gguf* gguf);

STGUARD_API size_t stguard_gguf_num_metadata(const stguard_gguf* gguf);
/* stguard_gguf_metadata_at returns entry `index` (file order), or NULL past the end. */
STGUARD_API const stguard_gguf_metadata* stguard_gguf_metadata_at(const stguard_gguf* gguf,
                                                                  size_t index);
/* stguard_gguf_find_metadata returns the entry of `key` (key_len bytes), or NULL. */
STGUARD_API const stguard_gguf_metadata* stguard_gguf_find_metadata(
    const stguard_gguf* gguf, const char* key, size_t key_len);
/* stguard_gguf_next_string walks a string array: start with *cursor = 0; each call that
 * returns 1 stores the next element in *text / *text_len (not NUL-terminated); 0 at the
 * end or for anything but a string array. */
STGUARD_API int stguard_gguf_next_string(const stguard_gguf_metadata* entry, size_t* cursor,
                                         const char** text, size_t* text_len);

STGUARD_API size_t stguard_gguf_num_tensors(const stguard_gguf* gguf);
/* stguard_gguf_tensor_at returns tensor `index` (file order), or NULL past the end. */
STGUARD_API const stguard_gguf_tensor* stguard_gguf_tensor_at(const stguard_gguf* gguf,
                                                              size_t index);
/* stguard_gguf_find_tensor returns the tensor named `name` (name_len bytes), or NULL. */
STGUARD_API const stguard_gguf_tensor* stguard_gguf_find_tensor(const stguard_gguf* gguf,
                                                                const char* name,
                                                                size_t name_len);

/* stguard_gguf_dequantize decodes tensor `index` (file order) to F32 into the caller's
 * `out`, which holds `out_len` floats: exactly the tensor's element count (the product of
 * its ne). Block-quantized types give, bit for bit, what ggml's dequantize_row_* gives;
 * F32, F16 and BF16 are exact and F64 is rounded to nearest even. Returns STGUARD_OK, or
 * fills *err (when not NULL) and returns: STGUARD_GGUF_NOT_DEQUANTIZABLE naming the tensor
 * and its type (integer tensors, q8_1); STGUARD_INVALID_ARGUMENT for a NULL argument, an
 * index past the end or an out_len that is not the element count. `out` is untouched on
 * error. The bytes are read through the file's mapping (see stguard/gguf.h, FILES THAT
 * CHANGE). */
STGUARD_API stguard_code stguard_gguf_dequantize(const stguard_gguf* gguf, size_t index,
                                                 float* out, size_t out_len,
                                                 stguard_error* err);

#ifdef __cplusplus
}
#endif

#endif /* STGUARD_STGUARD_GGUF_H_ */
