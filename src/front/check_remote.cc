// SPDX-License-Identifier: Apache-2.0
// A URL input checked by range requests: the policy (stguard/remote.h) decides what is
// read and when the reading is an error; CheckSource decides the verdict on what was read.
#include "front/check_remote.h"

#include <memory>
#include <string>

#include "stguard/remote.h"

namespace stguard {
namespace {

CheckResult ErrorResult(const std::string& url, const Error& error) {
  CheckResult result;
  result.file = url;
  result.error = error;
  result.verdict = VerdictForError(error);
  return result;
}

Error NoTransport() {
  return Error{ErrorCode::kIoError, 0, "cannot read a URL",
               "this stguard was built without URL support (libcurl)"};
}

}  // namespace

CheckResult CheckRemoteRepoInput(const std::string& url, const CheckOptions& options,
                                 const LaidOut& laid_out) {
  const std::shared_ptr<HttpTransport> transport = GetHttpTransport();
  if (transport == nullptr) {
    CheckResult result = ErrorResult(url, NoTransport());
    result.is_folder = true;
    return result;
  }
  return CheckRemoteRepo(*transport, url, options, laid_out);
}

CheckResult CheckRemote(const std::string& url, const CheckOptions& options) {
  const std::shared_ptr<HttpTransport> transport = GetHttpTransport();
  if (transport == nullptr) return ErrorResult(url, NoTransport());
  if (IsRemoteRepoInput(url)) return CheckRemoteRepo(*transport, url, options);
  const Result<RemoteInput> input = ResolveRemoteInput(url, RemoteEnvironmentFromProcess());
  if (!input.ok()) return ErrorResult(url, input.error());
  Result<std::unique_ptr<RemoteSource>> source = RemoteSource::Open(*transport, *input);
  if (!source.ok()) return ErrorResult(url, source.error());
  CheckResult result = CheckSource(**source, url, options);
  // What the verdict cost, so that the budget can be seen at work.
  result.notes.push_back("remote: " + std::to_string((*source)->requests()) + " requests, " +
                         std::to_string((*source)->bytes_received()) + " of " +
                         std::to_string((*source)->size()) + " bytes received" +
                         ((*source)->remote() ? "" : " (the whole file: every check ran)"));
  return result;
}

}  // namespace stguard
