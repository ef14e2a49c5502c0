/* SPDX-License-Identifier: Apache-2.0 */
/* stguard/stguard_check.h: the C99 API's front door: what any file is (the one sniffer,
 * by content, never by name) and its verdict, in the same words as the command line.
 *
 * A thin layer over stguard/sniff.h. Errors, ownership and threads follow
 * stguard/stguard.h; the PyTorch scan and conversion are in stguard/stguard_torch.h.
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

/* stguard_format mirrors stguard::Format (stguard/sniff.h) value for value: what the
 * sniffer recognises from a file's bytes, never its name. */
typedef enum stguard_format {
  STGUARD_FORMAT_UNKNOWN = 0,
  STGUARD_FORMAT_SAFETENSORS,
  STGUARD_FORMAT_PYTORCH_ZIP,    /* torch >= 1.6: a ZIP archive holding a ".pkl" record */
  STGUARD_FORMAT_PYTORCH_LEGACY, /* torch < 1.6's stream of pickles */
  STGUARD_FORMAT_PICKLE,         /* a bare pickle, any protocol */
  STGUARD_FORMAT_TAR,            /* a tar archive (torch's oldest format) */
  STGUARD_FORMAT_ZIP,            /* a ZIP archive that is neither PyTorch's nor an npz */
  STGUARD_FORMAT_GGUF,           /* "GGUF" magic (ggml's checkpoint format) */
  STGUARD_FORMAT_NPY,            /* "\x93NUMPY" magic (numpy's single-array file) */
  STGUARD_FORMAT_NPZ,            /* a ZIP archive whose members are all "*.npy" */
  STGUARD_FORMAT_JSON,           /* no pickle, starts with '{' or '[' (config.json, an index) */

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

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* STGUARD_STGUARD_CHECK_H_ */
