// SPDX-License-Identifier: Apache-2.0
// bench/fixtures.cc: the process-wide store of generated checkpoints.
#include "fixtures.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace stguard_bench {
namespace {

// Store owns the scratch directory and every fixture. Members are destroyed in reverse
// order: mappings first, then the directory and its files.
struct Store {
  ScratchDir dir;
  std::map<std::string, std::unique_ptr<Fixture>, std::less<>> fixtures;
};

Store& GetStore() {
  static Store* store = new Store;  // removed by the atexit handler below
  static const bool registered = [] {
    std::atexit([] { delete store; });
    return true;
  }();
  (void)registered;
  return *store;
}

}  // namespace

const Fixture& StoreFixture(std::string_view key, GeneratedHeader header) {
  Store& store = GetStore();
  if (auto it = store.fixtures.find(key); it != store.fixtures.end()) return *it->second;
  auto fixture = std::make_unique<Fixture>();
  fixture->path = store.dir.File(std::string(key) + ".safetensors");
  fixture->header = std::move(header);
  WriteSparseCheckpoint(fixture->path, fixture->header);
  stguard::Result<std::unique_ptr<stguard::MappedFile>> mapping =
      stguard::MappedFile::Open(fixture->path);
  if (!mapping.ok()) {
    std::fprintf(stderr, "stguard bench: %s\n", mapping.error().ToString().c_str());
    std::abort();
  }
  fixture->mapping = std::move(*mapping);
  const Fixture& result = *fixture;
  store.fixtures.emplace(std::string(key), std::move(fixture));
  return result;
}

const Fixture& GetFixture(Layout layout) {
  Store& store = GetStore();
  const std::string_view key = LayoutName(layout);
  if (auto it = store.fixtures.find(key); it != store.fixtures.end()) return *it->second;
  return StoreFixture(key, BuildCanonicalHeader(MakeTensors(layout)));
}

const Fixture& GetZeroDataTwin(Layout layout) {
  Store& store = GetStore();
  const std::string key = std::string(LayoutName(layout)) + "_zero_data";
  if (auto it = store.fixtures.find(key); it != store.fixtures.end()) return *it->second;
  const Fixture& original = GetFixture(layout);
  std::vector<TensorSpec> tensors = original.header.tensors;
  return StoreFixture(key, BuildCanonicalHeader(ZeroSizeVariant(std::move(tensors)),
                                                original.header_len()));
}

std::string ScratchPath(std::string_view name) { return GetStore().dir.File(name); }

size_t CountResidentDataPages(const Fixture& fixture) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t file_size = fixture.bytes().size();
  const uint64_t first_page = (8 + fixture.header_len() + page - 1) / page;
  const uint64_t num_pages = (file_size + page - 1) / page;
  if (num_pages <= first_page) return 0;
  // mincore wants a page-aligned address: the mapping itself is.
  auto* base = const_cast<std::byte*>(fixture.bytes().data());
  size_t resident = 0;
  constexpr uint64_t kChunkPages = uint64_t{1} << 20;  // 4 GB of file per call
  std::vector<unsigned char> flags(kChunkPages);
  for (uint64_t at = first_page; at < num_pages; at += kChunkPages) {
    const uint64_t count = std::min(kChunkPages, num_pages - at);
    if (::mincore(base + at * page, count * page, flags.data()) != 0) return SIZE_MAX;
    for (uint64_t i = 0; i < count; ++i) resident += flags[i] & 1;
  }
  return resident;
}

}  // namespace stguard_bench
