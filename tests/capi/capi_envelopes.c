/* SPDX-License-Identifier: Apache-2.0 */
/* capi_envelopes PATH...: one line per PATH, the envelope stguard_check_path gives for it
 * (stguard_result_json), as a C program calling the C API sees it. tests/front_ends/
 * same_envelopes.py compares these lines with the other front ends'. Exits 1 when a call
 * itself fails (no result to print). */
#include <stdio.h>

#include "stguard/stguard.h"
#include "stguard/stguard_check.h"

int main(int argc, char** argv) {
  int i;
  for (i = 1; i < argc; ++i) {
    stguard_result* result = NULL;
    stguard_error error;
    if (stguard_check_path(argv[i], NULL, &result, &error) != STGUARD_OK) {
      fprintf(stderr, "%s: stguard_check_path failed: %s\n", argv[i], error.message);
      return 1;
    }
    printf("%s\n", stguard_result_json(result));
    stguard_result_free(result);
  }
  return 0;
}
