// SPDX-License-Identifier: Apache-2.0
// The one check of a conversion's target dtype, shared by element conversion and the
// writers of converted files.
#ifndef STGUARD_SRC_DATA_CONVERSION_TARGET_H_
#define STGUARD_SRC_DATA_CONVERSION_TARGET_H_

#include <cstdint>
#include <optional>

#include "stguard/dtype.h"
#include "stguard/error.h"

namespace stguard {

// CheckConversionTarget returns kInvalidArgument naming `target` unless it is a dtype that
// conversion writes (IsConversionTarget: F32, F16, BF16).
Error CheckConversionTarget(Dtype target);

// ChangesDtype is the one answer to "does conversion to `target` rewrite a tensor of
// `from`": a target is set, `from` is a floating dtype conversion rewrites
// (IsConvertibleFloat: F64, F32, F16, BF16) and differs from it. Every format's
// conversion, and its `converted` count, asks this.
bool ChangesDtype(Dtype from, std::optional<Dtype> target);

// OutputDtype is the dtype a tensor of `from` has once converted to `target`.
Dtype OutputDtype(Dtype from, std::optional<Dtype> target);

// ConvertedByteLen is the byte length of `byte_len` bytes of `from` once converted to
// `target` (the same when ChangesDtype is false): element for element.
uint64_t ConvertedByteLen(Dtype from, uint64_t byte_len, std::optional<Dtype> target);

}  // namespace stguard

#endif  // STGUARD_SRC_DATA_CONVERSION_TARGET_H_
