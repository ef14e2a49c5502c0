// SPDX-License-Identifier: Apache-2.0
// The program of the C++ consumers (consumers/find_package, consumers/add_subdirectory):
// they differ in how they reach stguard, not in what they run. Opens the checkpoint named
// on the command line and prints the linked library's version and the tensor count, the
// lines run.sh compares with each consumer's `expect` file.
#include <cstdio>

#include "stguard/reader.h"
#include "stguard/version.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  // The header this was compiled with and the library it runs with must agree.
  if (stguard_version_number() != STGUARD_VERSION_NUMBER) return 3;
  const stguard::Result<stguard::Checkpoint> checkpoint = stguard::Checkpoint::Open(argv[1]);
  if (!checkpoint.ok()) {
    std::fprintf(stderr, "%s\n", checkpoint.error().ToString().c_str());
    return 1;
  }
  std::printf("stguard %s\ntensors: %zu\n", stguard::VersionString(), checkpoint->num_tensors());
  return 0;
}
