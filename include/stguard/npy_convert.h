// SPDX-License-Identifier: Apache-2.0
// stguard/npy_convert.h: a .npy array written as a safetensors file (the conversion layer
// over stguard/npy.h and the crash-safe writer).
#ifndef STGUARD_NPY_CONVERT_H_
#define STGUARD_NPY_CONVERT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// NpyArrayToSafetensors writes the array in `npy_path` as a one-tensor safetensors file at
// `out_path`, named `tensor_name`, through the crash-safe writer: big-endian data
// byte-swapped, Fortran order rewritten in C order, 0-d as shape []. A type safetensors
// cannot hold (c16, S, U, M, m) is kInvalidDtype naming the array, and nothing is written.
// With `dtype` (F32, F16 or BF16), an F64, F32, F16 or BF16 array is converted to it as it
// streams, as `convert --dtype` does for safetensors; other arrays are copied unchanged.
// `out_path` must not be `npy_path` (CheckOutputIsNotInput, stguard/writer.h). `progress`,
// when set, is called with the bytes of each write, as Writer::set_progress's is. When the
// file is written and `num_converted` is given, *num_converted is how many tensors changed
// dtype (0 or 1 here: an array's own dtype, '<f4' as F32, is not a change).
[[nodiscard]] STGUARD_API Error NpyArrayToSafetensors(
    const std::string& npy_path, const std::string& out_path, const std::string& tensor_name,
    std::optional<Dtype> dtype = std::nullopt,
    const std::function<void(uint64_t bytes)>& progress = {}, size_t* num_converted = nullptr);

// NpzToSafetensors writes every array of the .npz at `npz_path` as one safetensors file at
// `out_path`, one tensor per member named by its key, converted as NpyArrayToSafetensors
// converts one array (`dtype` too). Every member's .npy header is validated before
// anything is written (a type safetensors cannot hold is kInvalidDtype naming it); each
// deflated member is inflated once, its DEFLATE stream and CRC-32 checked as it streams
// into the crash-safe writer, so an archive that fails any rule of stguard/npz.h leaves
// no output. Memory: fixed buffers (the inflate window, a 1 MiB chunk, a Fortran-order
// reordering band of at most 64 MiB); a deflated Fortran-order member is gathered in a
// buffer of at most 64 MiB (with `dtype`: its converted copy included) and placed into
// the mapped temporary output, its pages released every 16 MiB (about 80 MiB whatever
// its size), or, where the output cannot be mapped (a file system without fallocate),
// inflated whole first (at most 1,032 times its compressed size). When the file is
// written and `num_tensors` is given, *num_tensors is how many tensors it holds.
// `out_path`, `progress` and `num_converted` are as for NpyArrayToSafetensors.
[[nodiscard]] STGUARD_API Error NpzToSafetensors(
    const std::string& npz_path, const std::string& out_path,
    std::optional<Dtype> dtype = std::nullopt, size_t* num_tensors = nullptr,
    const std::function<void(uint64_t bytes)>& progress = {}, size_t* num_converted = nullptr);

}  // namespace stguard

#endif  // STGUARD_NPY_CONVERT_H_
