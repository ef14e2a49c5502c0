// SPDX-License-Identifier: Apache-2.0
// CheckRemote: CheckFile for a URL input (stguard/remote.h): the input resolved, read by
// range requests through the installed transport, judged by CheckSource.
#ifndef STGUARD_SRC_FRONT_CHECK_REMOTE_H_
#define STGUARD_SRC_FRONT_CHECK_REMOTE_H_

#include <string>

#include "stguard/verdict.h"

namespace stguard {

// CheckRemote returns the verdict on the file `url` names (http://, https://, hf://),
// or verdict error naming why it could not be read: no transport installed ("built
// without URL support"), offline, a status, an inconsistent response, the budget.
CheckResult CheckRemote(const std::string& url, const CheckOptions& options);

}  // namespace stguard

#endif  // STGUARD_SRC_FRONT_CHECK_REMOTE_H_
