// SPDX-License-Identifier: Apache-2.0
// The HTTP transport over libcurl (stguard/remote.h's HttpTransport): requests only, the
// policy is the library's. Shared by the command line and the Python package. Without
// libcurl at build time (STGUARD_HAVE_CURL unset) nothing is installed, and a URL input
// is the library's error "built without URL support".
#ifndef STGUARD_CLI_HTTP_TRANSPORT_H_
#define STGUARD_CLI_HTTP_TRANSPORT_H_

#include <cstdint>

namespace stguard::cli {

// kDefaultTimeoutSeconds: how long connecting, and a stall in a transfer, may last.
inline constexpr uint64_t kDefaultTimeoutSeconds = 30;

// InstallHttpTransport installs the libcurl transport for the process (SetHttpTransport)
// with `timeout_seconds` for connecting and for a stall (no byte for that long); returns
// whether this build has one.
bool InstallHttpTransport(uint64_t timeout_seconds);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_HTTP_TRANSPORT_H_
