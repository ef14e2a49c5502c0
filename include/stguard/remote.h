// SPDX-License-Identifier: Apache-2.0
// stguard/remote.h: checking a file at a URL (http://, https://, hf://) by range requests,
// under one policy for every front end. The library holds the policy; a front end gives
// only the transport (HttpTransport: "send this request, hand me the status, the headers
// and the body as it arrives"), over libcurl for the CLI and Python.
//
// THE POLICY (RemoteSource)
// - Budget. A request asks for what the reader needs plus one read-ahead block
//   (RemoteLimits::block, 64 KiB), and a response is cut off where it passes what was
//   asked: whatever the server sends, a file costs what its checks need plus a block per
//   request, and never more than RemoteLimits::max_bytes (64 MiB) in all, however large
//   the file. Every byte received counts, including bytes thrown away.
// - Consistency. Each of these is an error (verdict error, exit 2; kIoError naming it),
//   never a verdict on the file: a 4xx or 5xx status (named; 401/403 on the Hugging Face
//   endpoint without a token adds "set HF_TOKEN"); a 206 without Content-Range, or whose
//   Content-Range names other bytes than asked; a body shorter (or longer) than its
//   Content-Range or Content-Length; a total size that changes between requests; a
//   connection closed early (the transport's error).
// - Range requests. A server that ignores Range (200 with the whole file), honours it
//   once, or answers 206 with more than asked gets no further request: the source keeps
//   what it received, and a later read outside it is the error "the server does not
//   honour range requests". So the verdict stands when the bytes already received suffice
//   for every check. A first 200 whose Content-Length fits the budget is read whole.
// - Skipped checks. While some of the file was not received, remote() is true and the
//   readers skip the checks that need data they would not otherwise read (a PyTorch
//   storage's local header and CRC-32, an npz stored member's CRC-32, GGUF padding): the
//   result lists them (CheckResult::unchecked, the envelope's "unchecked") and the verdict
//   line says so. When every byte of the file was received (a file no larger than the
//   first block, or a first 200 read whole), remote() is false and every check runs: the
//   verdict is the local one.
//
// REDIRECTS (NextRedirect): at most kMaxRedirects; http→https allowed, https→http refused;
// the Range header is kept; the token goes only to its own host (never after a redirect
// to another host: a CDN gets the range and no token).
//
// HUGGING FACE (ResolveRemoteInput), following huggingface_hub: hf://ORG/NAME/PATH and
// hf://ORG/NAME@REV/PATH are {endpoint}/ORG/NAME/resolve/{REV or main}/PATH, REV quoted
// with no safe characters (refs/pr/1 → refs%2Fpr%2F1) and PATH with '/' kept. The
// endpoint is HF_ENDPOINT (default https://huggingface.co); the token is HF_TOKEN, else
// the file at HF_TOKEN_PATH, else $HF_HOME/token (HF_HOME defaults to
// ~/.cache/huggingface), sent as "Authorization: Bearer" to the endpoint's host only.
// HF_HUB_OFFLINE=1 (or true/yes/on) makes every remote input an error.
#ifndef STGUARD_REMOTE_H_
#define STGUARD_REMOTE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// HttpRequest is one GET. The transport sends `Range: bytes=begin-(end-1)` when `range`
// is set, and `Authorization: Bearer <token>` only while the request's host is
// `token_host` (before and after redirects).
struct HttpRequest {
  std::string url;
  struct ByteRange {
    uint64_t begin = 0;
    uint64_t end = 0;  // exclusive, > begin
  };
  std::optional<ByteRange> range;
  std::string token;
  std::string token_host;
};

// HttpHead is the final response's status line and the headers the policy reads.
struct HttpHead {
  int status = 0;
  std::optional<std::string> content_range;
  std::optional<uint64_t> content_length;
  std::string link;  // the Link header, for paged listings
};

// HttpSink hears a response as it arrives. Each returns false to stop the transfer
// (the transport then stops reading and returns ok: the sink knows why it stopped).
class STGUARD_API HttpSink {
 public:
  virtual ~HttpSink() = default;
  virtual bool OnHead(const HttpHead& head) = 0;
  virtual bool OnBody(std::span<const std::byte> chunk) = 0;
};

// HttpTransport sends requests. Fetch follows redirects by NextRedirect, calls
// sink.OnHead once for the final response and sink.OnBody for its body in order, and
// returns kIoError naming what failed (could not connect, timed out, a redirect refused,
// the connection closed before the body's announced end); ok otherwise, and when the sink
// stopped it.
class STGUARD_API HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  [[nodiscard]] virtual Error Fetch(const HttpRequest& request, HttpSink& sink) = 0;
};

// RemoteLimits bounds what a remote file may cost.
struct RemoteLimits {
  // block: the read-ahead added to every request (and the first request's length).
  uint64_t block = uint64_t{64} << 10;
  // max_bytes: every byte received for one file, whatever the file's size or the server.
  uint64_t max_bytes = uint64_t{64} << 20;
};

// RemoteInput is an input resolved to the request that reads it.
struct RemoteInput {
  HttpRequest request;
  // hub: the URL is the Hugging Face endpoint's (an hf:// input, or a URL on its host):
  // a 401/403 without a token then says "set HF_TOKEN".
  bool hub = false;
};

// RemoteSource is a ByteSource over a URL read by range requests under THE POLICY above.
class STGUARD_API RemoteSource final : public ByteSource {
 public:
  // Open makes the first request (the first `block` bytes) to learn the size; an error
  // names the status or inconsistency. `input.request` is the URL and token (its range is
  // set per request). `transport` outlives the source.
  [[nodiscard]] static Result<std::unique_ptr<RemoteSource>> Open(
      HttpTransport& transport, RemoteInput input, RemoteLimits limits = {});
  ~RemoteSource() override;

  uint64_t size() const override;
  [[nodiscard]] Error ReadAt(uint64_t offset, std::span<std::byte> out) const override;
  // remote is true until every byte of the file has been received.
  bool remote() const override;
  // bytes_received counts every body byte received, requests every request sent.
  uint64_t bytes_received() const;
  uint64_t requests() const;

 private:
  struct State;
  explicit RemoteSource(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

inline constexpr int kMaxRedirects = 10;

// NextRedirect returns the absolute URL a redirect from `from` to `location` (absolute or
// relative) leads to, or kIoError when it is refused: the `hops`-th redirect (1-based)
// past kMaxRedirects, a scheme other than http/https, https to http.
STGUARD_API Result<std::string> NextRedirect(std::string_view from, std::string_view location,
                                             int hops);

// UrlHost returns the authority of an http(s) URL, lowercased, with the port when one is
// written ("cdn.example:8080"); "" when `url` is not http(s).
STGUARD_API std::string UrlHost(std::string_view url);

// UrlQuote percent-encodes every byte except A-Z a-z 0-9 "_.-~" and those in `safe`, as
// Python's urllib.parse.quote.
STGUARD_API std::string UrlQuote(std::string_view text, std::string_view safe);

// IsRemoteInput says whether an input names a URL: http://, https:// or hf://.
STGUARD_API bool IsRemoteInput(std::string_view input);

// RemoteEnvironment is what the Hugging Face conventions read from the process.
struct RemoteEnvironment {
  std::string endpoint = "https://huggingface.co";
  std::string token;
  bool offline = false;
};

// RemoteEnvironmentFromProcess reads HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH, HF_HOME, HOME
// and HF_HUB_OFFLINE (a token file's surrounding whitespace is dropped).
STGUARD_API RemoteEnvironment RemoteEnvironmentFromProcess();

// ResolveRemoteInput maps an http(s):// or hf:// input to its request (see HUGGING FACE),
// or returns kInvalidArgument for a malformed hf:// name (and for a whole repo,
// hf://ORG/NAME[@REV]: see ResolveRemoteRepo), kIoError when offline.
STGUARD_API Result<RemoteInput> ResolveRemoteInput(std::string_view input,
                                                   const RemoteEnvironment& environment);

// WHOLE REPOS. hf://ORG/NAME[@REV] (and hf://datasets/..., hf://spaces/...) names a whole
// repo, checked as a model folder (CheckPath). Its files are listed with
// {endpoint}/api/{models|datasets|spaces}/ORG/NAME/tree/{REV}?recursive=true, following
// the Link header's rel="next" pages; each file is then read as a RemoteInput of its own
// under THE POLICY. The listing is untrusted, and bounded by RepoListingLimits:
// - a page past max_page_bytes, more than max_pages pages, or a next page that is not on
//   the endpoint (another host or scheme, or outside {endpoint}/api/) is an error;
// - more than max_entries files is kFolderTooLarge, a verdict on the repo, as for a local
//   folder walk: a listing that is cut off would let a file hide past the cut;
// - a page that is not one JSON array of objects with "type", "path" and, for files,
//   "size" (a non-negative integer) is an error naming the page and the offset;
// - a path that is empty, absolute, holds an empty, "." or ".." segment, a backslash or a
//   control character, or is listed twice, is an error naming the entry.
// The listing requests carry the token as file requests do (to the endpoint's host only).

// IsRemoteRepoInput says whether `input` is hf://ORG/NAME[@REV] with no file path.
STGUARD_API bool IsRemoteRepoInput(std::string_view input);

// RemoteRepo is a whole repo resolved: the first listing page's request, and the prefix
// each listed path is appended to (URL-quoted, '/' kept) to read the file.
struct RemoteRepo {
  HttpRequest listing;
  std::string file_prefix;  // {endpoint}/[datasets/|spaces/]ORG/NAME/resolve/{REV}/
  std::string api_prefix;   // {endpoint}/api/: where every listing page must be
};

// ResolveRemoteRepo resolves hf://ORG/NAME[@REV] (kInvalidArgument for anything else,
// kIoError when offline).
STGUARD_API Result<RemoteRepo> ResolveRemoteRepo(std::string_view input,
                                                 const RemoteEnvironment& environment);

struct RepoListingLimits {
  uint64_t max_page_bytes = uint64_t{8} << 20;  // one page's body
  size_t max_pages = 64;
  size_t max_entries = 10000;  // files in the whole listing
};

// RepoFile is one file of a listing: a checked relative path and its size.
struct RepoFile {
  std::string path;
  uint64_t size = 0;
};

// ListRemoteRepo lists `repo`'s files (directories are left out), sorted by path bytes,
// or returns the error (see WHOLE REPOS; 401/403 without a token adds "set HF_TOKEN").
STGUARD_API Result<std::vector<RepoFile>> ListRemoteRepo(HttpTransport& transport,
                                                         const RemoteRepo& repo,
                                                         const RepoListingLimits& limits = {});

// ParseRepoListingPage appends the files of one listing page (`page` is its 1-based number,
// for messages) to *files, or returns the error.
STGUARD_API Error ParseRepoListingPage(std::string_view body, size_t page,
                                       std::vector<RepoFile>* files);

// NextPageUrl returns the rel="next" URL of a Link header, or "" when there is none.
STGUARD_API std::string NextPageUrl(std::string_view link);

// DOWNLOADS (convert URL OUT). A conversion reads every byte, so the file is downloaded
// whole, to disk, not memory: one GET without Range, status 200, at most `max_bytes`
// (kMaxDownloadBytes by default) whatever Content-Length says, and exactly the
// Content-Length when one is sent; a 206, a body past the cap or its Content-Length, or
// one that ends short is an error, as are the statuses THE POLICY names. Redirects and the
// token follow REDIRECTS.
inline constexpr uint64_t kMaxDownloadBytes = uint64_t{64} << 30;

// DownloadRemote writes the whole file `input` names to the open file `fd` (from its
// current offset), or returns the error naming why it could not.
STGUARD_API Error DownloadRemote(HttpTransport& transport, const RemoteInput& input, int fd,
                                 uint64_t max_bytes = kMaxDownloadBytes);

// DownloadedFile is a URL's file downloaded into a new temporary file (mode 0600) in the
// folder of `beside` (TMPDIR for "-"), named ".NAME.stguard-download-XXXXXX.EXT" after the
// URL's last segment; the destructor removes it, whatever happened.
class STGUARD_API DownloadedFile {
 public:
  // Download resolves `url` (ResolveRemoteInput; a whole repo is kInvalidArgument) and
  // downloads it through the installed transport; no file is left on any error.
  [[nodiscard]] static Result<std::unique_ptr<DownloadedFile>> Download(
      const std::string& url, const std::string& beside, uint64_t max_bytes = kMaxDownloadBytes);
  ~DownloadedFile();
  DownloadedFile(const DownloadedFile&) = delete;
  DownloadedFile& operator=(const DownloadedFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  explicit DownloadedFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// SetHttpTransport installs the transport every front-door call (CheckPath, CheckFile,
// InspectPath) uses for a URL input; null (the default) makes URL inputs the error
// "built without URL support". Call it once at start-up, before any check runs.
STGUARD_API void SetHttpTransport(std::shared_ptr<HttpTransport> transport);
STGUARD_API std::shared_ptr<HttpTransport> GetHttpTransport();

}  // namespace stguard

#endif  // STGUARD_REMOTE_H_
