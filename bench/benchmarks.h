// SPDX-License-Identifier: Apache-2.0
// bench/benchmarks.h: the benchmark groups, registered in a fixed order by bench_main.cc.
//
// Names are "<group>/<implementation>/<input>", which bench/bench_table.py splits to build
// its table:
//   validate/{stguard,simdjson,nlohmann}/<layout>   header bytes/s; simdjson and nlohmann
//                                                   only parse, they validate nothing
//   open/stguard/{llama3_8b_16gb,llama3_8b_header_only}   Checkpoint::Open of a file
//   write/{stguard_file_vs_plain_fsync,stguard_sink_vs_plain}/writer_1gb
//                                                   paired runs; throughput_ratio counter
//   generate/{stguard_header,stguard_add_and_header}/gen_800k   header bytes/s
//   convert/<from>_to_<to>/16M                      dtype conversion, output bytes/s
#ifndef STGUARD_BENCH_BENCHMARKS_H_
#define STGUARD_BENCH_BENCHMARKS_H_

namespace stguard_bench {

void RegisterHeaderBenchmarks();
// RegisterWriterBenchmarks registers nothing when stguard/writer.h is absent.
void RegisterWriterBenchmarks();
void RegisterConvertBenchmarks();
// RegisterLintBenchmarks: lint_vs_check/{check,lint}/folder_30k (bench/lint_bench.cc).
void RegisterLintBenchmarks();

}  // namespace stguard_bench

#endif  // STGUARD_BENCH_BENCHMARKS_H_
