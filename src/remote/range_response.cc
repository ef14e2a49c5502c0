// SPDX-License-Identifier: Apache-2.0
// One range request's response, judged as it arrives: the status, the Content-Range
// against what was asked, the body against its headers, and where to cut it off.
#include "remote/range_response.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "base/checked_math.h"

namespace stguard::remote {
namespace {

std::string RangeText(uint64_t begin, uint64_t end) {
  return "bytes " + std::to_string(begin) + "-" + std::to_string(end - 1);
}

// Shown is a header's text cut to a length a message can carry.
std::string Shown(const std::string& text) {
  constexpr size_t kShown = 80;
  return text.size() <= kShown ? text : text.substr(0, kShown) + "...";
}

}  // namespace

Error RemoteError(std::string why) {
  return Error{ErrorCode::kIoError, 0, "remote read failed", std::move(why)};
}

std::optional<ContentRange> ParseContentRange(const std::string& text) {
  std::string_view rest = text;
  if (!rest.starts_with("bytes ")) return std::nullopt;
  rest.remove_prefix(6);
  const size_t dash = rest.find('-');
  const size_t slash = rest.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  ContentRange range;
  if (!ParseUint64(rest.substr(0, dash), &range.first) ||
      !ParseUint64(rest.substr(dash + 1, slash - dash - 1), &range.last) ||
      range.last < range.first) {
    return std::nullopt;
  }
  const std::string_view total = rest.substr(slash + 1);
  if (total != "*") {
    uint64_t value = 0;
    if (!ParseUint64(total, &value) || range.last >= value) return std::nullopt;
    range.total = value;
  }
  return range;
}

bool RangeResponse::Fail(std::string why) {
  if (failure_.empty()) failure_ = std::move(why);
  return false;
}

bool RangeResponse::OnHead(const HttpHead& head) {
  status_ = head.status;
  if (head.status == 206) return Head206(head);
  if (head.status == 200) return Head200(head);
  // An empty file cannot satisfy the first range: 416 naming a total of 0.
  if (head.status == 416 && !known_size_ && head.content_range == "bytes */0") {
    total_ = 0;
    stopped_ = true;
    return false;
  }
  return Fail("HTTP " + std::to_string(head.status) +
              (head.status >= 400 ? "" : " (not a response to a range request)"));
}

bool RangeResponse::Head206(const HttpHead& head) {
  if (!head.content_range) return Fail("a 206 response without Content-Range");
  const std::optional<ContentRange> range = ParseContentRange(*head.content_range);
  if (!range) return Fail("the server's Content-Range is malformed: '" + Shown(*head.content_range) + "'");
  if (!range->total) return Fail("the server's Content-Range gives no total size");
  if (known_size_ && *range->total != *known_size_) {
    return Fail("the file's size changed between requests (" + std::to_string(*known_size_) +
                " bytes, then " + std::to_string(*range->total) + ")");
  }
  total_ = *range->total;
  const uint64_t want_end = std::min(end_, total_);
  if (range->first < begin_ && range->last + 1 >= want_end) {
    // More than asked, from before the range: the bytes wanted come after bytes not asked
    // for, which would cost the budget.
    no_ranges_why_ = "it answered " + Shown(*head.content_range) + " when asked for " +
                     RangeText(begin_, want_end);
    return Fail("the server does not honour range requests (" + no_ranges_why_ + ")");
  }
  if (range->first != begin_ || range->last + 1 < want_end) {
    return Fail("the server's Content-Range names other bytes (" + Shown(*head.content_range) +
                " for " + RangeText(begin_, want_end) + ")");
  }
  const uint64_t length = range->last - range->first + 1;
  if (head.content_length && *head.content_length != length) {
    return Fail("the response's Content-Length (" + std::to_string(*head.content_length) +
                ") differs from its Content-Range (" + std::to_string(length) + " bytes)");
  }
  announced_ = length;
  keep_ = length;
  if (range->last + 1 > want_end) {
    // More than asked: worth keeping only when it is the whole file within the budget.
    if (range->first == 0 && range->last + 1 == total_ && total_ <= budget_left_) return true;
    keep_ = want_end - begin_;
    no_ranges_why_ = "it answered " + Shown(*head.content_range) + " when asked for " +
                     RangeText(begin_, want_end);
  }
  return true;
}

bool RangeResponse::Head200(const HttpHead& head) {
  const std::string whole = "it sent the whole file instead of " + RangeText(begin_, end_);
  if (begin_ != 0) {
    no_ranges_why_ = whole;
    return Fail("the server does not honour range requests (" + whole + ")");
  }
  if (known_size_ && head.content_length && *head.content_length != *known_size_) {
    return Fail("the file's size changed between requests (" + std::to_string(*known_size_) +
                " bytes, then " + std::to_string(*head.content_length) + ")");
  }
  announced_ = head.content_length;
  if (!announced_) {
    // Read until the body ends, within the budget; the size is what arrived.
    keep_ = budget_left_;
    return true;
  }
  total_ = *announced_;
  keep_ = total_;
  if (total_ > budget_left_) {
    keep_ = std::min(end_, total_);
    no_ranges_why_ = whole;
  }
  return true;
}

bool RangeResponse::OnBody(std::span<const std::byte> chunk) {
  received_ += chunk.size();
  if (!failure_.empty()) return false;
  const uint64_t room = keep_ - kept_.size();
  const size_t take = static_cast<size_t>(std::min<uint64_t>(room, chunk.size()));
  kept_.insert(kept_.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(take));
  if (kept_.size() < keep_) return true;
  if (announced_ && keep_ < *announced_) {
    stopped_ = true;  // cut off on purpose: the rest was not asked for
    return false;
  }
  if (take < chunk.size()) {
    return Fail(announced_ ? "the body is longer than its headers announced"
                           : "the server does not honour range requests (it sent the whole "
                             "file, with no Content-Length, past the budget of " +
                                 std::to_string(budget_left_) + " bytes)");
  }
  return true;
}

Error RangeResponse::Finish(const Error& transport_error) {
  if (!failure_.empty()) return RemoteError(failure_);
  if (stopped_) return {};
  if (!transport_error.ok()) return transport_error;
  if (status_ == 0) return RemoteError("no response");
  if (!announced_) {
    // A 200 without Content-Length that ended within the budget: the whole file.
    total_ = kept_.size();
    if (known_size_ && total_ != *known_size_) {
      return RemoteError("the file's size changed between requests (" +
                         std::to_string(*known_size_) + " bytes, then " +
                         std::to_string(total_) + ")");
    }
    return {};
  }
  if (kept_.size() < keep_) {
    return RemoteError("the body ended after " + std::to_string(kept_.size()) + " of the " +
                       std::to_string(keep_) + " bytes its headers announced");
  }
  return {};
}

std::string AuthHint(bool hub, const std::string& token, int status) {
  if ((status != 401 && status != 403) || !hub) return "";
  return token.empty() ? " (a gated or private repo: set HF_TOKEN to a token with access)"
                       : " (the token in HF_TOKEN has no access to this repo)";
}

}  // namespace stguard::remote
