// SPDX-License-Identifier: Apache-2.0
// RemoteSource: a URL read by range requests under the policy of stguard/remote.h. It
// keeps every byte it received (at most the budget) and serves reads from them; a read
// outside them is one request for the bytes needed plus one read-ahead block.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "remote/range_response.h"
#include "stguard/remote.h"

namespace stguard {

struct RemoteSource::State {
  HttpTransport* transport = nullptr;
  RemoteInput input;
  RemoteLimits limits;
  uint64_t size = 0;
  struct Segment {
    uint64_t offset;
    std::vector<std::byte> bytes;
  };
  std::vector<Segment> segments;
  bool complete = false;
  std::string no_ranges_why;  // set once the server answered with more than asked
  uint64_t received = 0;
  uint64_t requests = 0;

  // Fetch requests [begin, end) (the first request: `known_size` unset) and keeps what
  // arrives, or returns the policy's error.
  Error Fetch(uint64_t begin, uint64_t end, bool first);
  // Covering returns the segment holding `offset`, or null.
  const Segment* Covering(uint64_t offset) const {
    for (const Segment& segment : segments) {
      if (offset >= segment.offset && offset - segment.offset < segment.bytes.size()) {
        return &segment;
      }
    }
    return nullptr;
  }
};

Error RemoteSource::State::Fetch(uint64_t begin, uint64_t end, bool first) {
  if (end - begin > limits.max_bytes || received > limits.max_bytes - (end - begin)) {
    return remote::RemoteError(
        "the checks need more than the remote budget of " + std::to_string(limits.max_bytes) +
        " bytes (" + std::to_string(received) + " received, " + std::to_string(end - begin) +
        " more asked)");
  }
  HttpRequest request = input.request;
  request.range = HttpRequest::ByteRange{begin, end};
  remote::RangeResponse response(begin, end, first ? std::nullopt : std::optional(size),
                                 limits.max_bytes - received);
  ++requests;
  const Error transport_error = transport->Fetch(request, response);
  received += response.received();
  if (Error error = response.Finish(transport_error); !error.ok()) {
    error.context += remote::AuthHint(input.hub, input.request.token, response.status());
    return error;
  }
  if (first) size = response.total();
  if (response.no_more_ranges()) no_ranges_why = response.no_ranges_why();
  std::vector<std::byte>& kept = response.kept();
  complete = complete || (begin == 0 && kept.size() == size);
  if (!kept.empty()) segments.push_back(Segment{begin, std::move(kept)});
  return {};
}

RemoteSource::RemoteSource(std::unique_ptr<State> state) : state_(std::move(state)) {}
RemoteSource::~RemoteSource() = default;

Result<std::unique_ptr<RemoteSource>> RemoteSource::Open(HttpTransport& transport,
                                                         RemoteInput input,
                                                         RemoteLimits limits) {
  auto state = std::make_unique<State>();
  state->transport = &transport;
  state->input = std::move(input);
  limits.block = std::max<uint64_t>(limits.block, 1);
  state->limits = limits;
  if (Error error = state->Fetch(0, limits.block, true); !error.ok()) {
    return error;
  }
  return std::unique_ptr<RemoteSource>(new RemoteSource(std::move(state)));
}

uint64_t RemoteSource::size() const { return state_->size; }
bool RemoteSource::remote() const { return !state_->complete; }
uint64_t RemoteSource::bytes_received() const { return state_->received; }
uint64_t RemoteSource::requests() const { return state_->requests; }

Error RemoteSource::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  State& state = *state_;
  if (Error error = SourceRangeError(state.size, offset, out.size(), state.input.request.url);
      !error.ok()) {
    return error;
  }
  const uint64_t end = offset + out.size();
  uint64_t at = offset;
  while (at < end) {
    if (const State::Segment* segment = state.Covering(at); segment != nullptr) {
      const uint64_t from = at - segment->offset;
      const uint64_t count = std::min<uint64_t>(end - at, segment->bytes.size() - from);
      std::memcpy(out.data() + (at - offset), segment->bytes.data() + from,
                  static_cast<size_t>(count));
      at += count;
      continue;
    }
    if (!state.no_ranges_why.empty()) {
      return remote::RemoteError("the server does not honour range requests (" +
                                 state.no_ranges_why + ")");
    }
    // What is needed plus one read-ahead block, within the file.
    const uint64_t ahead = std::min(state.limits.block, state.size - end);
    if (Error error = state.Fetch(at, end + ahead, false); !error.ok()) return error;
    if (state.Covering(at) == nullptr) {
      return remote::RemoteError("the server sent no bytes for the range asked");
    }
  }
  return {};
}

}  // namespace stguard
