// SPDX-License-Identifier: Apache-2.0
// The CONTENTS lists of stguard/verdict.h (tensors, metadata), one function per reader's
// validated result. Each appends to the result; the entries are linear in what the reader
// already holds.
#ifndef STGUARD_SRC_FRONT_CONTENTS_H_
#define STGUARD_SRC_FRONT_CONTENTS_H_

#include "stguard/file_verdict.h"
#include "stguard/gguf.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/reader.h"
#include "stguard/verdict.h"

namespace stguard {

void ListSafetensors(const Checkpoint& checkpoint, CheckResult* result);
void ListGguf(const gguf::GgufFile& file, CheckResult* result);
void ListNpy(const NpyArrayInfo& info, CheckResult* result);
void ListNpz(const NpzInfo& info, CheckResult* result);
void ListPickle(const PickleFileReport& report, CheckResult* result);

}  // namespace stguard

#endif  // STGUARD_SRC_FRONT_CONTENTS_H_
