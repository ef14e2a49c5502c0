/* SPDX-License-Identifier: Apache-2.0 */
/* stguard/stguard_torch.h: the C99 API for PyTorch checkpoints (.bin, .pt, .pth, .ckpt):
 * what a file is, the static scan's verdict on it, and its conversion to safetensors.
 *
 * A thin layer over stguard/sniff.h, stguard/file_verdict.h and stguard/torch_checkpoint.h:
 * the same sniffer, scan and conversion as `stguard scan` and `stguard convert`, so a C
 * program gets the command's verdict and words. Nothing in a file is ever run: the scan
 * reads the pickle with a machine that knows no code (see README "Threat model").
 * Errors, ownership and threads follow stguard/stguard.h. Example:
 *
 *   stguard_torch_report* report = NULL;
 *   stguard_error err;
 *   if (stguard_torch_scan_file("pytorch_model.bin", NULL, &report, &err) != STGUARD_OK) {
 *     fprintf(stderr, "%s: %s\n", err.code_name, err.message);   (cannot read the file)
 *     return 2;
 *   }
 *   printf("%s: %s\n", stguard_format_name(stguard_torch_report_format(report)),
 *          stguard_torch_report_description(report));
 *   if (stguard_torch_report_verdict(report) == STGUARD_SCAN_CLEAN)
 *     stguard_torch_convert_file("pytorch_model.bin", "model.safetensors", NULL, &err);
 *   stguard_torch_report_free(report);
 */
#ifndef STGUARD_STGUARD_TORCH_H_
#define STGUARD_STGUARD_TORCH_H_

#include <stddef.h>
#include <stdint.h>

#include "stguard/export.h"
#include "stguard/stguard.h"
#include "stguard/stguard_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* The static scan                                                                       */
/* ------------------------------------------------------------------------------------ */

/* stguard_scan_verdict mirrors stguard::FileVerdict (stguard/file_verdict.h): the verdict
 * `stguard scan` prints. CLEAN and NEEDS_KEY are safe to load (stguard_check_path's
 * verdict VALID, exit status 0); NAMES_CODE and CANNOT_PROVE_SAFE are not (REFUSED, 1).
 * Whether the file converts as it is is stguard_torch_report_reason's STGUARD_OK. */
typedef enum stguard_scan_verdict {
  /* The whole pickle was read and names nothing outside the allowlist: loading it runs no
   * code of the file's choosing. */
  STGUARD_SCAN_CLEAN = 0,
  /* As clean, but the tensors sit under a key (a training checkpoint's "state_dict"):
   * select them with stguard_torch_options.key_path (the report lists the paths found). */
  STGUARD_SCAN_NEEDS_KEY,
  /* The pickle names a global, opcode or call outside the allowlist: loading it runs code
   * the file chose. The reason says which, at which byte. */
  STGUARD_SCAN_NAMES_CODE,
  /* The scan could not read the file to its end (a format stguard does not read, a
   * malformed container or pickle...): treated as unsafe, the reason says what stopped it. */
  STGUARD_SCAN_CANNOT_PROVE_SAFE,

  STGUARD_NUM_SCAN_VERDICTS /* not a verdict: the number of verdicts above */
} stguard_scan_verdict;

/* stguard_scan_verdict_name returns "clean", "needs-key", "names-code" or
 * "cannot-prove-safe", or "unknown" for a value outside the enum (static, never freed). */
STGUARD_API const char* stguard_scan_verdict_name(stguard_scan_verdict verdict);

/* stguard_torch_report is one file's scan (opaque): its format, verdict, reason, and what
 * the pickle names (globals, tensors), everything known up to the first refusal. */
typedef struct stguard_torch_report stguard_torch_report;

/* stguard_torch_tensor is one tensor the pickle rebuilds. Pointers point into the report
 * and are valid until stguard_torch_report_free. */
typedef struct stguard_torch_tensor {
  const char* name; /* name_len bytes, NOT NUL-terminated */
  size_t name_len;
  stguard_dtype dtype;
  size_t ndim;
  const uint64_t* shape; /* ndim dimensions, outermost first */
  int contiguous;        /* nonzero: row-major and dense in its storage; else gathered */
  /* Nonzero when this name is another name for an earlier tensor (tied weights); alias_of
   * is that tensor's index. */
  int is_alias;
  size_t alias_of;
  uint64_t offset; /* absolute offset of the pickle opcode that rebuilt it */
} stguard_torch_tensor;

/* stguard_torch_global is one global the pickle names, and whether the allowlist admits
 * it. Pointers as for stguard_torch_tensor. */
typedef struct stguard_torch_global {
  const char* module; /* module_len bytes, NOT NUL-terminated */
  size_t module_len;
  const char* name;   /* name_len bytes, NOT NUL-terminated */
  size_t name_len;
  int allowed;
  uint64_t offset;    /* absolute offset of the opcode that named it */
} stguard_torch_global;

/* stguard_torch_scan_file sniffs and scans the file at `path` statically, as `stguard scan
 * FILE` does, and sets *out_report to a new report (free it with
 * stguard_torch_report_free). A file of any content gets a report: one that is no PyTorch
 * file is cannot-prove-safe with the reason. Returns STGUARD_OK when the report was made,
 * whatever its verdict; otherwise (the file cannot be read: STGUARD_IO_ERROR,
 * STGUARD_NOT_A_REGULAR_FILE; a NULL argument: STGUARD_INVALID_ARGUMENT) the code, with
 * *out_report set to NULL. `options` may be NULL (the defaults). */
STGUARD_API stguard_code stguard_torch_scan_file(const char* path,
                                                 const stguard_torch_options* options,
                                                 stguard_torch_report** out_report,
                                                 stguard_error* err);

/* stguard_torch_scan_buffer is the same for `len` bytes at `data`, which are read during
 * the call only (the report copies what it keeps). */
STGUARD_API stguard_code stguard_torch_scan_buffer(const void* data, size_t len,
                                                   const stguard_torch_options* options,
                                                   stguard_torch_report** out_report,
                                                   stguard_error* err);

/* stguard_torch_report_free frees the report; NULL is a no-op. */
STGUARD_API void stguard_torch_report_free(stguard_torch_report* report);

/* stguard_torch_report_format returns the sniffed format (UNKNOWN for NULL). */
STGUARD_API stguard_format stguard_torch_report_format(const stguard_torch_report* report);

/* stguard_torch_report_verdict returns the verdict (CANNOT_PROVE_SAFE for NULL). */
STGUARD_API stguard_scan_verdict stguard_torch_report_verdict(
    const stguard_torch_report* report);

/* stguard_torch_report_reason returns the code of the error the verdict rests on
 * (STGUARD_OK for a clean file that converts; STGUARD_RAW_PICKLE for a clean bare pickle,
 * which holds no tensor data; STGUARD_NOT_A_STATE_DICT for needs-key) and, when `reason`
 * is not NULL and the code is not STGUARD_OK, fills *reason with it. */
STGUARD_API stguard_code stguard_torch_report_reason(const stguard_torch_report* report,
                                                     stguard_error* reason);

/* stguard_torch_report_description returns the command's sentence for the verdict
 * ("clean: 3 tensors, no code", "names code: PickleGlobalRefused at byte 57: ..."),
 * NUL-terminated and printable; owned by the report (valid until it is freed). "" for
 * NULL. */
STGUARD_API const char* stguard_torch_report_description(const stguard_torch_report* report);

/* Tensors, globals and (for needs-key) key paths, in the pickle's order. Counts are 0 for
 * NULL; an index out of range gives NULL. Owned by the report. */
STGUARD_API size_t stguard_torch_report_num_tensors(const stguard_torch_report* report);
STGUARD_API const stguard_torch_tensor* stguard_torch_report_tensor(
    const stguard_torch_report* report, size_t index);
STGUARD_API size_t stguard_torch_report_num_globals(const stguard_torch_report* report);
STGUARD_API const stguard_torch_global* stguard_torch_report_global(
    const stguard_torch_report* report, size_t index);
STGUARD_API size_t stguard_torch_report_num_key_paths(const stguard_torch_report* report);
/* stguard_torch_report_key_path returns key path `index` as the command's options
 * ("--key model --key state_dict"), NUL-terminated, printable. */
STGUARD_API const char* stguard_torch_report_key_path(const stguard_torch_report* report,
                                                      size_t index);

/* ------------------------------------------------------------------------------------ */
/* Conversion                                                                            */
/* ------------------------------------------------------------------------------------ */

/* stguard_torch_convert_file converts the PyTorch checkpoint at `in_path` to a canonical
 * safetensors file at `out_path` (metadata {"format": "pt"}), as `stguard convert IN OUT`
 * does: the checkpoint is checked whole first, then written through the crash-safe writer
 * (stguard_writer_write_file's guarantees). Anything refused writes nothing. `out_path`
 * naming the input itself (the same path, a hard link or a symbolic link to it) is
 * STGUARD_INVALID_ARGUMENT before anything is read or written. Returns the code of the
 * refusal (STGUARD_PICKLE_GLOBAL_REFUSED, STGUARD_NOT_A_STATE_DICT...), an I/O
 * code, or STGUARD_OK. `options` may be NULL. */
STGUARD_API stguard_code stguard_torch_convert_file(const char* in_path, const char* out_path,
                                                    const stguard_torch_options* options,
                                                    stguard_error* err);

/* stguard_torch_convert_folder converts a folder holding pytorch_model.bin (or
 * pytorch_model.bin.index.json and its shards) into `out_dir`, which must exist, as
 * `stguard convert DIR OUTDIR` does (see ConvertTorchFolder in stguard/torch_checkpoint.h
 * for what is written and the guarantees). key_path and max_output_ratio must be left zero
 * (a folder's shards use the defaults): STGUARD_INVALID_ARGUMENT otherwise. */
STGUARD_API stguard_code stguard_torch_convert_folder(const char* in_dir, const char* out_dir,
                                                      const stguard_torch_options* options,
                                                      stguard_error* err);

/* stguard_convert converts the file or folder at `in_path`, of any format stguard
 * converts (safetensors, PyTorch, GGUF, .npy, .npz, a PyTorch or safetensors model folder),
 * to safetensors at `out_path`, as `stguard convert IN OUT` does: the same library call
 * (ConvertPath in stguard/conversion.h), the same output bytes and the same refusals.
 * `dtype` is what floating tensors become (STGUARD_DTYPE_F32, _F16 or _BF16), or
 * STGUARD_NUM_DTYPES to keep them (a safetensors input needs one). `options` (NULL for
 * the defaults) are the PyTorch options; one that does not apply to the input is
 * STGUARD_INVALID_ARGUMENT. `out_path` naming the input (the same path, a hard link, a
 * symbolic link) is STGUARD_INVALID_ARGUMENT before anything is written, except a
 * safetensors file converted in place. "-" is not standard output here. Anything refused
 * writes nothing. */
STGUARD_API stguard_code stguard_convert(const char* in_path, const char* out_path,
                                         stguard_dtype dtype,
                                         const stguard_torch_options* options,
                                         stguard_error* err);

/* stguard_convert_judged is stguard_convert that also says what the conversion came to,
 * the verdict `stguard convert` prints and exits with (stguard_verdict_exit_status): into
 * `*verdict` (when not NULL) STGUARD_VERDICT_VALID on success; on failure the library's
 * verdict on the input: STGUARD_VERDICT_REFUSED (loading it would run code, or its pickle
 * cannot be proven safe), _INVALID, or _ERROR (a usage error, I/O, the output). `err`
 * then holds the error that decided it (for a folder refused by a shard's pickle, that
 * shard's). Returns as stguard_convert does. */
STGUARD_API stguard_code stguard_convert_judged(const char* in_path, const char* out_path,
                                                stguard_dtype dtype,
                                                const stguard_torch_options* options,
                                                stguard_verdict* verdict, stguard_error* err);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* STGUARD_STGUARD_TORCH_H_ */
