/* SPDX-License-Identifier: Apache-2.0 */
/* What the strict C99 test programs share (each includes it once): a CHECK that counts
 * failures and goes on, the path helpers, and the closing report. Still strict C99:
 * the helpers are static inline, so a program that does not use one gets no warning. */
#ifndef STGUARD_TESTS_CAPI_C99_SUPPORT_H_
#define STGUARD_TESTS_CAPI_C99_SUPPORT_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition)                                                            \
  do {                                                                              \
    if (!(condition)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

/* join writes "DIR/NAME" to out; a path that does not fit stops the program (exit 2). */
static inline void join(char* out, size_t cap, const char* dir, const char* name) {
  int n = snprintf(out, cap, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= cap) {
    fprintf(stderr, "path too long\n");
    exit(2);
  }
}

static inline int file_exists(const char* path) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return 0;
  fclose(file);
  return 1;
}

/* finish reports the count of failed checks (exit 1) or `passed` (exit 0). */
static inline int finish(const char* passed) {
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("%s\n", passed);
  return 0;
}

#endif /* STGUARD_TESTS_CAPI_C99_SUPPORT_H_ */
