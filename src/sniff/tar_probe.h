// SPDX-License-Identifier: Apache-2.0
// sniff/tar_probe.h: would torch.load read this file as a tar archive?
//
// torch.load on a real file at offset 0 (weights_only=False) first tries the oldest torch
// format: tarfile.open(fileobj=f, mode="r:") (plain, uncompressed tar), and only when that
// raises tarfile.TarError goes on to the legacy stream or the ZIP. A tar archive's members
// are then unpickled with plain pickle, which runs anything. So a file whose first block
// also passes tarfile's header test is read by torch as something stguard never looked
// at, whatever else it is: stguard refuses it.
//
// tarfile's test (CPython 3.11 Lib/tarfile.py, TarInfo.frombuf) on the first 512 bytes:
// a block of 512 NULs opens as an empty archive; otherwise the checksum field (bytes
// 148-155) is read as a number (tarfile.nti: base-256 when its first byte is 0x80 or
// 0xff, else octal text up to the first NUL, as Python's int(text.strip() or "0", 8)
// reads it) and must equal the sum of the block's bytes with the field counted as eight
// spaces, the bytes taken unsigned or signed (tarfile.calc_chksums). tarfile goes on to
// read the other number fields and gives up (torch then falls back) when one is not a
// number; stguard does not look at them and refuses on the checksum alone, which is
// stricter, never looser.
#ifndef STGUARD_SRC_SNIFF_TAR_PROBE_H_
#define STGUARD_SRC_SNIFF_TAR_PROBE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "stguard/error.h"

namespace stguard {

// kTarBlockLen is the size of a tar header block.
inline constexpr size_t kTarBlockLen = 512;

// ParseTarNumber reads a tar number field as tarfile.nti does, or returns nullopt where
// nti raises InvalidHeaderError.
std::optional<int64_t> ParseTarNumber(std::span<const std::byte> field);

// PassesTarHeaderTest returns whether the first kTarBlockLen bytes of `bytes` pass
// tarfile's first-header test (false for a file shorter than a block).
bool PassesTarHeaderTest(std::span<const std::byte> bytes);

// CheckNotTarShaped returns kTarAmbiguous (at offset 0) when PassesTarHeaderTest.
Error CheckNotTarShaped(std::span<const std::byte> bytes);

}  // namespace stguard

#endif  // STGUARD_SRC_SNIFF_TAR_PROBE_H_
