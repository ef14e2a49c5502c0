// SPDX-License-Identifier: Apache-2.0
// CheckRemote: CheckFile for a URL input (stguard/remote.h): the input resolved, read by
// range requests through the installed transport, judged by CheckSource.
#ifndef STGUARD_SRC_FRONT_CHECK_REMOTE_H_
#define STGUARD_SRC_FRONT_CHECK_REMOTE_H_

#include <functional>
#include <string>

#include "stguard/remote.h"
#include "stguard/verdict.h"

namespace stguard {

// CheckRemote returns the verdict on the file `url` names (http://, https://, hf://),
// or verdict error naming why it could not be read: no transport installed ("built
// without URL support"), offline, a status, an inconsistent response, the budget.
// A whole repo (hf://ORG/NAME[@REV]) is checked as a model folder (CheckRemoteRepo).
CheckResult CheckRemote(const std::string& url, const CheckOptions& options);

// LaidOut is called with the local folder a repo is laid out in (sparse files holding
// the bytes the folder rules read: config.json, the index, the shards' headers) and the
// verdict on the repo, while that folder exists (so that lint reads what check read).
using LaidOut = std::function<void(const std::string& folder, const CheckResult& result)>;

// CheckRemoteRepo returns the folder verdict on the repo `url` names, listed and read
// through `transport` (stguard/remote.h, WHOLE REPOS), or verdict error naming why the
// listing or a file could not be read; `laid_out`, when set, is called as said above
// (not when the listing or a file could not be read).
CheckResult CheckRemoteRepo(HttpTransport& transport, const std::string& url,
                            const CheckOptions& options, const LaidOut& laid_out = nullptr);

// NameTheRepo replaces the laid-out `folder` with the repo's `url` in `text` (a message
// written while reading the layout).
void NameTheRepo(const std::string& folder, const std::string& url, std::string* text);

// CheckRemoteRepoInput is CheckRemoteRepo through the installed transport (verdict error
// "built without URL support" without one).
CheckResult CheckRemoteRepoInput(const std::string& url, const CheckOptions& options,
                                 const LaidOut& laid_out);

}  // namespace stguard

#endif  // STGUARD_SRC_FRONT_CHECK_REMOTE_H_
