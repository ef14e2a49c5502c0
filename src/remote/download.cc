// SPDX-License-Identifier: Apache-2.0
// A URL's whole file downloaded to disk for a conversion (stguard/remote.h, DOWNLOADS):
// one GET, written as it arrives, bounded by a cap and held to its Content-Length.
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "remote/range_response.h"
#include "stguard/remote.h"

namespace stguard {
namespace {

// DownloadSink writes a 200's body to a file, stopping at the first inconsistency.
class DownloadSink final : public HttpSink {
 public:
  DownloadSink(int fd, uint64_t cap) : fd_(fd), cap_(cap) {}
  bool OnHead(const HttpHead& head) override {
    status_ = head.status;
    if (head.status != 200) return Fail("HTTP " + std::to_string(head.status));
    announced_ = head.content_length;
    if (announced_ && *announced_ > cap_) {
      return Fail("the file is " + std::to_string(*announced_) +
                  " bytes, over the download cap of " + std::to_string(cap_));
    }
    return true;
  }
  bool OnBody(std::span<const std::byte> chunk) override {
    const uint64_t limit = announced_ ? *announced_ : cap_;
    if (chunk.size() > limit - written_) {
      return Fail(announced_ ? "the body is longer than its Content-Length"
                             : "the body passes the download cap of " + std::to_string(cap_) +
                                   " bytes");
    }
    for (size_t done = 0; done < chunk.size();) {
      const ssize_t n = ::write(fd_, chunk.data() + done, chunk.size() - done);
      if (n < 0 && errno == EINTR) continue;  // a signal (a terminal resize) is not a failure
      if (n <= 0) return Fail(std::string("cannot write the download: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    written_ += chunk.size();
    return true;
  }
  Error Finish(const Error& transport_error) const {
    if (!failure_.empty()) return remote::RemoteError(failure_);
    if (!transport_error.ok()) return transport_error;
    if (status_ == 0) return remote::RemoteError("no response");
    if (announced_ && written_ != *announced_) {
      return remote::RemoteError("the body ended after " + std::to_string(written_) + " of the " +
                                 std::to_string(*announced_) + " bytes its headers announced");
    }
    return {};
  }
  int status() const { return status_; }

 private:
  bool Fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    return false;
  }
  int fd_;
  uint64_t cap_;
  int status_ = 0;
  std::optional<uint64_t> announced_;
  uint64_t written_ = 0;
  std::string failure_;
};

// Suffix is ".EXT" of the URL's last segment when it is short and plain (the readers that
// look at a name see the same one), else "".
std::string Suffix(const std::string& url) {
  const std::string last = url.substr(url.find_last_of('/') + 1);
  const size_t dot = last.find_last_of('.');
  if (dot == std::string::npos || last.size() - dot > 12) return "";
  for (size_t k = dot + 1; k < last.size(); ++k) {
    if (!std::isalnum(static_cast<unsigned char>(last[k]))) return "";
  }
  return last.substr(dot);
}

}  // namespace

Error DownloadRemote(HttpTransport& transport, const RemoteInput& input, int fd,
                     uint64_t max_bytes) {
  HttpRequest request = input.request;
  request.range.reset();
  DownloadSink sink(fd, max_bytes);
  const Error transport_error = transport.Fetch(request, sink);
  Error error = sink.Finish(transport_error);
  if (!error.ok()) error.context += remote::AuthHint(input.hub, request.token, sink.status());
  return error;
}

Result<std::unique_ptr<DownloadedFile>> DownloadedFile::Download(const std::string& url,
                                                                 const std::string& beside,
                                                                 uint64_t max_bytes) {
  const std::shared_ptr<HttpTransport> transport = GetHttpTransport();
  if (transport == nullptr) {
    return Error{ErrorCode::kIoError, 0, "cannot read a URL",
                 "this stguard was built without URL support (libcurl)"};
  }
  const Result<RemoteInput> input = ResolveRemoteInput(url, RemoteEnvironmentFromProcess());
  if (!input.ok()) return input.error();
  std::string folder;
  if (beside == "-") {
    const char* tmp = std::getenv("TMPDIR");
    folder = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  } else {
    const size_t slash = beside.find_last_of('/');
    folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : beside.substr(0, slash));
  }
  const std::string name = beside.substr(beside.find_last_of('/') + 1);
  const std::string suffix = Suffix(input->request.url);
  std::string path = folder + "/." + (beside == "-" ? "stdout" : name) +
                     ".stguard-download-XXXXXX" + suffix;
  const int fd = ::mkstemps(path.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    return Error{ErrorCode::kIoError, 0, "cannot make the download's temporary file",
                 folder + ": " + std::strerror(errno)};
  }
  std::unique_ptr<DownloadedFile> file(new DownloadedFile(path));  // removes it from here on
  Error error = DownloadRemote(*transport, *input, fd, max_bytes);
  if (::close(fd) != 0 && error.ok()) {
    error = Error{ErrorCode::kIoError, 0, "cannot write the download", path + ": " +
                  std::strerror(errno)};
  }
  if (!error.ok()) return error;
  return file;
}

DownloadedFile::~DownloadedFile() { ::unlink(path_.c_str()); }

}  // namespace stguard
