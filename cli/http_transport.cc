// SPDX-License-Identifier: Apache-2.0
// One GET per call over libcurl, redirects followed here by the library's rule
// (NextRedirect) so that the Range header is kept and the token reaches its own host
// only; the response's head and body handed to the policy's sink as they arrive.
#include "http_transport.h"

#include <memory>

#include "stguard/remote.h"

#ifdef STGUARD_HAVE_CURL
#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "stguard/version.h"

namespace stguard::cli {
namespace {

Error TransportError(std::string why) {
  return Error{ErrorCode::kIoError, 0, "remote read failed", std::move(why)};
}

// Exchange is one request's state, seen by curl's callbacks.
struct Exchange {
  HttpSink* sink = nullptr;
  HttpHead head;
  std::string location;
  bool head_sent = false;
  bool stopped = false;

  bool Redirect() const { return head.status >= 300 && head.status < 400 && !location.empty(); }
  // SendHead gives the sink the head once; false when it stops the transfer.
  bool SendHead() {
    if (head_sent) return !stopped;
    head_sent = true;
    stopped = !sink->OnHead(head);
    return !stopped;
  }
};

std::string Lower(std::string_view text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    // A new response (after a 100 Continue): its own headers only.
    exchange->head = HttpHead{};
    exchange->location.clear();
    const size_t space = line.find(' ');
    if (space != std::string_view::npos && line.size() >= space + 4) {
      exchange->head.status = std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    }
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  const std::string name = Lower(line.substr(0, colon));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  if (name == "content-range") {
    exchange->head.content_range = std::string(value);
  } else if (name == "content-length") {
    uint64_t length = 0;
    bool digits = !value.empty() && value.size() <= 19;
    for (char c : value) {
      digits = digits && c >= '0' && c <= '9';
      length = length * 10 + static_cast<uint64_t>(c - '0');
    }
    if (digits) exchange->head.content_length = length;
  } else if (name == "link") {
    exchange->head.link = std::string(value);
  } else if (name == "location") {
    exchange->location = std::string(value);
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  if (exchange->Redirect()) return size * count;  // a redirect's body is not the file's
  if (!exchange->SendHead()) return 0;
  const auto chunk = std::as_bytes(std::span<const char>(data, size * count));
  if (!exchange->sink->OnBody(chunk)) {
    exchange->stopped = true;
    return 0;
  }
  return size * count;
}

// CurlApi holds the libcurl functions the transport calls. libcurl is opened at the first
// URL read (dlopen), not linked: linking it loads about 30 shared libraries (TLS, HTTP/2,
// LDAP, Kerberos...) into every command, 6 ms and 7 MB of memory per process that a local
// `check` must not pay.
struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL* handle);
  CURLcode (*easy_setopt)(CURL* handle, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* handle);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* text);
  void (*slist_free_all)(curl_slist* list);
};

template <typename Function>
bool Resolve(void* library, const char* name, Function* function) {
  void* symbol = ::dlsym(library, name);
  if (symbol == nullptr) return false;
  static_assert(sizeof symbol == sizeof *function);
  std::memcpy(function, &symbol, sizeof symbol);  // object to function pointer, as dlsym's
  return true;
}

// LoadCurl opens libcurl once (thread-safe) and starts it; null when it cannot be found.
const CurlApi* LoadCurl() {
  static const CurlApi* const loaded = []() -> const CurlApi* {
    void* library = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    static CurlApi api;
    const bool found = Resolve(library, "curl_global_init", &api.global_init) &&
                       Resolve(library, "curl_easy_init", &api.easy_init) &&
                       Resolve(library, "curl_easy_cleanup", &api.easy_cleanup) &&
                       Resolve(library, "curl_easy_setopt", &api.easy_setopt) &&
                       Resolve(library, "curl_easy_perform", &api.easy_perform) &&
                       Resolve(library, "curl_easy_strerror", &api.easy_strerror) &&
                       Resolve(library, "curl_slist_append", &api.slist_append) &&
                       Resolve(library, "curl_slist_free_all", &api.slist_free_all);
    if (!found || api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return nullptr;
    return &api;
  }();
  return loaded;
}

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(long timeout) : timeout_(timeout) {}

  Error Fetch(const HttpRequest& request, HttpSink& sink) override {
    std::string url = request.url;
    for (int hops = 0;;) {
      Exchange exchange;
      exchange.sink = &sink;
      if (Error error = FetchOnce(url, request, &exchange); !error.ok()) return error;
      if (!exchange.Redirect()) {
        if (!exchange.head_sent) exchange.SendHead();
        return {};
      }
      Result<std::string> next = NextRedirect(url, exchange.location, ++hops);
      if (!next.ok()) return next.error();
      url = *next;
    }
  }

 private:
  Error FetchOnce(const std::string& url, const HttpRequest& request, Exchange* exchange) {
    const CurlApi* api = LoadCurl();
    if (api == nullptr) return TransportError("libcurl (libcurl.so.4) could not be loaded");
    const std::unique_ptr<CURL, void (*)(CURL*)> curl(api->easy_init(), api->easy_cleanup);
    if (curl == nullptr) return TransportError("libcurl could not start");
    curl_slist* headers = nullptr;
    if (request.range) {
      headers = api->slist_append(headers, ("Range: bytes=" + std::to_string(request.range->begin) +
                                            "-" + std::to_string(request.range->end - 1))
                                               .c_str());
    }
    // The token goes to its own host only: never after a redirect elsewhere.
    if (!request.token.empty() && UrlHost(url) == request.token_host) {
      headers = api->slist_append(headers, ("Authorization: Bearer " + request.token).c_str());
    }
    const std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers,
                                                                        api->slist_free_all);
    CURL* handle = curl.get();
    api->easy_setopt(handle, CURLOPT_URL, url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string form; the bit mask is deprecated
    api->easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    api->easy_setopt(handle, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    api->easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    api->easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    api->easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, timeout_);
    api->easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api->easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, timeout_);
    api->easy_setopt(handle, CURLOPT_USERAGENT, "stguard/" STGUARD_VERSION_STRING);
    api->easy_setopt(handle, CURLOPT_HTTPHEADER, header_list.get());
    api->easy_setopt(handle, CURLOPT_HEADERFUNCTION, OnHeader);
    api->easy_setopt(handle, CURLOPT_HEADERDATA, exchange);
    api->easy_setopt(handle, CURLOPT_WRITEFUNCTION, OnBody);
    api->easy_setopt(handle, CURLOPT_WRITEDATA, exchange);
    const CURLcode code = api->easy_perform(handle);
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && exchange->stopped)) return {};
    std::string host = UrlHost(url);
    switch (code) {
      case CURLE_OPERATION_TIMEDOUT:
        return TransportError("timed out after " + std::to_string(timeout_) + " s (" + host +
                              ": connecting, or no byte received)");
      case CURLE_PARTIAL_FILE:
        return TransportError("the connection closed early, before the body's announced end (" +
                              host + ")");
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
        return TransportError("could not connect to " + host);
      default:
        return TransportError(std::string(api->easy_strerror(code)) + " (" + host + ")");
    }
  }

  long timeout_;
};

}  // namespace

bool InstallHttpTransport(uint64_t timeout_seconds) {
  const long timeout = static_cast<long>(std::clamp<uint64_t>(timeout_seconds, 1, 86400));
  SetHttpTransport(std::make_shared<CurlTransport>(timeout));
  return true;
}

}  // namespace stguard::cli

#else  // no libcurl: URL inputs are the library's "built without URL support"

namespace stguard::cli {
bool InstallHttpTransport(uint64_t) { return false; }
}  // namespace stguard::cli

#endif
