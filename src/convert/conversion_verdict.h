// SPDX-License-Identifier: Apache-2.0
// What a failed conversion says about IN (ConvertReport::verdict, stguard/conversion.h).
#ifndef STGUARD_SRC_CONVERT_CONVERSION_VERDICT_H_
#define STGUARD_SRC_CONVERT_CONVERSION_VERDICT_H_

#include <string>

#include "stguard/conversion.h"

namespace stguard {

// DecideConversionVerdict sets report->verdict for a conversion of `in` that ended with
// `error` (the rule is ConvertReport::verdict's) and returns the error that decided it.
// Only a pickle-bearing file whose conversion failed is read again (its static scan, as
// `check` judges it); nothing is read on success or for any other input. `pickle_folder`
// says IN was converted as a PyTorch folder: the member a failure names is a shard.
Error DecideConversionVerdict(const std::string& in, const ConvertOptions& options,
                              bool pickle_folder, Error error, ConvertReport* report);

}  // namespace stguard

#endif  // STGUARD_SRC_CONVERT_CONVERSION_VERDICT_H_
