#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hand-made seed files of the fuzz targets into corpus/fuzz_<target>/.

    fuzz/make_seeds.py            (re)writes every seed this script owns

Seeds are small (each <= 4 KiB, but for fuzz_writer's regress_budget_wrap, whose point is
its size) and named by what they exercise. Files in those folders
that this script does not write are kept: regress_* files (minimized findings) and
content-hash names (inputs kept from fuzzing runs with -merge=1).

- fuzz_header:    corpus/valid and corpus/invalid copied, a valid file for every dtype,
                  and edge cases of the schema, sizes and tiling.
- fuzz_roundtrip: the valid files, every dtype, and valid files that are not canonical in
                  each way CompareToCanonical names (order, offsets, escapes, whitespace,
                  padding, empty metadata).
- fuzz_writer:    fixed pseudo-random bytes (FuzzedDataProvider input has no format).
- fuzz_index:     sharded-checkpoint index files, valid and each way invalid.
- fuzz_json_tokenizer: JSONTestSuite's test_parsing cases <= 4 KiB (from
                  ../shared/conformance/jsontestsuite when present; MIT, LICENSE copied),
                  plus nesting at and past the depth limit and safetensors headers.
Only the standard library is used.
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "corpus")
JSONTESTSUITE = os.path.join(ROOT, "..", "shared", "conformance", "jsontestsuite")
MAX_SEED = 4096

DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
    "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
    "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64,
    "I64": 64, "U64": 64,
}
DTYPE_ORDER = list(DTYPE_BITS)  # the reference enum order


def raw_file(header, data=b"", n=None):
    if isinstance(header, str):
        header = header.encode()
    return struct.pack("<Q", len(header) if n is None else n) + header + data


def pattern(n, seed=3):
    return bytes((i * 7 + seed) % 256 for i in range(n))


def entry(dtype, shape, begin, end):
    return '{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}' % (
        dtype, ",".join(map(str, shape)), begin, end)


def canonical(tensors, metadata=None):
    """tensors: (name, dtype, shape, data). Canonical layout and compact padded header."""
    order = sorted(tensors, key=lambda t: (-DTYPE_ORDER.index(t[1]), t[0].encode()))
    parts, data = [], b""
    if metadata:
        items = ",".join('"%s":"%s"' % kv for kv in sorted(metadata.items()))
        parts.append('"__metadata__":{%s}' % items)
    for name, dtype, shape, payload in order:
        parts.append('"%s":%s' % (name, entry(dtype, shape, len(data), len(data) + len(payload))))
        data += payload
    header = ("{" + ",".join(parts) + "}").encode()
    header += b" " * (-len(header) % 8)
    return raw_file(header, data)


def write(folder, name, content, max_size=MAX_SEED):
    assert len(content) <= max_size, (folder, name, len(content))
    path = os.path.join(CORPUS, folder)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, name), "wb") as f:
        f.write(content)


def copy_folder(src, dst, suffix=""):
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if os.path.isfile(path) and os.path.getsize(path) <= MAX_SEED:
            with open(path, "rb") as f:
                write(dst, name + suffix, f.read())


def every_dtype():
    """One canonical single-tensor file per dtype, shape [2,2] (whole bytes for F4, F6)."""
    seeds = {}
    for dtype, bits in DTYPE_BITS.items():
        seeds["dtype_%s.safetensors" % dtype.lower()] = canonical(
            [("t", dtype, [2, 2], pattern(4 * bits // 8))])
    return seeds


def valid_edge_cases():
    u8 = entry("U8", [1], 0, 1)
    return {
        # Tiling: zero-size tensors at 0, between, at the end; a scalar; a zero dim.
        "valid_zero_size_everywhere.safetensors": raw_file(
            '{"z0":%s,"a":%s,"z1":%s,"b":%s,"z2":%s}' % (
                entry("F32", [0], 0, 0), entry("U8", [2], 0, 2), entry("I64", [3, 0], 2, 2),
                entry("U8", [1], 2, 3), entry("BOOL", [0], 3, 3)), b"abc"),
        "valid_zero_first_running_product.safetensors": raw_file(
            '{"z":%s}' % entry("F32", [0, 1099511627776, 1099511627776], 0, 0)),
        "valid_scalar_and_rank5.safetensors": raw_file(
            '{"s":%s,"r":%s}' % (entry("F16", [], 0, 2), entry("U8", [1, 2, 1, 2, 1], 2, 6)),
            b"sSrrrr"),
        "valid_sub_byte.safetensors": raw_file(
            '{"f4":%s,"f6":%s}' % (entry("F4", [2], 0, 1), entry("F6_E3M2", [4], 1, 4)), b"abcd"),
        # Strings: escapes in names, field names and dtype values; every escape kind.
        "valid_escaped_fields.safetensors": raw_file(
            '{"w":{"\\u0064type":"F\\u0033\\u0032","sha\\u0070e":[1],"data_\\u006ffsets":[0,4]}}',
            b"abcd"),
        "valid_every_escape_in_name.safetensors": raw_file(
            '{"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u00e9\\ud83d\\ude00\\uDBFF\\uDFFF":%s}' % u8,
            b"x"),
        "valid_raw_utf8_name.safetensors": raw_file(
            ('{"\u00e9\u4e2d\U0001F600\U0010FFFF\u007f":%s}' % u8).encode(), b"x"),
        "valid_metadata_middle.safetensors": raw_file(
            '{"a":%s,"__metadata__":{"k":"v","\\u006b2":"\\n"},"b":%s}' % (
                u8, entry("U8", [1], 1, 2)), b"xy"),
        "valid_max_offsets_empty.safetensors": raw_file(
            '{"e":%s}' % entry("U8", [0], 0, 0)),
        "valid_whitespace_everywhere.safetensors": raw_file(
            ' \t\r\n{ "a" : { "dtype" : "U8" , "shape" : [ 1 ] , "data_offsets" : [ 0 , 1 ] } ,'
            ' "__metadata__" : { "k" : "v" } } \n\t\r ', b"x"),
        "valid_tie_names_in_order.safetensors": raw_file(
            '{"a":%s,"b":%s}' % (entry("U8", [0], 0, 0), entry("U8", [0], 0, 0))),
    }


def invalid_edge_cases():
    u8 = entry("U8", [1], 0, 1)
    return {
        "invalid_offsets_u64_max.safetensors": raw_file(
            '{"a":%s}' % entry("U8", [1], 18446744073709551614, 18446744073709551615), b"x"),
        "invalid_offsets_above_u64.safetensors": raw_file(
            '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551616]}}', b"x"),
        "invalid_zero_size_inside_tensor.safetensors": raw_file(
            '{"a":%s,"z":%s}' % (entry("U8", [2], 0, 2), entry("U8", [0], 1, 1)), b"xy"),
        "invalid_zero_size_past_end.safetensors": raw_file(
            '{"a":%s,"z":%s}' % (u8, entry("U8", [0], 2, 2)), b"x"),
        "invalid_metadata_nested.safetensors": raw_file('{"__metadata__":{"k":{"x":"y"}}}'),
        "invalid_metadata_array.safetensors": raw_file('{"__metadata__":[]}'),
        "invalid_metadata_escaped_twice.safetensors": raw_file(
            '{"__metadata__":{},"__metad\\u0061ta__":{}}'),
        "invalid_metadata_key_escaped_twice.safetensors": raw_file(
            '{"__metadata__":{"k":"1","\\u006b":"2"}}'),
        "invalid_field_escaped_twice.safetensors": raw_file(
            '{"a":{"dtype":"U8","\\u0064type":"U8","shape":[1],"data_offsets":[0,1]}}', b"x"),
        "invalid_empty_entry.safetensors": raw_file('{"a":{}}'),
        "invalid_shape_minus_zero.safetensors": raw_file(
            '{"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,0]}}'),
        "invalid_shape_exponent.safetensors": raw_file(
            '{"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}}', b"x"),
        "invalid_shape_nested.safetensors": raw_file(
            '{"a":{"dtype":"U8","shape":[[1]],"data_offsets":[0,1]}}', b"x"),
        "invalid_offsets_strings.safetensors": raw_file(
            '{"a":{"dtype":"U8","shape":[1],"data_offsets":["0","1"]}}', b"x"),
        "invalid_dtype_escaped_unknown.safetensors": raw_file(
            '{"a":{"dtype":"F\\u00332","shape":[1],"data_offsets":[0,4]}}', b"abcd"),
        "invalid_bom.safetensors": raw_file(b'\xef\xbb\xbf{}'),
        "invalid_empty_header.safetensors": raw_file(b""),
        "invalid_whitespace_only.safetensors": raw_file(b"        "),
        "invalid_formfeed.safetensors": raw_file(b"{}\x0c"),
        "invalid_trailing_comma.safetensors": raw_file('{"a":%s,}' % u8, b"x"),
        "invalid_lone_low_surrogate.safetensors": raw_file('{"\\udc00":%s}' % u8, b"x"),
        "invalid_reversed_surrogates.safetensors": raw_file('{"\\ude00\\ud83d":%s}' % u8, b"x"),
        "invalid_deep_nesting.safetensors": raw_file(
            '{"__metadata__":' + "[" * 1100 + "]" * 1100 + "}"),
        "invalid_f6_misaligned.safetensors": raw_file(
            '{"a":%s}' % entry("F6_E2M3", [3], 0, 2), b"ab"),
        "invalid_overflow_bits_c64.safetensors": raw_file(
            '{"a":%s}' % entry("C64", [288230376151711744], 0, 0)),
        "invalid_header_len_u64_max.safetensors": raw_file(b"{}", n=2**64 - 1),
        "invalid_header_len_at_cap.safetensors": raw_file(b"{}", n=100_000_000),
    }


def not_canonical():
    """Valid files that differ from their canonical form in each way there is."""
    a = entry("F32", [1], 0, 4)
    return {
        "noncanon_order.safetensors": raw_file(
            '{"b":%s,"a":%s}' % (entry("F32", [1], 0, 4), entry("F32", [1], 4, 8)) + " " * 6,
            pattern(8)),
        "noncanon_dtype_order.safetensors": raw_file(
            '{"a":%s,"b":%s}' % (entry("U8", [1], 0, 1), entry("U64", [1], 1, 9)), pattern(9)),
        "noncanon_offsets.safetensors": raw_file(
            '{"a":%s,"b":%s}' % (entry("F32", [1], 4, 8), entry("F32", [1], 0, 4)), pattern(8)),
        "noncanon_field_order.safetensors": raw_file(
            '{"a":{"shape":[1],"dtype":"F32","data_offsets":[0,4]}}', pattern(4)),
        "noncanon_escapes.safetensors": raw_file('{"\\u0041\\/":%s}' % a, pattern(4)),
        "noncanon_whitespace.safetensors": raw_file('{ "a":%s}' % a, pattern(4)),
        "noncanon_unpadded.safetensors": raw_file('{"a":%s}' % a, pattern(4)),
        "noncanon_overpadded.safetensors": raw_file('{"a":%s}' % a + " " * 12, pattern(4)),
        "noncanon_tab_padding.safetensors": raw_file('{"a":%s}\t' % a, pattern(4)),
        "noncanon_empty_metadata.safetensors": raw_file('{"__metadata__":{},"a":%s}' % a,
                                                        pattern(4)),
        "noncanon_metadata_last.safetensors": raw_file(
            '{"a":%s,"__metadata__":{"b":"2","a":"1"}}' % a, pattern(4)),
        "noncanon_control_escape.safetensors": raw_file('{"\\u000a\\u0022":%s}' % a, pattern(4)),
        "canon_empty.safetensors": raw_file(b"{}      "),
        "canon_metadata_only.safetensors": raw_file('{"__metadata__":{"k":"v"}}' + " " * 6),
    }


def json_seeds():
    seeds = {}
    seeds["depth_1024_arrays.json"] = b"[" * 1024 + b"]" * 1024
    seeds["depth_1025_arrays.json"] = b"[" * 1025 + b"]" * 1025
    seeds["depth_1024_mixed.json"] = b'{"a":[' * 512 + b"]}" * 512
    seeds["every_escape.json"] = b'"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u00e9\\ud83d\\ude00\\uDBFF\\uDFFF"'
    seeds["utf8_boundaries.json"] = ('["\u0080\u07ff\u0800\ud7ff\ue000\uffff'
                                     '\U00010000\U0010FFFF"]').encode()
    seeds["numbers.json"] = b"[0,-0,1,-1,0.5,-0.5e-5,1E+10,18446744073709551615,1e999]"
    seeds["literals.json"] = b"[true,false,null]"
    seeds["object_nested.json"] = b'{"a":{"b":[1,{"c":null}],"d":""},"e":[]}'
    seeds["whitespace.json"] = b' \t\r\n[ 1 , { "a" : 2 } ] \n'
    seeds["long_string.json"] = b'"' + b"abcdefgh" * 100 + b'"'
    seeds["glue_number.json"] = b"[1.2.3]"
    seeds["glue_literal.json"] = b"[truex]"
    seeds["truncated_pair.json"] = b'"\\ud83d\\ude0'
    seeds["truncated_utf8.json"] = b'"\xf0\x9f\x98'
    seeds["bom_object.json"] = b"\xef\xbb\xbf{}"
    return seeds


def writer_seeds():
    """FuzzedDataProvider input is opaque: fixed pseudo-random bytes of several lengths,
    all-zero and all-one bytes. Inputs kept from fuzzing runs (content-hash names) do the
    rest."""
    import random
    rng = random.Random(20240501)
    seeds = {"zeros_64": bytes(64), "ones_64": b"\xff" * 64, "empty": b""}
    for length in (8, 32, 128, 512, 2048, 4096):
        for k in range(3):
            seeds["random_%d_%d" % (length, k)] = bytes(rng.randrange(256) for _ in range(length))
    return seeds


def writer_budget_wrap():
    """regress_budget_wrap: a FuzzedDataProvider input that spends fuzz_writer's 64 KiB
    data budget on one tensor (U8 [65530]), then asks a tensor whose size does not fit for
    the fallback length 16 > the 6 bytes left. Before the fix the budget wrapped below zero
    and a third tensor (U8 [3221225473]) was filled: 3 GiB. 65,606 bytes, more than
    max_len: libFuzzer never made it, AFL++ and honggfuzz could.

    FuzzedDataProvider takes byte strings from the front and integers from the back (the
    last byte first, most significant byte first), so the input is the string bytes, then
    the integer bytes reversed."""
    front = bytearray()
    integers = []  # in the order the harness consumes them

    def integer(value, size):
        integers.extend((value >> (8 * i)) & 0xFF for i in reversed(range(size)))

    def tensor(dim, fallback_len=None, data_len=0):
        integers.extend([2, 1, 0])  # MakeName -> MakeText, not raw bytes, length 0: ""
        integers.append(DTYPE_ORDER.index("U8"))
        integers.append(1)          # rank 1
        integers.append(1)          # MakeDim: a full 64-bit value
        integer(dim, 8)
        integers.append(5)          # skew: the exact size
        if fallback_len is not None:
            integers.append(fallback_len)
        front.extend(b"A" * data_len)
        integers.append(0x42)       # fill byte
        integers.append(0)          # Source::kSpan
        integer(0, 2)               # chunk

    integers.append(3)              # three tensors
    tensor(65530, data_len=65530)
    tensor(100, fallback_len=16, data_len=16)
    tensor(3221225473)
    integers.append(0)              # no metadata
    return bytes(front) + bytes(reversed(integers))


def index_seeds():
    """Sharded-checkpoint index files (model.safetensors.index.json), valid and not."""
    shard1 = "model-00001-of-00002.safetensors"
    shard2 = "model-00002-of-00002.safetensors"
    wm = '{"a.weight":"%s","b.weight":"%s","c":"%s"}' % (shard1, shard2, shard1)
    return {
        "valid_typical.json": '{"metadata":{"total_size":1234},"weight_map":%s}' % wm,
        "valid_pretty.json": '{\n  "metadata": {\n    "total_size": 0\n  },\n'
                             '  "weight_map": {\n    "w": "%s"\n  }\n}\n' % shard1,
        "valid_no_metadata.json": '{"weight_map":%s}' % wm,
        "valid_empty.json": '{"weight_map":{}}',
        "valid_weight_map_first.json": '{"weight_map":%s,"metadata":{}}' % wm,
        "valid_metadata_any_values.json":
            '{"metadata":{"total_parameters":7,"format":"pt","x":[1,{"y":null}],'
            '"total_size":18446744073709551615},"weight_map":%s}' % wm,
        "valid_escaped.json": '{"weight_\\u006dap":{"\\u00e9\\n":"\\/s.safetensors"},'
                              '"met\\u0061data":{"total_\\u0073ize":1}}',
        "invalid_duplicate_tensor.json": '{"weight_map":{"a":"%s","a":"%s"}}' % (shard1, shard2),
        "invalid_duplicate_escaped.json": '{"weight_map":{"a":"s","\\u0061":"s"}}',
        "invalid_duplicate_nested.json": '{"metadata":{"x":{"k":1,"k":2}},"weight_map":{}}',
        "invalid_duplicate_top.json": '{"weight_map":{},"weight_map":{}}',
        "invalid_no_weight_map.json": '{"metadata":{"total_size":1}}',
        "invalid_extra_key.json": '{"weight_map":{},"extra":1}',
        "invalid_total_size_float.json": '{"metadata":{"total_size":1.0},"weight_map":{}}',
        "invalid_total_size_negative.json": '{"metadata":{"total_size":-1},"weight_map":{}}',
        "invalid_total_size_exp.json": '{"metadata":{"total_size":1e3},"weight_map":{}}',
        "invalid_total_size_overflow.json":
            '{"metadata":{"total_size":18446744073709551616},"weight_map":{}}',
        "invalid_total_size_string.json": '{"metadata":{"total_size":"1"},"weight_map":{}}',
        "invalid_shard_not_string.json": '{"weight_map":{"a":1}}',
        "invalid_weight_map_array.json": '{"weight_map":[]}',
        "invalid_metadata_null.json": '{"metadata":null,"weight_map":{}}',
        "invalid_top_array.json": '[{"weight_map":{}}]',
        "invalid_trailing.json": '{"weight_map":{}} x',
    }


def main():
    # fuzz_header: the checked-in conformance files, every dtype, and edge cases.
    copy_folder(os.path.join(CORPUS, "valid"), "fuzz_header")
    copy_folder(os.path.join(CORPUS, "invalid"), "fuzz_header")
    for name, content in {**every_dtype(), **valid_edge_cases(), **invalid_edge_cases(),
                          **not_canonical()}.items():
        write("fuzz_header", name, content)
    # fuzz_roundtrip: valid files only (the target does nothing else with the rest).
    copy_folder(os.path.join(CORPUS, "valid"), "fuzz_roundtrip")
    for name, content in {**every_dtype(), **valid_edge_cases(), **not_canonical()}.items():
        write("fuzz_roundtrip", name, content)
    with open(os.path.join(CORPUS, "sample.safetensors"), "rb") as f:
        write("fuzz_roundtrip", "sample.safetensors", f.read())
    # fuzz_writer: opaque bytes for FuzzedDataProvider.
    for name, content in writer_seeds().items():
        write("fuzz_writer", name, content)
    write("fuzz_writer", "regress_budget_wrap", writer_budget_wrap(), max_size=70000)
    # fuzz_index: index files.
    for name, content in index_seeds().items():
        write("fuzz_index", name, content.encode())
    # fuzz_json_tokenizer: JSONTestSuite, safetensors headers, and our own cases.
    parsing = os.path.join(JSONTESTSUITE, "test_parsing")
    if os.path.isdir(parsing):
        copy_folder(parsing, "fuzz_json_tokenizer")
        shutil.copyfile(os.path.join(JSONTESTSUITE, "LICENSE"),
                        os.path.join(CORPUS, "fuzz_json_tokenizer", "LICENSE.JSONTestSuite"))
    for name, content in json_seeds().items():
        write("fuzz_json_tokenizer", name, content)
    for name, content in {**every_dtype(), **valid_edge_cases()}.items():
        n = struct.unpack("<Q", content[:8])[0]
        write("fuzz_json_tokenizer", "header_" + name.replace(".safetensors", ".json"),
              content[8:8 + n])


if __name__ == "__main__":
    main()
