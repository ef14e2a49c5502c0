// SPDX-License-Identifier: Apache-2.0
// The process's HTTP transport (SetHttpTransport): installed once by a front end that
// links one (the CLI, Python), read by the front door for every URL input.
#include <memory>
#include <mutex>
#include <utility>

#include "stguard/remote.h"

namespace stguard {
namespace {

std::mutex& TransportMutex() {
  static std::mutex mutex;
  return mutex;
}

std::shared_ptr<HttpTransport>& Installed() {
  static std::shared_ptr<HttpTransport> transport;
  return transport;
}

}  // namespace

void SetHttpTransport(std::shared_ptr<HttpTransport> transport) {
  const std::lock_guard lock(TransportMutex());
  Installed() = std::move(transport);
}

std::shared_ptr<HttpTransport> GetHttpTransport() {
  const std::lock_guard lock(TransportMutex());
  return Installed();
}

}  // namespace stguard
