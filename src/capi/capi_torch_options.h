// SPDX-License-Identifier: Apache-2.0
// Reading stguard_torch_options from C, shared by the scan, the conversions and the check.
#ifndef STGUARD_SRC_CAPI_CAPI_TORCH_OPTIONS_H_
#define STGUARD_SRC_CAPI_CAPI_TORCH_OPTIONS_H_

#include "stguard/stguard_check.h"
#include "stguard/torch_checkpoint.h"

namespace stguard::capi {

// ReadTorchOptions maps C options (NULL, or zero fields, meaning the command's defaults)
// to the library's. A malformed key path fills *err and returns false. May throw
// std::bad_alloc: call it inside Guarded.
bool ReadTorchOptions(const stguard_torch_options* options, TorchOptions* torch,
                      TorchConvertOptions* convert, stguard_error* err);

}  // namespace stguard::capi

#endif  // STGUARD_SRC_CAPI_CAPI_TORCH_OPTIONS_H_
