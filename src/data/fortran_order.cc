// SPDX-License-Identifier: Apache-2.0
// FortranRowsToC (fortran_order.h). A Fortran-order array of shape (d0, ..., dn-1) is a
// d0 x R matrix stored column by column (R = d1 * ... * dn-1): column j holds the d0
// elements sharing (i1, ..., in-1), contiguous from element j * d0, where j is the
// Fortran (first axis fastest) index of (i1, ..., in-1). An output row i0 takes one
// element of every column, the columns in C order; those come in runs of dn-1 columns
// S = d1 * ... * dn-2 apart (one run per index of the middle axes). Each run is thus a
// plain 2-D transpose of a strided matrix, done in square tiles small enough that a
// tile and its transposed copy stay in L1: every cache line is read and written once,
// instead of once per element as a column walk does.
#include "data/fortran_order.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stguard {

namespace {

// A tile is kTileEdgeBytes / size elements a side: each of its rows and columns is two
// cache lines, and the tile (up to 16 KiB) plus its transposed copy fit L1 together.
constexpr size_t kTileEdgeBytes = 128;
constexpr uint64_t TileEdge(size_t size) {
  return size >= kTileEdgeBytes ? 1 : kTileEdgeBytes / size;
}
// ScratchBytes: a tile and its transposed copy.
constexpr size_t ScratchBytes(size_t size) { return 2 * TileEdge(size) * TileEdge(size) * size; }

// kSameSetsStride: a stride that is a multiple of this puts a tile's 128 lines in at most
// 8 of a typical L1's 64 sets (64-byte lines, 8 ways), where they evict each other.
constexpr uint64_t kSameSetsStride = 512;

// ---- The in-L1 transpose of a tile held in contiguous buffers.

#if defined(__SSE2__)
// SSE2 is part of baseline x86-64, so this needs no CPU check. A block of K x K elements
// (K = 16 / size: 16 x 16 bytes, 8 x 8 of 2 bytes, 4 x 4 of 4, 2 x 2 of 8) is loaded as K
// 16-byte rows and transposed in registers by log2(K) rounds of interleaves, rows 2m and
// 2m+1 giving rows m (low halves) and m + K/2 (high halves), the unit doubling each
// round: the result's row j is the block's column BitReverse(j). One load and one store
// per 16 bytes instead of per element (bench/README.md, "Fortran order against C order").
template <size_t Unit>
__m128i InterleaveLow(__m128i a, __m128i b) {
  if constexpr (Unit == 1) return _mm_unpacklo_epi8(a, b);
  if constexpr (Unit == 2) return _mm_unpacklo_epi16(a, b);
  if constexpr (Unit == 4) return _mm_unpacklo_epi32(a, b);
  if constexpr (Unit == 8) return _mm_unpacklo_epi64(a, b);
}
template <size_t Unit>
__m128i InterleaveHigh(__m128i a, __m128i b) {
  if constexpr (Unit == 1) return _mm_unpackhi_epi8(a, b);
  if constexpr (Unit == 2) return _mm_unpackhi_epi16(a, b);
  if constexpr (Unit == 4) return _mm_unpackhi_epi32(a, b);
  if constexpr (Unit == 8) return _mm_unpackhi_epi64(a, b);
}

template <size_t Unit, size_t K>
inline __attribute__((always_inline)) void InterleaveRounds(__m128i (&rows)[K]) {
  __m128i next[K];
  for (size_t m = 0; m < K / 2; ++m) {
    next[m] = InterleaveLow<Unit>(rows[2 * m], rows[2 * m + 1]);
    next[m + K / 2] = InterleaveHigh<Unit>(rows[2 * m], rows[2 * m + 1]);
  }
  for (size_t m = 0; m < K; ++m) rows[m] = next[m];
  if constexpr (Unit < 8) InterleaveRounds<Unit * 2, K>(rows);
}

constexpr size_t BitReverse(size_t j, size_t k) {
  size_t r = 0;
  for (size_t bit = 1; bit < k; bit <<= 1) r = (r << 1) | ((j & bit) != 0 ? 1 : 0);
  return r;
}

// TransposeBlock: row k of the block (16 bytes at src + k * src_stride) becomes its
// column k (16 bytes at dst + k * dst_stride).
template <size_t Size>
inline __attribute__((always_inline)) void TransposeBlock(const std::byte* src,
                                                           size_t src_stride, std::byte* dst,
                                                           size_t dst_stride) {
  constexpr size_t K = 16 / Size;
  __m128i rows[K];
  for (size_t k = 0; k < K; ++k) {
    rows[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k * src_stride));
  }
  InterleaveRounds<Size, K>(rows);
  for (size_t j = 0; j < K; ++j) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + BitReverse(j, K) * dst_stride), rows[j]);
  }
}
constexpr bool kHaveBlocks = true;

// CopyPiece copies a tile's column or row (at most 128 bytes) 16 bytes at a time:
// memcpy of a length known only at run time became `rep movsq`, whose start-up cost
// and serialised cache misses on the strided columns dominated the tiled path.
inline void CopyPiece(std::byte* dst, const std::byte* src, size_t len) {
  size_t k = 0;
  for (; k + 16 <= len; k += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + k),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)));
  }
  std::memcpy(dst + k, src + k, len - k);
}
#else
inline void CopyPiece(std::byte* dst, const std::byte* src, size_t len) {
  std::memcpy(dst, src, len);
}
// Elsewhere (WebAssembly, other CPUs) the element loop below does every tile.
template <size_t Size>
inline void TransposeBlock(const std::byte*, size_t, std::byte*, size_t) {}
constexpr bool kHaveBlocks = false;
#endif

// TransposeBuffered: tile_rows[i][t] = columns[t][i] for i < ni, t < nt, both buffers
// `edge` elements a side: whole 16-byte blocks in registers where the CPU has them, the
// elements outside those one at a time.
template <size_t Size>
void TransposeBuffered(const std::byte* columns, std::byte* tile_rows, uint64_t edge,
                       uint64_t ni, uint64_t nt, size_t n) {
  uint64_t ni_blocks = 0;  // elements of i and t covered by whole blocks
  uint64_t nt_blocks = 0;
  if constexpr (kHaveBlocks && Size != 0 && Size <= 8) {
    constexpr uint64_t k = 16 / Size;
    ni_blocks = ni / k * k;
    nt_blocks = nt / k * k;
    const size_t pitch = edge * Size;
    for (uint64_t i = 0; i < ni_blocks; i += k) {
      for (uint64_t t = 0; t < nt_blocks; t += k) {
        TransposeBlock<Size>(columns + (t * edge + i) * Size, pitch,
                             tile_rows + (i * edge + t) * Size, pitch);
      }
    }
  }
  for (uint64_t i = 0; i < ni; ++i) {
    // Rows of the blocks need only their columns past nt_blocks; the rest, every column.
    for (uint64_t t = i < ni_blocks ? nt_blocks : 0; t < nt; ++t) {
      std::memcpy(tile_rows + (i * edge + t) * n, columns + (t * edge + i) * n,
                  Size != 0 ? Size : n);
    }
  }
}

// A strided matrix transpose: out[i * out_row + t * size] = in[t * in_col + i * size]
// for i < rows, t < cols, tile by tile. When a stride is a multiple of kSameSetsStride
// (the power-of-two shapes common in real models), moving elements straight across
// would have the tile's source (or destination) lines evict each other; then each
// tile's columns are first copied whole into a contiguous buffer, transposed there, and
// its rows copied out whole, so every line is touched once, as a run of bytes. Other
// strides go straight across a column at a time (measured on 64 MiB arrays: 2-byte
// 5792 x 5793 0.07 s this way against 0.17 s tiled, 8-byte 2896 x 2896 0.03 s against
// 0.08 s).
// `Size` 0: `size` is known at run time only (elements over kTileEdgeBytes take tiles
// of one). `scratch`: ScratchBytes(size).
template <size_t Size>
void TransposeTiles(const std::byte* in, uint64_t in_col, std::byte* out, uint64_t out_row,
                    uint64_t rows, uint64_t cols, size_t size, std::byte* scratch) {
  const size_t n = Size != 0 ? Size : size;
  const uint64_t edge = TileEdge(n);
  std::byte* columns = scratch;                       // column t at t * edge elements
  std::byte* tile_rows = scratch + edge * edge * n;   // row i at i * edge elements
  if (in_col % kSameSetsStride != 0 && out_row % kSameSetsStride != 0) {
    // Straight across, a whole column at a time: its lines spread over the cache's sets.
    for (uint64_t t = 0; t < cols; ++t) {
      const std::byte* src = in + t * in_col;
      std::byte* dst = out + t * n;
      for (uint64_t i = 0; i < rows; ++i, src += n, dst += out_row) {
        std::memcpy(dst, src, Size != 0 ? Size : n);
      }
    }
    return;
  }
  for (uint64_t i0 = 0; i0 < rows; i0 += edge) {
    const uint64_t ni = std::min(rows - i0, edge);
    for (uint64_t t0 = 0; t0 < cols; t0 += edge) {
      const uint64_t nt = std::min(cols - t0, edge);
      for (uint64_t t = 0; t < nt; ++t) {
        CopyPiece(columns + t * edge * n, in + (t0 + t) * in_col + i0 * n, ni * n);
      }
      TransposeBuffered<Size>(columns, tile_rows, edge, ni, nt, n);
      for (uint64_t i = 0; i < ni; ++i) {
        CopyPiece(out + (i0 + i) * out_row + t0 * n, tile_rows + i * edge * n, nt * n);
      }
    }
  }
}

using TransposeFn = void (*)(const std::byte*, uint64_t, std::byte*, uint64_t, uint64_t,
                             uint64_t, size_t, std::byte*);

TransposeFn TransposeFor(size_t size) {
  switch (size) {
    case 1: return TransposeTiles<1>;
    case 2: return TransposeTiles<2>;
    case 4: return TransposeTiles<4>;
    case 8: return TransposeTiles<8>;
    default: return TransposeTiles<0>;
  }
}

}  // namespace

void FortranRowsToC(std::span<const std::byte> data, std::span<const uint64_t> shape,
                    size_t size, uint64_t first_row, uint64_t count, std::byte* out) {
  uint64_t runs = 1;  // no overflow: the caller checked the total
  for (const uint64_t d : shape.subspan(1, shape.size() - 2)) runs *= d;
  FortranBlockToC(data, shape, size, first_row, count, 0, runs, out,
                  runs * shape.back() * size, shape.back() * size);
}

void FortranBlockToC(std::span<const std::byte> data, std::span<const uint64_t> shape,
                     size_t size, uint64_t first_row, uint64_t count, uint64_t first_run,
                     uint64_t run_count, std::byte* out, uint64_t out_row, uint64_t out_run) {
  const uint64_t rows = shape[0];
  const uint64_t run_length = shape.back();
  const std::span<const uint64_t> middle = shape.subspan(1, shape.size() - 2);
  uint64_t stride = 1;  // S: between the columns of a run, and the number of runs
  for (const uint64_t d : middle) stride *= d;  // no overflow: the caller checked the total
  const TransposeFn transpose = TransposeFor(size);
  std::vector<std::byte> scratch(ScratchBytes(size));
  // An odometer over the middle axes in C order gives each run's first column.
  // places[k]: the Fortran step of middle axis k, the product of the middle axes before it.
  std::vector<uint64_t> index(middle.size(), 0);
  std::vector<uint64_t> places(middle.size(), 1);
  for (size_t k = 1; k < middle.size(); ++k) places[k] = places[k - 1] * middle[k - 1];
  uint64_t first_column = 0;
  uint64_t rest = first_run;  // its digits, the last middle axis fastest
  for (size_t k = middle.size(); k-- > 0; rest /= middle[k]) {
    index[k] = rest % middle[k];
    first_column += index[k] * places[k];
  }
  for (uint64_t run = 0; run < run_count; ++run) {
    transpose(data.data() + (first_column * rows + first_row) * size, stride * rows * size,
              out + run * out_run, out_row, count, run_length, size, scratch.data());
    for (size_t k = middle.size(); k-- > 0;) {
      first_column += places[k];
      if (++index[k] < middle[k]) break;
      first_column -= places[k] * index[k];
      index[k] = 0;
    }
  }
}

}  // namespace stguard
