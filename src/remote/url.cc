// SPDX-License-Identifier: Apache-2.0
// The URL rules the policy needs and nothing more: what is a remote input, a URL's host,
// percent-quoting as Python's urllib does, and where a redirect may lead.
#include <cctype>
#include <string>
#include <string_view>

#include "remote/range_response.h"
#include "stguard/remote.h"

namespace stguard {
namespace {

// SchemeOf returns "http" or "https" (lowercased), or "" for anything else.
std::string SchemeOf(std::string_view url) {
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos) return "";
  std::string scheme;
  for (char c : url.substr(0, colon)) {
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return scheme == "http" || scheme == "https" ? scheme : "";
}

// Origin returns "scheme://authority" of an http(s) URL.
std::string_view Origin(std::string_view url) {
  const size_t start = url.find("://") + 3;
  const size_t end = url.find_first_of("/?#", start);
  return url.substr(0, end);
}

}  // namespace

bool IsRemoteInput(std::string_view input) {
  return !SchemeOf(input).empty() || input.starts_with("hf://");
}

std::string UrlHost(std::string_view url) {
  if (SchemeOf(url).empty()) return "";
  std::string_view authority = Origin(url).substr(url.find("://") + 3);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // user:password@ is not part of the host
  }
  std::string host;
  for (char c : authority) host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return host;
}

std::string UrlQuote(std::string_view text, std::string_view safe) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '_' || c == '.' || c == '-' || c == '~' ||
        safe.find(c) != std::string_view::npos) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

Result<std::string> NextRedirect(std::string_view from, std::string_view location, int hops) {
  if (hops > kMaxRedirects) {
    return remote::RemoteError("more than " + std::to_string(kMaxRedirects) + " redirects");
  }
  std::string next;
  if (location.find("://") != std::string_view::npos) {
    next = std::string(location);
  } else if (location.starts_with("//")) {
    next = SchemeOf(from) + ":" + std::string(location);
  } else if (location.starts_with("/")) {
    next = std::string(Origin(from)) + std::string(location);
  } else {
    // Relative to the current path's folder (the query and fragment dropped).
    const std::string_view base = from.substr(0, from.find_first_of("?#"));
    const size_t path_start = Origin(from).size();
    const size_t slash = base.rfind('/');
    next = slash == std::string_view::npos || slash < path_start
               ? std::string(base) + "/"
               : std::string(base.substr(0, slash + 1));
    next += location;
  }
  const std::string scheme = SchemeOf(next);
  if (scheme.empty()) return remote::RemoteError("a redirect to a URL that is not http(s)");
  if (scheme == "http" && SchemeOf(from) == "https") {
    return remote::RemoteError("a redirect from https to http refused");
  }
  return next;
}

}  // namespace stguard
