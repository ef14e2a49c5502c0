// SPDX-License-Identifier: Apache-2.0
// bench/fixtures.h: generated checkpoints on disk, made once per process and shared by
// every benchmark that needs them.
#ifndef STGUARD_BENCH_FIXTURES_H_
#define STGUARD_BENCH_FIXTURES_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "generators.h"
#include "stguard/mapped_file.h"

namespace stguard_bench {

// Fixture is a sparse checkpoint file and a read-only mapping of it. Only the header
// pages of the mapping are ever touched, so FromBytes over bytes() validates exactly what
// Checkpoint::Open would, minus the open/mmap/munmap system calls.
struct Fixture {
  GeneratedHeader header;
  std::string path;
  std::unique_ptr<stguard::MappedFile> mapping;

  std::span<const std::byte> bytes() const { return mapping->bytes(); }
  std::string_view header_text() const { return header.text; }
  uint64_t header_len() const { return header.text.size(); }
};

// GetFixture returns the checkpoint of `layout`, generating and mapping it on first use.
// Generation happens outside any timed region.
const Fixture& GetFixture(Layout layout);

// GetZeroDataTwin returns a checkpoint with the same tensor names, dtypes and ranks as
// `layout`, every tensor of size 0 (first dimension 0), and the header padded with spaces
// to the same N: the header "alone", with no data buffer at all.
const Fixture& GetZeroDataTwin(Layout layout);

// StoreFixture writes `header` as a sparse checkpoint named `key`, maps it and keeps it
// for the rest of the process; a second call with the same key returns the first fixture.
const Fixture& StoreFixture(std::string_view key, GeneratedHeader header);

// ScratchPath returns a path in the process's scratch directory, removed at exit.
std::string ScratchPath(std::string_view name);

// CountResidentPages returns how many pages of the file's data buffer (the whole pages
// after the header) are in the page cache, via mincore on a fresh mapping. For a sparse
// file that validation never touched, this is 0.
size_t CountResidentDataPages(const Fixture& fixture);

}  // namespace stguard_bench

#endif  // STGUARD_BENCH_FIXTURES_H_
