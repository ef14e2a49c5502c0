// SPDX-License-Identifier: Apache-2.0
// stguard/file_verdict.h: one verdict for a pickle-bearing file, in one vocabulary shared
// by `scan`, `check` and their JSON.
//
// VERDICTS
// - clean: the static scan read the whole pickle and it names nothing outside the
//   allowlist; loading it runs no code of the file's choosing. (A bare pickle read to its
//   STOP, with nothing after it, is clean though it holds no tensor data, and does not
//   convert. Bytes after a bare pickle's STOP make it cannot-prove-safe: a loader calling
//   pickle.load again would run them.)
// - needs-key: as clean, but the tensors sit under a key (a training checkpoint's
//   "state_dict"): `--key` selects them; PickleFileReport::key_paths lists what was found
//   (none for a list of state dicts: safe to load, but conversion needs a state dict).
// - names-code: the pickle names a global, opcode or call outside the allowlist: loading
//   it runs code the file chose. The reason says which, at which byte.
// - cannot-prove-safe: the scan could not read the file to its end (a format stguard does
//   not read, such as a tar or a compressed ZIP record; a malformed container or pickle;
//   a checkpoint whose tensors or storages do not hold together). Loaders may still run
//   it, so it is treated as unsafe: the reason says what stopped the scan.
// Each word is one outcome everywhere: clean and needs-key are safe to load (exit 0, the C
// API's and Python's verdict valid); names-code and cannot-prove-safe are not (exit 1,
// refused), and a folder holding such a file is refused (VerdictFailsFolder). Whether the
// file converts as it is is separate: PickleFileReport::reason is ok exactly then.
#ifndef STGUARD_FILE_VERDICT_H_
#define STGUARD_FILE_VERDICT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/mapped_file.h"
#include "stguard/sniff.h"
#include "stguard/torch_checkpoint.h"

namespace stguard {

enum class FileVerdict : uint8_t { kClean, kNeedsKey, kNamesCode, kCannotProveSafe };

// FileVerdictName returns "clean", "needs-key", "names-code" or "cannot-prove-safe".
STGUARD_API std::string_view FileVerdictName(FileVerdict verdict);

// VerdictFailsFolder says whether a file with this verdict makes its folder invalid:
// names-code and cannot-prove-safe do.
STGUARD_API bool VerdictFailsFolder(FileVerdict verdict);

// kMaxKeyPaths bounds the key paths a needs-key report lists, and kMaxKeyPathDepth how
// many levels under the root are searched for a state dict.
inline constexpr size_t kMaxKeyPaths = 16;
inline constexpr size_t kMaxKeyPathDepth = 3;

// PickleFileReport is the verdict on one pickle-bearing file and what it rests on.
struct PickleFileReport {
  Format format = Format::kUnknown;  // as SniffFormat saw it
  FileVerdict verdict = FileVerdict::kCannotProveSafe;
  // reason: ok for a clean file that converts; otherwise the error that decided the
  // verdict (for a clean bare pickle, kRawPickle; for needs-key, kNotAStateDict).
  Error reason;
  // needs-key: each path of keys from the root to a mapping of names to tensors, in the
  // pickle's order, at most kMaxKeyPaths of them (give them as --key K1 --key K2).
  std::vector<std::vector<std::string>> key_paths;
  TorchScanReport scan;  // the static scan's report (globals, tensors, storages)
};

// JudgePickleBytes / JudgePickleFile scan a file statically (nothing runs) and decide its
// verdict; `options` selects the state dict as for TorchCheckpoint. The file is sniffed
// first (stguard/sniff.h), so protocol 0 and 1 pickles and tars are judged too. A file
// that cannot be read at all gives kIoError / kNotARegularFile as the reason (verdict
// cannot-prove-safe): callers report those as I/O errors, not verdicts.
STGUARD_API PickleFileReport JudgePickleBytes(std::span<const std::byte> bytes,
                                              const TorchOptions& options = {});
STGUARD_API PickleFileReport JudgePickleFile(const std::string& path,
                                             const TorchOptions& options = {});
// JudgePickleMapped is JudgePickleFile over a file the caller mapped (to sniff it first
// from the same mapping: the file is mapped once).
STGUARD_API PickleFileReport JudgePickleMapped(const MappedFile& file,
                                               const TorchOptions& options = {});

// DescribeVerdict says in one sentence what the verdict means for this file and what to
// do ("names code: PickleGlobalRefused at byte 57: ..."; "needs --key: the tensors sit
// under a key: --key state_dict"). Printed by `scan` and `check`.
STGUARD_API std::string DescribeVerdict(const PickleFileReport& report);

// KeyPathText returns a key path as command-line options: "--key module --key model".
STGUARD_API std::string KeyPathText(const std::vector<std::string>& path);

// DecidePickleVerdict is the one rule mapping a scan's outcome to a verdict: the error
// code, and for kPickleOpcodeRefused the refused opcode's byte (`opcode`, 0 if unknown):
// an opcode that calls out (INST, OBJ, NEWOBJ, EXT) names code, a text-mode one does not.
STGUARD_API FileVerdict DecidePickleVerdict(const Error& scan_error, uint8_t opcode);

}  // namespace stguard

#endif  // STGUARD_FILE_VERDICT_H_
