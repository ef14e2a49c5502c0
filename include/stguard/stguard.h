/* SPDX-License-Identifier: Apache-2.0 */
/* stguard/stguard.h: the C API (C99, also valid C++).
 *
 * A thin layer over the C++ library (stguard/reader.h, stguard/writer.h,
 * stguard/convert.h) for C programs and other languages' foreign-function interfaces.
 * Everything is named stguard_ / STGUARD_; every exported function carries STGUARD_API.
 *
 * ERRORS. A function that can fail returns a stguard_code: STGUARD_OK (zero) on success,
 * otherwise the code of the failure, and, when its `err` argument is not NULL, fills
 * *err with the code, the code's name, the absolute byte offset, a message and the
 * tensor concerned. `err` may always be NULL. Functions that look something up return a
 * pointer, NULL when there is nothing to return. No C++ exception ever leaves this API:
 * allocation failure is reported as STGUARD_OUT_OF_MEMORY, and filling *err allocates
 * nothing, so it works when memory is exhausted.
 *
 * OWNERSHIP. The caller owns every handle it creates and frees it with the matching
 * function (stguard_checkpoint_close, stguard_writer_free; both accept NULL). Every
 * pointer the library returns points into a handle and says how long it lives; none is
 * to be freed by the caller. Strings from files (tensor names, metadata) are UTF-8 given
 * as pointer + length: they are not NUL-terminated and may contain NUL bytes. Print one
 * with printf("%.*s", (int)len, ptr).
 *
 * THREADS. A checkpoint handle is immutable after it is opened: any number of threads
 * may read it at once. A writer handle must be used by one thread at a time.
 *
 * PLATFORM. POSIX (Linux first; macOS and the BSDs, where mmap behaves the same).
 *
 * A minimal reader:
 *
 *   stguard_error err;
 *   stguard_checkpoint* ckpt = NULL;
 *   if (stguard_checkpoint_open("model.safetensors", &ckpt, &err) != STGUARD_OK) {
 *     fprintf(stderr, "%s at byte %llu: %s\n", err.code_name,
 *             (unsigned long long)err.offset, err.message);
 *     return 1;
 *   }
 *   const stguard_tensor* w = stguard_checkpoint_find_cstr(ckpt, "norm.weight");
 *   float* values = w ? malloc(w->num_elements * sizeof(float)) : NULL;
 *   if (values && stguard_tensor_to_f32(w, values, w->num_elements, &err) == STGUARD_OK) {
 *     ... use values ...
 *   }
 *   free(values);
 *   stguard_checkpoint_close(ckpt);
 */
#ifndef STGUARD_STGUARD_H_
#define STGUARD_STGUARD_H_

#include <stddef.h>
#include <stdint.h>

#include "stguard/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Status codes                                                                          */
/* ------------------------------------------------------------------------------------ */

/* stguard_code mirrors stguard::ErrorCode value for value (src/capi checks this at
 * compile time); stguard/error_codes.def, the one list of codes, says what each one means
 * and names its STGUARD_ twin here. A new code is appended just before STGUARD_NUM_CODES. */
typedef enum stguard_code {
  STGUARD_OK = 0,
  /* The length prefix and the file itself. */
  STGUARD_IO_ERROR,
  STGUARD_NOT_A_REGULAR_FILE,
  STGUARD_HEADER_TOO_SMALL,
  STGUARD_HEADER_TOO_LARGE,
  STGUARD_INVALID_HEADER_LENGTH,
  /* JSON text. */
  STGUARD_INVALID_UTF8,
  STGUARD_CONTROL_CHARACTER,
  STGUARD_INVALID_ESCAPE,
  STGUARD_INVALID_UNICODE_ESCAPE,
  STGUARD_LONE_SURROGATE,
  STGUARD_INVALID_NUMBER,
  STGUARD_INVALID_LITERAL,
  STGUARD_UNEXPECTED_TOKEN,
  STGUARD_UNEXPECTED_END,
  STGUARD_TRAILING_CONTENT,
  STGUARD_DEPTH_EXCEEDED,
  /* Header schema. */
  STGUARD_HEADER_NOT_OBJECT,
  STGUARD_DUPLICATE_KEY,
  STGUARD_METADATA_NOT_OBJECT,
  STGUARD_METADATA_VALUE_NOT_STRING,
  STGUARD_TENSOR_NOT_OBJECT,
  STGUARD_UNKNOWN_FIELD,
  STGUARD_MISSING_FIELD,
  STGUARD_INVALID_DTYPE,
  STGUARD_INVALID_SHAPE,
  STGUARD_INVALID_DATA_OFFSETS,
  /* Sizes. */
  STGUARD_VALIDATION_OVERFLOW,
  STGUARD_MISALIGNED_SLICE,
  STGUARD_TENSOR_INVALID_INFO,
  /* Tiling. */
  STGUARD_INVALID_OFFSET,
  STGUARD_METADATA_INCOMPLETE_BUFFER,
  /* Writing; STGUARD_INVALID_ARGUMENT is also what this API returns for a NULL
   * argument, an out-of-range dtype or a buffer that is too small. */
  STGUARD_INVALID_TENSOR_NAME,
  STGUARD_DUPLICATE_NAME,
  STGUARD_INVALID_ARGUMENT,
  /* Checkpoint directories and sharded indexes (not reachable through this API yet). */
  STGUARD_INVALID_INDEX,
  STGUARD_UNSAFE_SHARD_NAME,
  STGUARD_MISSING_SHARD,
  STGUARD_SHARD_MISMATCH,
  STGUARD_TENSOR_IN_TWO_SHARDS,
  STGUARD_INVALID_CONFIG,
  /* PyTorch checkpoints (stguard/torch_checkpoint.h): ZIP container, pickle, tensors */
  STGUARD_ZIP_FORMAT,
  STGUARD_ZIP_UNSUPPORTED,
  STGUARD_ZIP_HEADER_MISMATCH,
  STGUARD_ZIP_DUPLICATE_NAME,
  STGUARD_ZIP_LAYOUT,
  STGUARD_ZIP_BAD_NAME,
  STGUARD_ZIP_MISSING_RECORD,
  STGUARD_ZIP_CHECKSUM,
  STGUARD_PICKLE_CORRUPT,
  STGUARD_PICKLE_OPCODE_REFUSED,
  STGUARD_PICKLE_GLOBAL_REFUSED,
  STGUARD_PICKLE_BAD_ARGUMENTS,
  STGUARD_PICKLE_MEMO_CONFLICT,
  STGUARD_NOT_A_TORCH_CHECKPOINT,
  STGUARD_RAW_PICKLE,
  STGUARD_LEGACY_HEADER,
  STGUARD_STORAGE_MISMATCH,
  STGUARD_TENSOR_OUT_OF_BOUNDS,
  STGUARD_NOT_A_STATE_DICT,
  /* Resources. */
  STGUARD_OUT_OF_MEMORY,
  /* Optional checks: with stguard_options.require_aligned_data, a tensor whose data does
   * not begin at a file offset that is a multiple of its element size. */
  STGUARD_MISALIGNED_DATA,
  /* A torch checkpoint whose (overlapping) views ask for more output than its size allows
   * (stguard/torch_checkpoint.h, TorchOptions::max_output_ratio). */
  STGUARD_OUTPUT_TOO_LARGE,
  /* PyTorch files torch.load would read differently from stguard: the file also passes
   * Python tarfile's header test (torch would unpickle a tar member), a pickle FRAME
   * reaches past its STOP, a memo key is not the next one (CPython sizes its memo by it). */
  STGUARD_TAR_AMBIGUOUS,
  STGUARD_PICKLE_FRAME_AMBIGUOUS,
  STGUARD_PICKLE_MEMO_KEY,
  /* A torch ZIP archive with a record torch.save never writes (it could send torch.load
   * down another path), or a version record torch cannot read. */
  STGUARD_ZIP_UNEXPECTED_RECORD,
  STGUARD_ZIP_UNSUPPORTED_VERSION,
  /* A folder walk met more files, or deeper nesting, than its bounds
   * (stguard/folder_scan.h). */
  STGUARD_FOLDER_TOO_LARGE,
  /* GGUF files (stguard/gguf.h): see the C++ ErrorCode of the same name. */
  STGUARD_GGUF_BAD_MAGIC,
  STGUARD_GGUF_UNSUPPORTED_VERSION,
  STGUARD_GGUF_BYTE_SWAPPED,
  STGUARD_GGUF_TRUNCATED,
  STGUARD_GGUF_INVALID_KEY,
  STGUARD_GGUF_DUPLICATE_KEY,
  STGUARD_GGUF_INVALID_VALUE_TYPE,
  STGUARD_GGUF_INVALID_BOOL,
  STGUARD_GGUF_INVALID_ALIGNMENT,
  STGUARD_GGUF_INVALID_TENSOR_NAME,
  STGUARD_GGUF_DUPLICATE_TENSOR,
  STGUARD_GGUF_INVALID_DIMS,
  STGUARD_GGUF_UNKNOWN_TYPE,
  STGUARD_GGUF_BLOCK_MISMATCH,
  STGUARD_GGUF_TENSOR_OFFSET,
  STGUARD_GGUF_TENSOR_OUT_OF_FILE,
  STGUARD_GGUF_NON_ZERO_PADDING,
  STGUARD_GGUF_TRAILING_BYTES,
  STGUARD_GGUF_SPLIT_MISMATCH,
  /* npy: NumPy .npy files that break the strict .npy rules (see SECURITY.md). */
  STGUARD_NPY_PREAMBLE,
  STGUARD_NPY_HEADER_SYNTAX,
  STGUARD_NPY_HEADER_KEYS,
  STGUARD_NPY_DESCR,
  STGUARD_NPY_OBJECT_ARRAY,
  STGUARD_NPY_DATA_LENGTH,
  STGUARD_GGUF_NOT_DEQUANTIZABLE,
  STGUARD_DEFLATE_DATA,
  STGUARD_NPZ_MEMBER_NAME,
  STGUARD_LINT_ERROR,
  /* A file of another format (PyTorch, GGUF, npy) opened as safetensors. */
  STGUARD_NOT_SAFETENSORS,
  /* A folder given as a checkpoint has no .safetensors file and no index. */
  STGUARD_NO_SAFETENSORS_IN_FOLDER,
  /* A GGUF string holds a NUL byte; a GGUF file ends inside its last tensor's padding. */
  STGUARD_GGUF_NUL_IN_STRING,
  STGUARD_GGUF_MISSING_PADDING,
  STGUARD_NOT_CANONICAL,

  STGUARD_NUM_CODES /* not a code: the number of codes above */
} stguard_code;

/* stguard_code_name returns the code's name as the C++ library and the command line
 * print it ("DuplicateKey", "Ok"), or "Unknown" for a value outside the enum. The string
 * is static: never freed, valid for the life of the program. */
STGUARD_API const char* stguard_code_name(stguard_code code);

/* Sizes of the text fields of stguard_error, terminating NUL included. */
#define STGUARD_ERROR_MESSAGE_CAP 512
#define STGUARD_ERROR_TENSOR_CAP 256

/* stguard_error describes one failure. It is a plain value the caller allocates
 * (usually on the stack); it holds no pointer that needs freeing. A function given a
 * non-NULL `err` sets every field on failure and leaves it untouched on success. */
typedef struct stguard_error {
  stguard_code code;
  /* Static name of `code` (as stguard_code_name returns); never freed. */
  const char* code_name;
  /* Absolute byte offset in the file or buffer where the problem was found; 0 when the
   * problem is not in the input (a NULL argument, a writer refusal). */
  uint64_t offset;
  /* NUL-terminated English sentence with any detail (a key, a size, a path) after ": ".
   * Control characters of the detail are shown as \xNN, so it is safe to print. */
  char message[STGUARD_ERROR_MESSAGE_CAP];
  /* The tensor name or metadata key concerned, raw bytes followed by a NUL; empty when
   * none. tensor_len counts the bytes stored (the name may itself contain NUL bytes). */
  char tensor[STGUARD_ERROR_TENSOR_CAP];
  size_t tensor_len;
  /* Nonzero when message or tensor was cut (at a UTF-8 character boundary) to fit. */
  int truncated;
} stguard_error;

/* ------------------------------------------------------------------------------------ */
/* Dtypes                                                                                */
/* ------------------------------------------------------------------------------------ */

/* stguard_dtype mirrors stguard::Dtype value for value: the reference implementation's
 * enum order (stguard/dtype.h). */
typedef enum stguard_dtype {
  STGUARD_DTYPE_BOOL = 0,
  STGUARD_DTYPE_F4,
  STGUARD_DTYPE_F6_E2M3,
  STGUARD_DTYPE_F6_E3M2,
  STGUARD_DTYPE_U8,
  STGUARD_DTYPE_I8,
  STGUARD_DTYPE_F8_E5M2,
  STGUARD_DTYPE_F8_E4M3,
  STGUARD_DTYPE_F8_E8M0,
  STGUARD_DTYPE_F8_E4M3FNUZ,
  STGUARD_DTYPE_F8_E5M2FNUZ,
  STGUARD_DTYPE_I16,
  STGUARD_DTYPE_U16,
  STGUARD_DTYPE_F16,
  STGUARD_DTYPE_BF16,
  STGUARD_DTYPE_I32,
  STGUARD_DTYPE_U32,
  STGUARD_DTYPE_F32,
  STGUARD_DTYPE_C64,
  STGUARD_DTYPE_F64,
  STGUARD_DTYPE_I64,
  STGUARD_DTYPE_U64,

  STGUARD_NUM_DTYPES /* not a dtype: the number of dtypes above */
} stguard_dtype;

/* stguard_dtype_name returns the name used in headers ("BF16", "F8_E4M3FNUZ"), or NULL
 * for a value outside the enum. The string is static: never freed. */
STGUARD_API const char* stguard_dtype_name(stguard_dtype dtype);

/* stguard_dtype_bits returns the size of one element in bits (16 for BF16, 4 for F4,
 * 6 for F6_*, 8 for BOOL), or 0 for a value outside the enum. */
STGUARD_API unsigned stguard_dtype_bits(stguard_dtype dtype);

/* stguard_dtype_from_name looks up a header name (case-sensitive, `len` bytes, not
 * NUL-terminated). Returns STGUARD_OK and sets *out_dtype, or STGUARD_INVALID_DTYPE for
 * an unknown name, or STGUARD_INVALID_ARGUMENT when out_dtype is NULL or name is NULL
 * with len > 0. */
STGUARD_API stguard_code stguard_dtype_from_name(const char* name, size_t len,
                                                 stguard_dtype* out_dtype,
                                                 stguard_error* err);

/* ------------------------------------------------------------------------------------ */
/* Reading                                                                               */
/* ------------------------------------------------------------------------------------ */

/* stguard_checkpoint is a validated safetensors file or buffer (opaque). */
typedef struct stguard_checkpoint stguard_checkpoint;

/* stguard_tensor describes one tensor of a checkpoint. Every pointer in it points into
 * the checkpoint and is valid until stguard_checkpoint_close. */
typedef struct stguard_tensor {
  const char* name; /* UTF-8, name_len bytes, NOT NUL-terminated */
  size_t name_len;
  stguard_dtype dtype;
  size_t ndim;            /* 0 for a scalar */
  const uint64_t* shape;  /* ndim dimensions, outermost first (do not read when ndim is 0) */
  uint64_t num_elements;  /* product of shape; 1 for a scalar */
  /* The tensor's bytes in the file (little-endian, row-major), byte_len of them; read
   * only. The bytes are NOT converted: use stguard_tensor_to_f32 or read them with
   * memcpy, unless is_aligned says a direct cast is safe. */
  const void* data;
  size_t byte_len;
  uint64_t file_offset; /* absolute offset of data in the file: 8 + N + data_offsets[0] */
  /* Nonzero when `data` is a multiple of the element size in bytes (8 for F64 and C64,
   * 4 for F32, 2 for BF16; 1 for byte and sub-byte dtypes), so that casting it to a
   * pointer of the element type is defined. Every tensor of a canonical file is aligned
   * (mapped files start on a page; the buffer passed to stguard_checkpoint_from_buffer
   * must be 8-aligned for that); stguard_options.require_aligned_data refuses files
   * where some tensor is not. */
  int is_aligned;
} stguard_tensor;

/* stguard_metadata is one __metadata__ entry; both strings point into the checkpoint and
 * are valid until stguard_checkpoint_close. */
typedef struct stguard_metadata {
  const char* key; /* UTF-8, key_len bytes, NOT NUL-terminated */
  size_t key_len;
  const char* value; /* UTF-8, value_len bytes, NOT NUL-terminated */
  size_t value_len;
} stguard_metadata;

/* stguard_checkpoint_open maps the file at `path` (NUL-terminated) read-only and
 * validates it under every rule of stguard/reader.h. On success returns STGUARD_OK and
 * sets *out_checkpoint to a new handle the caller must close with
 * stguard_checkpoint_close; the file stays mapped until then (validation reads only the
 * header). On failure returns the error's code, sets *out_checkpoint to NULL (when
 * out_checkpoint is not NULL) and fills *err: a missing or unreadable file is
 * STGUARD_IO_ERROR, a directory STGUARD_NOT_A_REGULAR_FILE, a NULL path or
 * out_checkpoint STGUARD_INVALID_ARGUMENT. */
STGUARD_API stguard_code stguard_checkpoint_open(const char* path,
                                                 stguard_checkpoint** out_checkpoint,
                                                 stguard_error* err);

/* stguard_checkpoint_from_buffer validates `len` bytes at `data` in place. Nothing is
 * copied: the buffer must stay valid and unchanged until stguard_checkpoint_close, and
 * every tensor's data pointer points into it. `data` may be NULL only when len is 0
 * (which gives STGUARD_HEADER_TOO_SMALL). Otherwise as stguard_checkpoint_open. */
STGUARD_API stguard_code stguard_checkpoint_from_buffer(const void* data, size_t len,
                                                        stguard_checkpoint** out_checkpoint,
                                                        stguard_error* err);

/* stguard_options tightens the reader's limits. Zero-initialise it (stguard_options o =
 * {0};) and set what you need: a zero field means the default. Fields can only make the
 * reader stricter. Fields may be added at the end in a later version. */
typedef struct stguard_options {
  /* Largest header length N accepted; 0 or anything above 100,000,000 (the format's cap)
   * means the cap. */
  uint64_t max_header_len;
  /* Deepest JSON nesting accepted; 0 means the default, 1024. A safetensors header
   * needs 3. */
  uint32_t max_depth;
  /* Nonzero: refuse (STGUARD_MISALIGNED_DATA) a file in which some tensor's data does not
   * begin at a file offset that is a multiple of its element size. Set it when the
   * engine reads tensor data in place through float*, uint16_t*...: with it, every
   * tensor of a checkpoint opened from a path has is_aligned set. Files from a canonical
   * writer (this one, the reference save_file) always pass. */
  int require_aligned_data;
} stguard_options;

/* stguard_checkpoint_open_with and stguard_checkpoint_from_buffer_with are
 * stguard_checkpoint_open and stguard_checkpoint_from_buffer under `options` (NULL: the
 * defaults). A header over max_header_len is STGUARD_HEADER_TOO_LARGE, nesting over
 * max_depth STGUARD_DEPTH_EXCEEDED. `options` is read during the call only. */
STGUARD_API stguard_code stguard_checkpoint_open_with(const char* path,
                                                      const stguard_options* options,
                                                      stguard_checkpoint** out_checkpoint,
                                                      stguard_error* err);
STGUARD_API stguard_code stguard_checkpoint_from_buffer_with(const void* data, size_t len,
                                                             const stguard_options* options,
                                                             stguard_checkpoint** out_checkpoint,
                                                             stguard_error* err);

/* stguard_checkpoint_close frees the handle and unmaps its file; every pointer obtained
 * from it becomes invalid. NULL is a no-op. */
STGUARD_API void stguard_checkpoint_close(stguard_checkpoint* checkpoint);

/* stguard_checkpoint_num_tensors returns the number of tensors (0 for NULL). */
STGUARD_API size_t stguard_checkpoint_num_tensors(const stguard_checkpoint* checkpoint);

/* stguard_checkpoint_tensor returns tensor `index` (0 <= index < num_tensors) in file
 * order (by data offset), or NULL when checkpoint is NULL or index is out of range. The
 * pointer is owned by the checkpoint and valid until stguard_checkpoint_close. */
STGUARD_API const stguard_tensor* stguard_checkpoint_tensor(
    const stguard_checkpoint* checkpoint, size_t index);

/* stguard_checkpoint_find returns the tensor whose name is exactly the `name_len` bytes
 * at `name` (compared byte for byte, after the header's escapes are undone), or NULL when
 * there is none or checkpoint is NULL (or name is NULL with name_len > 0). O(log n).
 * The pointer is owned by the checkpoint and valid until stguard_checkpoint_close. */
STGUARD_API const stguard_tensor* stguard_checkpoint_find(const stguard_checkpoint* checkpoint,
                                                          const char* name, size_t name_len);

/* stguard_checkpoint_find_cstr is stguard_checkpoint_find for a NUL-terminated name
 * (NULL name gives NULL). */
STGUARD_API const stguard_tensor* stguard_checkpoint_find_cstr(
    const stguard_checkpoint* checkpoint, const char* name);

/* stguard_checkpoint_num_metadata returns the number of __metadata__ entries (0 for
 * NULL). */
STGUARD_API size_t stguard_checkpoint_num_metadata(const stguard_checkpoint* checkpoint);

/* stguard_checkpoint_metadata returns metadata entry `index`, entries being in ascending
 * byte order of their keys, or NULL when checkpoint is NULL or index is out of range.
 * Owned by the checkpoint; valid until stguard_checkpoint_close. */
STGUARD_API const stguard_metadata* stguard_checkpoint_metadata(
    const stguard_checkpoint* checkpoint, size_t index);

/* stguard_checkpoint_find_metadata returns the entry whose key is the `key_len` bytes at
 * `key`, or NULL. Owned by the checkpoint; valid until stguard_checkpoint_close. */
STGUARD_API const stguard_metadata* stguard_checkpoint_find_metadata(
    const stguard_checkpoint* checkpoint, const char* key, size_t key_len);

/* ------------------------------------------------------------------------------------ */
/* Conversion to F32                                                                     */
/* ------------------------------------------------------------------------------------ */

/* stguard_tensor_to_f32 decodes the tensor's num_elements elements into out[0..
 * num_elements), exactly where the source is F16, BF16, F8_* or an integer of up to 24
 * bits, rounded to nearest even otherwise (see stguard/convert.h). `tensor` is one the
 * library returned (its data may be unaligned). Returns STGUARD_INVALID_ARGUMENT, writing
 * nothing, when tensor is NULL, when out_len (a count of floats, not bytes) is below
 * num_elements, when out is NULL and num_elements > 0, or when the dtype has no
 * conversion (F4, F6_E2M3, F6_E3M2, C64). `out` need not be initialised and is never
 * retained. */
STGUARD_API stguard_code stguard_tensor_to_f32(const stguard_tensor* tensor, float* out,
                                               size_t out_len, stguard_error* err);

/* stguard_convert_to_f32 is the same for any little-endian buffer: it decodes
 * src_len / element size elements of `dtype` at `src` into `out`. src_len must be a
 * whole number of elements and out_len (floats) at least that number, else
 * STGUARD_INVALID_ARGUMENT and nothing written. */
STGUARD_API stguard_code stguard_convert_to_f32(stguard_dtype dtype, const void* src,
                                                size_t src_len, float* out, size_t out_len,
                                                stguard_error* err);

/* ------------------------------------------------------------------------------------ */
/* Writing                                                                               */
/* ------------------------------------------------------------------------------------ */

/* stguard_writer collects tensors and metadata and writes them as one canonical file
 * (opaque; see stguard/writer.h for the canonical form and the refusals). */
typedef struct stguard_writer stguard_writer;

/* stguard_writer_create sets *out_writer to a new empty writer, to be freed with
 * stguard_writer_free. Returns STGUARD_OUT_OF_MEMORY (and *out_writer = NULL) when it
 * cannot be allocated, STGUARD_INVALID_ARGUMENT when out_writer is NULL. */
STGUARD_API stguard_code stguard_writer_create(stguard_writer** out_writer, stguard_error* err);

/* stguard_writer_free frees the writer and every copy it made. NULL is a no-op. */
STGUARD_API void stguard_writer_free(stguard_writer* writer);

/* stguard_writer_add_tensor adds a tensor of `dtype` and shape shape[0..ndim) whose
 * bytes are the `byte_len` bytes at `data` (little-endian, row-major; any alignment).
 * The name (`name_len` bytes of UTF-8, not NUL-terminated) and the shape are copied now.
 * The data is NOT copied: it is REFERENCED, and must stay valid and unchanged until the
 * last stguard_writer_write_file call of this writer returns (or until
 * stguard_writer_free). Use stguard_writer_add_tensor_copy when that is inconvenient.
 * `shape` may be NULL when ndim is 0 (a scalar), `data` when byte_len is 0.
 *
 * Checked now: the reserved name "__metadata__" (STGUARD_INVALID_TENSOR_NAME), invalid
 * UTF-8, a dtype outside the enum, NULL pointers and a byte_len that differs from what
 * dtype and shape imply (STGUARD_INVALID_ARGUMENT), sub-byte dtypes that do not fill
 * whole bytes (STGUARD_MISALIGNED_SLICE), overflow (STGUARD_VALIDATION_OVERFLOW).
 * Checked when writing: duplicate names (STGUARD_DUPLICATE_NAME) and the header cap.
 * A failed add STICKS: every later stguard_writer_write_file returns that same error and
 * writes nothing, so a file can never silently lack a tensor. */
STGUARD_API stguard_code stguard_writer_add_tensor(stguard_writer* writer, const char* name,
                                                   size_t name_len, stguard_dtype dtype,
                                                   const uint64_t* shape, size_t ndim,
                                                   const void* data, size_t byte_len,
                                                   stguard_error* err);

/* stguard_writer_add_tensor_copy is stguard_writer_add_tensor, except that the data is
 * copied into the writer now: the caller's buffer may be reused as soon as it returns.
 * Can also fail with STGUARD_OUT_OF_MEMORY (which sticks like any other failure). */
STGUARD_API stguard_code stguard_writer_add_tensor_copy(stguard_writer* writer,
                                                        const char* name, size_t name_len,
                                                        stguard_dtype dtype,
                                                        const uint64_t* shape, size_t ndim,
                                                        const void* data, size_t byte_len,
                                                        stguard_error* err);

/* stguard_writer_add_metadata adds one __metadata__ entry; key and value (UTF-8, given
 * by pointer + length) are copied now. Invalid UTF-8 or a NULL pointer with a nonzero
 * length is STGUARD_INVALID_ARGUMENT; a key given twice is STGUARD_DUPLICATE_NAME when
 * writing. Failures stick as for stguard_writer_add_tensor. */
STGUARD_API stguard_code stguard_writer_add_metadata(stguard_writer* writer, const char* key,
                                                     size_t key_len, const char* value,
                                                     size_t value_len, stguard_error* err);

/* stguard_writer_num_tensors returns the number of tensors added successfully (0 for
 * NULL). */
STGUARD_API size_t stguard_writer_num_tensors(const stguard_writer* writer);

/* stguard_writer_write_file writes the canonical file to `path` (NUL-terminated),
 * crash-safely: a temporary file beside it is written, fsynced and renamed over it. Every
 * check runs before the first byte is written; on ANY error (a refused tensor, a failed
 * earlier add, a full disk) `path` keeps its old content or stays absent and no
 * temporary file is left. A destination that is a directory or device is
 * STGUARD_NOT_A_REGULAR_FILE; other write failures STGUARD_IO_ERROR. The writer can
 * write any number of times. */
STGUARD_API stguard_code stguard_writer_write_file(const stguard_writer* writer,
                                                   const char* path, stguard_error* err);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* STGUARD_STGUARD_H_ */
