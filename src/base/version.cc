// SPDX-License-Identifier: Apache-2.0
// The version of the library itself, compiled in from the generated stguard/version.h.
#include "stguard/version.h"

extern "C" {

const char* stguard_version_string(void) { return STGUARD_VERSION_STRING; }

unsigned stguard_version_number(void) { return STGUARD_VERSION_NUMBER; }

}  // extern "C"
