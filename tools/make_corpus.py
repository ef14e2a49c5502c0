#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hand-made files in corpus/: the sample checkpoint, valid edge cases, and
invalid files named <ExpectedErrorCode>__<what>.safetensors.

The files are committed; this script documents how each was made and regenerates them.
Only the standard library is used: headers are written as literal text so that every
byte (escapes, whitespace, key order) is exactly what the case needs.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "corpus")

DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
    "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
    "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64,
    "I64": 64, "U64": 64,
}
DTYPE_ORDER = list(DTYPE_BITS)  # the reference enum order


def raw_file(header: bytes, data: bytes = b"", n=None) -> bytes:
    """A file with `header` as given (no padding) and an explicit or true N."""
    return struct.pack("<Q", len(header) if n is None else n) + header + data


def canonical(tensors, metadata=None) -> bytes:
    """tensors: list of (name, dtype, shape, data bytes). Canonical layout and header."""
    order = sorted(tensors, key=lambda t: (-DTYPE_ORDER.index(t[1]), t[0].encode()))
    parts, data, offset = [], b"", 0
    if metadata:
        items = ",".join('"%s":"%s"' % (k, v) for k, v in sorted(metadata.items()))
        parts.append('"__metadata__":{%s}' % items)
    for name, dtype, shape, payload in order:
        parts.append('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}' % (
            name, dtype, ",".join(map(str, shape)), offset, offset + len(payload)))
        data += payload
        offset += len(payload)
    header = ("{" + ",".join(parts) + "}").encode()
    header += b" " * (-len(header) % 8)
    return raw_file(header, data)


def write(folder, name, content):
    with open(os.path.join(CORPUS, folder, name), "wb") as f:
        f.write(content)


def pattern(n):
    return bytes((i * 7 + 3) % 256 for i in range(n))


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def main():
    # The sample checkpoint of the README: a tiny Llama-like model, several dtypes.
    sample = canonical([
        ("model.embed_tokens.weight", "BF16", [8, 4], pattern(64)),
        ("model.layers.0.self_attn.q_proj.weight", "F16", [4, 4], pattern(32)),
        ("model.layers.0.mlp.up_proj.qweight", "U8", [4, 2], pattern(8)),
        ("model.layers.0.mlp.up_proj.scales", "F16", [4, 1], pattern(8)),
        ("model.norm.weight", "F32", [4], f32(1, 1, 1, 1)),
        ("model.position_ids", "I64", [4], struct.pack("<4q", 0, 1, 2, 3)),
        ("model.rotary.scalar", "F32", [], f32(10000.0)),
    ], {"format": "tinyllm", "quant": "int4-g32-sym"})
    write("", "sample.safetensors", sample)

    # Valid edge cases.
    write("valid", "worked_example.safetensors",
          canonical([("w", "F32", [2, 2], f32(1, 2, 3, 4))], {"format": "tinyllm"}))
    write("valid", "empty_object_unpadded.safetensors", raw_file(b"{}"))
    write("valid", "empty_object_padded.safetensors", raw_file(b"{}      "))
    write("valid", "whitespace_around_object.safetensors",
          raw_file(b' \t\r\n{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} \n', b"x"))
    write("valid", "empty_metadata_object.safetensors", raw_file(b'{"__metadata__":{}}'))
    write("valid", "scalar.safetensors", canonical([("s", "F64", [], pattern(8))]))
    write("valid", "zero_size_shares_offset.safetensors", raw_file(
        b'{"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        b'"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}', pattern(4)))
    write("valid", "zero_first_running_product.safetensors", raw_file(
        b'{"z":{"dtype":"F32","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}}'))
    write("valid", "every_dtype.safetensors", canonical([
        ("t_" + d.lower(), d, [8], pattern(DTYPE_BITS[d])) for d in DTYPE_ORDER]))
    write("valid", "escaped_and_unicode_names.safetensors", raw_file(
        '{"\\u00e9\\"\\\\\\n":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"\u00e9\u4e2d\U0001F600":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'
        .encode(), b"ab"))
    write("valid", "fields_in_any_order.safetensors", raw_file(
        b'{"w":{"data_offsets":[0,2],"shape":[1],"dtype":"BF16"}}', b"ab"))

    one = b'{"dtype":"U8","shape":[1],"data_offsets":[0,1]}'
    # Invalid: the expected error code is the file name's prefix.
    cases = {
        "HeaderTooSmall__empty": b"",
        "HeaderTooSmall__seven_bytes": b"\x02\x00\x00\x00\x00\x00\x00",
        "HeaderTooLarge__n_above_cap": raw_file(b"{}", n=100_000_001),
        "InvalidHeaderLength__n_past_end": raw_file(b"{}", n=3),
        "InvalidUtf8__overlong_name": raw_file(b'{"\xc0\xaf":' + one + b"}", b"x"),
        "InvalidUtf8__surrogate_in_name": raw_file(b'{"\xed\xa0\x80":' + one + b"}", b"x"),
        "ControlCharacter__raw_newline_in_name": raw_file(b'{"a\nb":' + one + b"}", b"x"),
        "InvalidEscape__backslash_x": raw_file(b'{"a\\x41":' + one + b"}", b"x"),
        "InvalidUnicodeEscape__short_hex": raw_file(b'{"\\u00G1":' + one + b"}", b"x"),
        "LoneSurrogate__high_alone": raw_file(b'{"\\ud800":' + one + b"}", b"x"),
        "InvalidNumber__leading_zero": raw_file(
            b'{"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}}', b"x"),
        "InvalidLiteral__nul_word": raw_file(b'{"__metadata__":nul}'),
        "UnexpectedToken__missing_comma": raw_file(
            b'{"a":{"dtype":"U8" "shape":[1],"data_offsets":[0,1]}}', b"x"),
        "UnexpectedEnd__truncated_header": raw_file(b'{"a":{"dtype":"U8","sha'),
        "TrailingContent__nul_padding": raw_file(b"{}\x00\x00\x00\x00\x00\x00"),
        "TrailingContent__second_object": raw_file(b"{}{}"),
        "HeaderNotObject__array": raw_file(b"[]"),
        "DuplicateKey__tensor_twice": raw_file(
            b'{"a":' + one + b',"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"xy"),
        "DuplicateKey__escaped_name": raw_file(
            b'{"w":' + one + b',"\\u0077":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}',
            b"xy"),
        "DuplicateKey__metadata_twice": raw_file(b'{"__metadata__":{},"__metadata__":{}}'),
        "DuplicateKey__escaped_metadata_name": raw_file(
            b'{"__metadata__":{},"\\u005f_metadata__":{}}'),
        "DuplicateKey__metadata_key": raw_file(b'{"__metadata__":{"k":"1","k":"2"}}'),
        "DuplicateKey__field_twice": raw_file(
            b'{"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x"),
        "MetadataNotObject__null": raw_file(b'{"__metadata__":null}'),
        "MetadataNotObject__string": raw_file(b'{"__metadata__":"x"}'),
        "MetadataValueNotString__number": raw_file(b'{"__metadata__":{"k":1}}'),
        "MetadataValueNotString__null": raw_file(b'{"__metadata__":{"k":null}}'),
        "TensorNotObject__array_form": raw_file(b'{"a":["U8",[1],[0,1]]}', b"x"),
        "UnknownField__extra_field": raw_file(
            b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":0}}', b"x"),
        "MissingField__no_dtype": raw_file(b'{"a":{"shape":[1],"data_offsets":[0,1]}}', b"x"),
        "MissingField__no_data_offsets": raw_file(b'{"a":{"dtype":"U8","shape":[1]}}', b"x"),
        "InvalidDtype__lowercase": raw_file(
            b'{"a":{"dtype":"u8","shape":[1],"data_offsets":[0,1]}}', b"x"),
        "InvalidDtype__number": raw_file(
            b'{"a":{"dtype":8,"shape":[1],"data_offsets":[0,1]}}', b"x"),
        "InvalidShape__negative": raw_file(
            b'{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}', b"x"),
        "InvalidShape__float": raw_file(
            b'{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}', b"x"),
        "InvalidShape__above_u64": raw_file(
            b'{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}', b"x"),
        "InvalidShape__not_array": raw_file(
            b'{"a":{"dtype":"U8","shape":1,"data_offsets":[0,1]}}', b"x"),
        "InvalidDataOffsets__three_entries": raw_file(
            b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]}}', b"x"),
        "InvalidDataOffsets__one_entry": raw_file(
            b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[1]}}', b"x"),
        "ValidationOverflow__running_product": raw_file(
            b'{"a":{"dtype":"U8","shape":[1099511627776,1099511627776,0],'
            b'"data_offsets":[0,0]}}'),
        "ValidationOverflow__bits": raw_file(
            b'{"a":{"dtype":"U64","shape":[2305843009213693952],"data_offsets":[0,0]}}'),
        "MisalignedSlice__f4_odd_count": raw_file(
            b'{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}', b"x"),
        "TensorInvalidInfo__size_mismatch": raw_file(
            b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', b"xxxx"),
        "InvalidOffset__gap": raw_file(
            b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"xy"),
        "InvalidOffset__overlap": raw_file(
            b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
            b'"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"xy"),
        "InvalidOffset__end_before_begin": raw_file(
            b'{"a":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}', b"x"),
        "MetadataIncompleteBuffer__trailing_bytes": raw_file(b'{"a":' + one + b"}", b"xy"),
        "MetadataIncompleteBuffer__short_data": raw_file(
            b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"x"),
        "MetadataIncompleteBuffer__bytes_but_no_tensors": raw_file(b"{}", b"x"),
    }
    for name, content in cases.items():
        write("invalid", name + ".safetensors", content)


if __name__ == "__main__":
    main()
