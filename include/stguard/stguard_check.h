/* SPDX-License-Identifier: Apache-2.0 */
/* stguard/stguard_check.h: the C99 API's front door: what any file is (the one sniffer,
 * by content, never by name) and its verdict, in the same words as the command line.
 *
 * A thin layer over stguard/sniff.h and stguard/verdict.h: the same sniffer and the same
 * CheckPath as `stguard check`, so a C program gets the command's verdict on any file or
 * folder, and the same JSON envelope. Errors, ownership and threads follow
 * stguard/stguard.h; the PyTorch scan and conversion are in stguard/stguard_torch.h.
 *
 *   stguard_result* result = NULL;
 *   if (stguard_check_path("model_folder", NULL, &result, NULL) == STGUARD_OK) {
 *     printf("%s\n", stguard_result_json(result));  (the envelope, as --json prints it)
 *     if (stguard_result_verdict(result) != STGUARD_VERDICT_VALID) ... do not load it ...
 *   }
 *   stguard_result_free(result);
 */
#ifndef STGUARD_STGUARD_CHECK_H_
#define STGUARD_STGUARD_CHECK_H_

#include <stddef.h>
#include <stdint.h>

#include "stguard/export.h"
#include "stguard/stguard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* What a file is                                                                        */
/* ------------------------------------------------------------------------------------ */

/* stguard_format mirrors stguard::Format (stguard/formats.h) value for value: what the
 * sniffer recognises from a file's bytes, never its name. Both are expanded from
 * stguard/formats.def, which says what each format is: STGUARD_FORMAT_UNKNOWN (0),
 * STGUARD_FORMAT_SAFETENSORS, STGUARD_FORMAT_PYTORCH_ZIP, STGUARD_FORMAT_PYTORCH_LEGACY,
 * STGUARD_FORMAT_PICKLE, STGUARD_FORMAT_TAR, STGUARD_FORMAT_ZIP, STGUARD_FORMAT_GGUF,
 * STGUARD_FORMAT_NPY, STGUARD_FORMAT_NPZ, STGUARD_FORMAT_JSON, in that order. */
typedef enum stguard_format {
#define STGUARD_FORMAT(Name, C_NAME, word, kind, hint, pickle, convert, inspect, scan) \
  STGUARD_FORMAT_##C_NAME,
#include "stguard/formats.def"
#undef STGUARD_FORMAT

  STGUARD_NUM_FORMATS /* not a format: the number of formats above */
} stguard_format;

/* stguard_format_name returns the format's name as the command line prints it
 * ("safetensors", "pytorch-zip", "pytorch-legacy", "pickle", "tar", "zip", "gguf",
 * "npy", "npz", "json"), or "unknown" for a value
 * outside the enum. The string is static: never freed. */
STGUARD_API const char* stguard_format_name(stguard_format format);

/* stguard_format_is_pickle_bearing returns 1 when loading a file of this format
 * (torch.load, pickle.load) runs pickle opcodes from it (the PyTorch formats, bare
 * pickles, tars), 0 otherwise. */
STGUARD_API int stguard_format_is_pickle_bearing(stguard_format format);

/* stguard_sniff_buffer returns the format of the `len` bytes at `data` (a whole file),
 * STGUARD_FORMAT_UNKNOWN when `data` is NULL. It reads a bounded part of them, allocates a
 * fixed amount and never fails. */
STGUARD_API stguard_format stguard_sniff_buffer(const void* data, size_t len);

/* stguard_sniff_file maps the file at `path` read-only and sets *out_format to its format.
 * Returns STGUARD_OK, or STGUARD_IO_ERROR / STGUARD_NOT_A_REGULAR_FILE when the file
 * cannot be read, STGUARD_INVALID_ARGUMENT for a NULL argument. */
STGUARD_API stguard_code stguard_sniff_file(const char* path, stguard_format* out_format,
                                            stguard_error* err);

/* stguard_torch_options selects the state dict and bounds the output, as the command's
 * options do. Zero-initialise it (stguard_torch_options o = {0};): every zero field means
 * the command's default. Fields may be added at the end in a later version. */
typedef struct stguard_torch_options {
  /* --key: num_keys NUL-terminated keys; the state dict is root[key_path[0]][key_path[1]]...
   * Empty (num_keys 0): the root itself. Read during the call only. */
  const char* const* key_path;
  size_t num_keys;
  /* --max-output-ratio: the selected tensors' bytes may be at most this many times the
   * file's size (plus 1 MiB). 0 means the default, 4; set unbounded_output for no bound
   * (trusted input only). */
  uint64_t max_output_ratio;
  int unbounded_output;
  /* --drop-aliases (conversion only): keep one name per tied tensor, the first. */
  int drop_aliases;
  /* --allow-external-symlinks (folder conversion only): read shards that link out of the
   * input folder. */
  int allow_external_symlinks;
} stguard_torch_options;

/* ------------------------------------------------------------------------------------ */
/* The verdict on any file or folder                                                     */
/* ------------------------------------------------------------------------------------ */

/* stguard_verdict mirrors stguard::Verdict (stguard/verdict.h): the one vocabulary of
 * every command, the C API and Python. */
typedef enum stguard_verdict {
  STGUARD_VERDICT_VALID = 0, /* every rule holds; loading it runs no code it chose */
  STGUARD_VERDICT_INVALID,   /* malformed: a rule of its format does not hold */
  STGUARD_VERDICT_REFUSED,   /* would run code, or cannot be proven safe */
  STGUARD_VERDICT_ERROR,     /* no verdict: I/O, usage or memory */

  STGUARD_NUM_VERDICTS /* not a verdict: the number of verdicts above */
} stguard_verdict;

/* stguard_verdict_name returns "valid", "invalid", "refused" or "error" (also for a value
 * outside the enum); static, never freed. */
STGUARD_API const char* stguard_verdict_name(stguard_verdict verdict);

/* stguard_verdict_exit_status returns the command's exit status for a verdict: 0 valid,
 * 1 invalid or refused, 2 error (and for a value outside the enum). */
STGUARD_API int stguard_verdict_exit_status(stguard_verdict verdict);

/* stguard_verdict_worse returns the worse of two verdicts in the library's order (refused,
 * then invalid, then error, then valid; the first on a tie; a value outside the enum is
 * error): the verdict of several results taken together, as a folder's, and whose exit
 * status a command given several paths exits with. */
STGUARD_API stguard_verdict stguard_verdict_worse(stguard_verdict first, stguard_verdict second);

/* stguard_verdict_sentence returns the verdict's meaning in one sentence for a person, the
 * library's own (the one the browser page and Python show; error's for a value outside
 * the enum); static, never freed. */
STGUARD_API const char* stguard_verdict_sentence(stguard_verdict verdict);

/* stguard_check_options tunes stguard_check_path. Zero-initialise it: every zero field is
 * the command's default. Fields may be added at the end in a later version. */
typedef struct stguard_check_options {
  /* --aligned: every safetensors tensor's data aligned to its element size. */
  int require_aligned_data;
  /* --allow-external-symlinks: read files through links out of the folder. */
  int allow_external_symlinks;
  /* How a PyTorch file's state dict is selected and its output bounded; NULL: defaults. */
  const stguard_torch_options* torch;
} stguard_check_options;

/* stguard_result is the verdict on a file or folder and what it rests on (opaque). A
 * folder's result holds one result per file examined (stguard_result_file_at). */
typedef struct stguard_result stguard_result;

/* stguard_warning is something worth reporting that does not change the verdict; every
 * pointer is owned by the result and valid until stguard_result_free. */
typedef struct stguard_warning {
  const char* kind;    /* "pickle-file", "total-size-mismatch"... NUL-terminated, static */
  const char* file;    /* the file in the folder, NUL-terminated */
  const char* tensor;  /* tensor_len bytes, NOT NUL-terminated; may be empty */
  size_t tensor_len;
  const char* message; /* NUL-terminated */
} stguard_warning;

/* stguard_summary holds the counts a valid file or folder reports (0 where not known). */
typedef struct stguard_summary {
  uint64_t tensors;
  uint64_t data_bytes;   /* tensor data bytes */
  uint64_t header_bytes; /* a single safetensors file's JSON header */
  uint64_t shards;       /* safetensors files validated: a folder's shards, 1 for a file */
} stguard_summary;

/* stguard_check_path decides the verdict on `path` as `stguard check PATH` does: a file of
 * any format the sniffer recognises (safetensors, PyTorch, GGUF, npy, npz), or a folder
 * (or *.safetensors.index.json) with every file in it, pickle-bearing files scanned
 * statically. Sets *out_result to a new result (free it with stguard_result_free) and
 * returns STGUARD_OK whatever the verdict, an unreadable path included (verdict error: its
 * code says why). Fails only for a NULL argument (STGUARD_INVALID_ARGUMENT) or when memory
 * runs out (STGUARD_OUT_OF_MEMORY), with *out_result set to NULL. `options` may be NULL. */
STGUARD_API stguard_code stguard_check_path(const char* path,
                                            const stguard_check_options* options,
                                            stguard_result** out_result, stguard_error* err);

/* stguard_result_free frees the result and the results of its files; NULL is a no-op.
 * Only results from stguard_check_path are freed, never those from stguard_result_file_at. */
STGUARD_API void stguard_result_free(stguard_result* result);

/* stguard_result_verdict returns the verdict (STGUARD_VERDICT_ERROR for NULL). */
STGUARD_API stguard_verdict stguard_result_verdict(const stguard_result* result);

/* stguard_result_format returns what the sniffer found (UNKNOWN for a folder or NULL);
 * stguard_result_is_folder returns 1 for a folder or index, 0 otherwise. */
STGUARD_API stguard_format stguard_result_format(const stguard_result* result);
STGUARD_API int stguard_result_is_folder(const stguard_result* result);

/* stguard_result_path returns the path given (a folder's file: its name in the folder),
 * NUL-terminated, owned by the result; "" for NULL. */
STGUARD_API const char* stguard_result_path(const stguard_result* result);

/* stguard_result_error returns the code of the error behind a verdict that is not valid
 * (STGUARD_OK for valid) and, when `error` is not NULL and the code is not STGUARD_OK,
 * fills *error with it. Its offset is 0 unless stguard_result_offset_in_file says it
 * points into the file (for a folder: into the file stguard_result_member names). */
STGUARD_API stguard_code stguard_result_error(const stguard_result* result,
                                              stguard_error* error);
STGUARD_API int stguard_result_offset_in_file(const stguard_result* result);

/* stguard_result_member returns, for a folder, the file inside it the error is about
 * ("" for the folder itself, a valid result or NULL). Owned by the result. */
STGUARD_API const char* stguard_result_member(const stguard_result* result);

/* stguard_result_json returns the envelope as one JSON object, exactly the fields every
 * `--json` output starts with (README "Verdicts and the JSON envelope"): schema_version,
 * file, format, verdict and, when not valid, code, message, offset (only when it points
 * into the file) and tensor. NUL-terminated, owned by the result; "" for NULL. */
STGUARD_API const char* stguard_result_json(const stguard_result* result);

/* stguard_result_summary returns the counts (all 0 for NULL). */
STGUARD_API stguard_summary stguard_result_summary(const stguard_result* result);

/* A folder's files, each examined once, and the warnings; NULL for an index out of range.
 * Owned by the result. */
STGUARD_API size_t stguard_result_num_files(const stguard_result* result);
STGUARD_API const stguard_result* stguard_result_file_at(const stguard_result* result,
                                                         size_t index);
STGUARD_API size_t stguard_result_num_warnings(const stguard_result* result);
STGUARD_API const stguard_warning* stguard_result_warning(const stguard_result* result,
                                                          size_t index);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* STGUARD_STGUARD_CHECK_H_ */
