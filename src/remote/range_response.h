// SPDX-License-Identifier: Apache-2.0
// RangeResponse: one range request's response judged as it arrives (stguard/remote.h,
// THE POLICY): which bytes it holds, where it is cut off, and what is wrong with it.
#ifndef STGUARD_SRC_REMOTE_RANGE_RESPONSE_H_
#define STGUARD_SRC_REMOTE_RANGE_RESPONSE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stguard/remote.h"

namespace stguard::remote {

// ContentRange is a parsed "bytes first-last/total" (total may be "*": unknown).
struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  std::optional<uint64_t> total;
};

// ParseContentRange parses a 206's Content-Range, or returns nullopt when it is not
// "bytes A-B/T" with A <= B < T (or "bytes A-B/*").
std::optional<ContentRange> ParseContentRange(const std::string& text);

// RangeResponse is the sink for one request of [begin, end) of a file of `known_size`
// bytes (nullopt for the first request: the size is learned from it).
class RangeResponse final : public HttpSink {
 public:
  RangeResponse(uint64_t begin, uint64_t end, std::optional<uint64_t> known_size,
                uint64_t budget_left)
      : begin_(begin), end_(end), known_size_(known_size), budget_left_(budget_left) {}

  bool OnHead(const HttpHead& head) override;
  bool OnBody(std::span<const std::byte> chunk) override;
  // Finish judges the transfer once the transport returned `transport_error`: ok, or the
  // error naming the status or inconsistency.
  Error Finish(const Error& transport_error);

  uint64_t received() const { return received_; }
  int status() const { return status_; }
  // The bytes kept, starting at begin(), and the file's size the response gave.
  uint64_t kept_begin() const { return begin_; }
  std::vector<std::byte>& kept() { return kept_; }
  uint64_t total() const { return total_; }
  // no_more_ranges: the server answered with more than asked (whole file, or a 206
  // beyond the range): no further request is sent to it; `why` says what it did.
  bool no_more_ranges() const { return !no_ranges_why_.empty(); }
  const std::string& no_ranges_why() const { return no_ranges_why_; }

 private:
  bool Fail(std::string why);
  bool Head206(const HttpHead& head);
  bool Head200(const HttpHead& head);

  uint64_t begin_;
  uint64_t end_;
  std::optional<uint64_t> known_size_;
  uint64_t budget_left_;
  int status_ = 0;
  uint64_t total_ = 0;
  // keep_: how many body bytes are kept; announced_: how many the headers promise
  // (nullopt: unknown, a 200 without Content-Length).
  uint64_t keep_ = 0;
  std::optional<uint64_t> announced_;
  bool stopped_ = false;  // stopped on purpose, at keep_
  uint64_t received_ = 0;
  std::vector<std::byte> kept_;
  std::string failure_;
  std::string no_ranges_why_;
};

// RemoteError is the policy's kIoError with `why` as its context.
Error RemoteError(std::string why);

// AuthHint is what to do about a 401/403 from the Hugging Face endpoint (`hub`): set
// HF_TOKEN when `token` is empty, else the token has no access; "" otherwise.
std::string AuthHint(bool hub, const std::string& token, int status);

}  // namespace stguard::remote

#endif  // STGUARD_SRC_REMOTE_RANGE_RESPONSE_H_
