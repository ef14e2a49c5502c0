/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program built with `pkg-config --cflags --libs stguard`: it proves that the
 * installed headers compile as strict C99 and that the pkg-config link line links, by
 * printing the linked library's version from stguard/version.h, then opening the
 * checkpoint named on the command line with the C API (stguard/stguard.h) and printing
 * its tensor count. */
#include <stdio.h>

#include "stguard/stguard.h"
#include "stguard/version.h"

int main(int argc, char** argv) {
  stguard_checkpoint* checkpoint = NULL;
  stguard_error err;
  /* The header this was compiled with and the library it runs with must agree. */
  if (stguard_version_number() != STGUARD_VERSION_NUMBER) return 3;
  printf("stguard %s\n", stguard_version_string());
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.safetensors\n", argv[0]);
    return 2;
  }
  if (stguard_checkpoint_open(argv[1], &checkpoint, &err) != STGUARD_OK) {
    fprintf(stderr, "%s: %s at byte %llu: %s\n", argv[1], err.code_name,
            (unsigned long long)err.offset, err.message);
    return 1;
  }
  printf("tensors: %lu\n", (unsigned long)stguard_checkpoint_num_tensors(checkpoint));
  stguard_checkpoint_close(checkpoint);
  return 0;
}
