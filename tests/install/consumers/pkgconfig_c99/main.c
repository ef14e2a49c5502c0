/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program built with `pkg-config --cflags --libs stguard`: it proves that the
 * installed headers compile as strict C99 and that the pkg-config link line links, by
 * printing the linked library's version from stguard/version.h. */
#include <stdio.h>

#include "stguard/version.h"

int main(void) {
  /* The header this was compiled with and the library it runs with must agree. */
  if (stguard_version_number() != STGUARD_VERSION_NUMBER) return 3;
  printf("stguard %s\n", stguard_version_string());
  return 0;
}
