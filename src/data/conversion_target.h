// SPDX-License-Identifier: Apache-2.0
// The one check of a conversion's target dtype, shared by element conversion and the
// writers of converted files.
#ifndef STGUARD_SRC_DATA_CONVERSION_TARGET_H_
#define STGUARD_SRC_DATA_CONVERSION_TARGET_H_

#include "stguard/dtype.h"
#include "stguard/error.h"

namespace stguard {

// CheckConversionTarget returns kInvalidArgument naming `target` unless it is a dtype that
// conversion writes (IsConversionTarget: F32, F16, BF16).
Error CheckConversionTarget(Dtype target);

}  // namespace stguard

#endif  // STGUARD_SRC_DATA_CONVERSION_TARGET_H_
