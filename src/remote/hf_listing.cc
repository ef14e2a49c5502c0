// SPDX-License-Identifier: Apache-2.0
// A whole hf:// repo's file listing (stguard/remote.h, WHOLE REPOS): the tree API's pages,
// followed by their Link headers, each read within a byte cap and parsed by the project's
// strict JSON tokenizer. The listing is the repo author's (and the server's) text: every
// path in it is checked before anything is built from it.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "remote/range_response.h"
#include "remote/repo_path.h"
#include "stguard/json_tokenizer.h"
#include "stguard/remote.h"

namespace stguard {
namespace {

// PageSink keeps one listing page's body, up to a cap.
class PageSink final : public HttpSink {
 public:
  explicit PageSink(uint64_t cap) : cap_(cap) {}
  bool OnHead(const HttpHead& head) override {
    head_ = head;
    return head.status == 200;  // anything else is reported from the status alone
  }
  bool OnBody(std::span<const std::byte> chunk) override {
    if (chunk.size() > cap_ - body_.size()) {
      too_large_ = true;
      return false;
    }
    body_.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    return true;
  }
  const HttpHead& head() const { return head_; }
  const std::string& body() const { return body_; }
  bool too_large() const { return too_large_; }

 private:
  uint64_t cap_;
  HttpHead head_;
  std::string body_;
  bool too_large_ = false;
};

Error ListingError(size_t page, uint64_t offset, std::string why) {
  return Error{ErrorCode::kIoError, offset, "the repo listing cannot be used",
               (page == 0 ? "" : "page " + std::to_string(page) + ": ") + std::move(why)};
}

// TokenError is the tokenizer's error on a page (not JSON at all, or malformed).
Error TokenError(size_t page, const JsonTokenizer& tokens) {
  return ListingError(page, tokens.error().offset, tokens.error().message);
}

// IsSafeRepoPath: a repo file path (IsRepoFilePath) that is also fit to become part of a
// URL and a name in reports: at most 4 KiB, no backslash, no control character.
bool IsSafeRepoPath(std::string_view path) {
  if (path.size() > 4096) return false;
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '\\') return false;
  }
  return remote::IsRepoFilePath(path);
}

// ParseSize reads a non-negative integer below 2^63 (the tokenizer checked the grammar).
bool ParseSize(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = value;
  return true;
}

// SkipValue consumes the rest of a value whose first token is `first`.
bool SkipValue(JsonTokenizer& tokens, const Token& first) {
  if (first.kind != TokenKind::kBeginObject && first.kind != TokenKind::kBeginArray) return true;
  const uint32_t depth = tokens.depth() - 1;
  Token token;
  while (tokens.depth() > depth) {
    if (!tokens.Next(&token)) return false;
  }
  return true;
}

// ParseEntry reads one listing object after its '{'; sets *file when it is a file.
Error ParseEntry(JsonTokenizer& tokens, size_t page, uint64_t at, RepoFile* file,
                 bool* is_file) {
  std::string type, path, scratch;
  std::string size_text;
  Token token;
  while (true) {
    if (!tokens.Next(&token)) return TokenError(page, tokens);
    if (token.kind == TokenKind::kEndObject) break;
    const std::string key(TokenText(token, &scratch));
    Token value;
    if (!tokens.Next(&value)) return TokenError(page, tokens);
    if (key == "type" || key == "path") {
      if (value.kind != TokenKind::kString) {
        return ListingError(page, value.offset, "\"" + key + "\" is not a string");
      }
      (key == "type" ? type : path) = std::string(TokenText(value, &scratch));
    } else if (key == "size") {
      if (value.kind != TokenKind::kNumber) {
        return ListingError(page, value.offset, "\"size\" is not a number");
      }
      size_text = std::string(value.text);
    } else if (!SkipValue(tokens, value)) {
      return TokenError(page, tokens);
    }
  }
  *is_file = type == "file";
  if (type != "file" && type != "directory") {
    return ListingError(page, at, "an entry's \"type\" is neither \"file\" nor \"directory\"");
  }
  if (!IsSafeRepoPath(path)) {
    return ListingError(page, at, "an entry's path is empty, absolute, holds '.', '..', an "
                                  "empty segment, a backslash or a control character");
  }
  if (*is_file && !ParseSize(size_text, &file->size)) {
    return ListingError(page, at, "a file's \"size\" is not a non-negative integer");
  }
  file->path = std::move(path);
  return {};
}

}  // namespace

Error ParseRepoListingPage(std::string_view body, size_t page, std::vector<RepoFile>* files) {
  JsonTokenizer tokens(body);
  Token token;
  if (!tokens.Next(&token)) return TokenError(page, tokens);
  if (token.kind != TokenKind::kBeginArray) {
    return ListingError(page, token.offset, "not a JSON array");
  }
  while (true) {
    if (!tokens.Next(&token)) return TokenError(page, tokens);
    if (token.kind == TokenKind::kEndArray) break;
    if (token.kind != TokenKind::kBeginObject) {
      return ListingError(page, token.offset, "an entry is not a JSON object");
    }
    RepoFile file;
    bool is_file = false;
    if (Error error = ParseEntry(tokens, page, token.offset, &file, &is_file); !error.ok()) {
      return error;
    }
    if (is_file) files->push_back(std::move(file));
  }
  if (!tokens.Next(&token)) return TokenError(page, tokens);
  return {};
}

std::string NextPageUrl(std::string_view link) {
  // Link: <URL>; rel="next", <URL>; rel="prev" (RFC 8288); only rel="next" is followed.
  size_t at = 0;
  while ((at = link.find('<', at)) != std::string_view::npos) {
    const size_t close = link.find('>', at);
    if (close == std::string_view::npos) return "";
    const size_t next_link = std::min(link.find('<', close), link.size());
    const std::string_view params = link.substr(close + 1, next_link - close - 1);
    if (params.find("rel=\"next\"") != std::string_view::npos ||
        params.find("rel=next") != std::string_view::npos) {
      return std::string(link.substr(at + 1, close - at - 1));
    }
    at = close;
  }
  return "";
}

Result<std::vector<RepoFile>> ListRemoteRepo(HttpTransport& transport, const RemoteRepo& repo,
                                             const RepoListingLimits& limits) {
  std::vector<RepoFile> files;
  HttpRequest request = repo.listing;
  for (size_t page = 1;; ++page) {
    if (page > limits.max_pages) {
      return ListingError(page, 0, "more than " + std::to_string(limits.max_pages) +
                                       " listing pages (the listing budget)");
    }
    PageSink sink(limits.max_page_bytes);
    if (Error error = transport.Fetch(request, sink); !error.ok()) return error;
    const int status = sink.head().status;
    if (status != 200) {
      return ListingError(page, 0, "HTTP " + std::to_string(status) +
                                       remote::AuthHint(true, request.token, status));
    }
    if (sink.too_large()) {
      return ListingError(page, 0, "a page larger than " + std::to_string(limits.max_page_bytes) +
                                       " bytes (the listing budget)");
    }
    if (Error error = ParseRepoListingPage(sink.body(), page, &files); !error.ok()) return error;
    if (files.size() > limits.max_entries) {
      return Error{ErrorCode::kFolderTooLarge, 0, "the repo lists more files than are checked",
                   "more than " + std::to_string(limits.max_entries) + " files"};
    }
    const std::string next = NextPageUrl(sink.head().link);
    if (next.empty()) break;
    // The next page must be the endpoint's API: the token goes nowhere else, and a listing
    // cannot send stguard to read another server.
    if (!next.starts_with(repo.api_prefix) || UrlHost(next) != UrlHost(repo.api_prefix)) {
      return ListingError(page, 0, "its next page is not on the endpoint's API (" +
                                       repo.api_prefix + ")");
    }
    request.url = next;
  }
  std::sort(files.begin(), files.end(),
            [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  for (size_t k = 1; k < files.size(); ++k) {
    if (files[k].path == files[k - 1].path) {
      return ListingError(0, 0, "a path is listed twice");
    }
  }
  return files;
}

}  // namespace stguard
