// SPDX-License-Identifier: Apache-2.0
// What `inspect --stats` (cmd_stats.cc) takes from `inspect` (cmd_inspect.cc).
#ifndef STGUARD_CLI_INSPECT_STATS_H_
#define STGUARD_CLI_INSPECT_STATS_H_

#include <optional>
#include <string>

#include "commands.h"
#include "stguard/formats.h"

namespace stguard::cli {

// RefuseInapplicable refuses an option that does not apply to what `path` is (--stats
// on a GGUF file) as a usage error: the usage on stderr and, with --json, the library's
// usage-error result (verdict error, InvalidArgument) on stdout, so that a reader of the
// JSON gets an envelope for every path. `sniffed` is what the check's sniff found (nullopt:
// sniff the file, or a folder). nullopt when every option applies.
std::optional<int> RefuseInapplicable(const CommandLine& line, const std::string& path,
                                      std::optional<Format> sniffed);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_INSPECT_STATS_H_
