// SPDX-License-Identifier: Apache-2.0
// WriteSparseCheckpoint (see sparse_checkpoint.h).
#include "support/sparse_checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "stguard/writer.h"

namespace stguard::testing {

Error WriteSparseCheckpoint(const std::string& path, const std::vector<ShapedTensor>& tensors,
                            const std::vector<std::pair<std::string, std::string>>& metadata) {
  Writer writer;
  for (const ShapedTensor& tensor : tensors) {
    uint64_t bits = DtypeBits(tensor.dtype);
    for (uint64_t dim : tensor.shape) bits *= dim;  // test shapes never overflow
    // The producer is never called: only the header is built.
    Error error = writer.AddTensor(tensor.name, tensor.dtype, tensor.shape, bits / 8,
                                   [](ByteSink&) { return Error{}; });
    if (!error.ok()) return error;
  }
  for (const auto& [key, value] : metadata) {
    if (Error error = writer.AddMetadata(key, value); !error.ok()) return error;
  }
  Result<std::string> header = writer.CanonicalHeader();
  if (!header.ok()) return header.error();
  Result<uint64_t> size = writer.FileSize();
  if (!size.ok()) return size.error();
  std::string prefix(8, '\0');
  uint64_t n = header->size();
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  prefix += *header;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Error{ErrorCode::kIoError, 0, "cannot create", path};
  const bool ok = ::write(fd, prefix.data(), prefix.size()) == static_cast<ssize_t>(prefix.size()) &&
                  ::ftruncate(fd, static_cast<off_t>(*size)) == 0;
  ::close(fd);
  return ok ? Error{} : Error{ErrorCode::kIoError, 0, "cannot write", path};
}

}  // namespace stguard::testing
