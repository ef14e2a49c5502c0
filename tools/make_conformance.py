#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes conformance/: small checkpoint files, each with an expected verdict and a rule.

  make_conformance.py [OUTDIR]      (default: conformance/ beside this checkout's tools/)
  make_conformance.py --check       exit 1 unless conformance/ is exactly what this writes

conformance/<format>/y_<name>.<ext>   every reader must accept it
conformance/<format>/n_<name>.<ext>   every reader must refuse it
conformance/<format>/i_<name>.<ext>   the format allows both; stguard's strict choice is noted
conformance/<format>/cases.json       one entry per case (fields: conformance/README.md)

The output is reproducible byte for byte: every header, pickle and ZIP is written here byte by
byte (ZIPs with a fixed 1980-01-01 timestamp, only stored members; the one deflated stream is a
literal), and nothing depends on the clock, the locale or the installed numpy or torch. The
only inputs outside this file are the checked-in torch checkpoints of corpus/torch (made once
by tests/torch/make_fixtures.py with Debian's torch 1.13) and corpus/gguf's hand-made files,
which are copied. PyTorch files whose payload would run code are NOT written: cases.json
describes them ("runtime") and tools/conformance.py builds them, with a harmless marker, in a
temporary folder when it runs.
"""
import bz2
import json
import os
import re
import shutil
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
CHECK = sys.argv[1:] == ["--check"]
OUT = sys.argv[1] if len(sys.argv) > 1 and not CHECK else os.path.join(ROOT, "conformance")
sys.path.insert(0, HERE)

import make_corpus  # noqa: E402  (safetensors corpus: header writer and the invalid cases)

FORMATS = ("safetensors", "gguf", "npy", "npz", "pytorch")
EXTENSION = {"safetensors": "safetensors", "gguf": "gguf", "npy": "npy", "npz": "npz",
             "pytorch": "pt"}
EXPECTED = {"y": "accept", "n": "reject", "i": "reject"}
CASES = {f: [] for f in FORMATS}
FILES = {f: {} for f in FORMATS}


def kebab(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def add(fmt, kind, name, data, rule, source, code=None, reference=None, runtime=None,
        expected=None):
    """One case. kind: y, n or i. code: the ErrorCode stguard gives (documentation; the
    runner compares verdicts only). reference: for i_ cases, what the reference loader does."""
    assert kind in "yni" and (kind != "i" or reference), name
    file = "%s_%s.%s" % (kind, name, EXTENSION[fmt])
    assert file not in FILES[fmt] and all(c["file"] != file for c in CASES[fmt]), file
    entry = {"file": file, "expected": expected or EXPECTED[kind], "rule": rule, "source": source}
    if code:
        entry["stguard_code"] = code
    if reference:
        entry["reference"] = reference
    if runtime:
        entry["runtime"] = runtime
    else:
        FILES[fmt][file] = data
    CASES[fmt].append(entry)


# ==================================================================== safetensors
ST_SPEC = "safetensors format (README, 'Format'): 8-byte little-endian N, N bytes of JSON, data"
ST_REF = "safetensors 0.4 (Rust) deserialize / safe_open"
ST_AREA = {
    "HeaderTooSmall": "prefix", "HeaderTooLarge": "prefix", "InvalidHeaderLength": "prefix",
    "InvalidUtf8": "json", "ControlCharacter": "json", "InvalidEscape": "json",
    "InvalidUnicodeEscape": "json", "LoneSurrogate": "json", "InvalidNumber": "json",
    "InvalidLiteral": "json", "UnexpectedToken": "json", "UnexpectedEnd": "json",
    "TrailingContent": "json",
    "InvalidOffset": "data", "MetadataIncompleteBuffer": "data",
    "TensorInvalidInfo": "data", "MisalignedSlice": "data",
}
# Rules where the reference accepts and stguard refuses (SECURITY.md, "Strictness policy").
ST_LENIENT = {
    "DuplicateKey__tensor_twice": "keeps the last entry",
    "DuplicateKey__escaped_name": "keeps the last entry",
    "DuplicateKey__metadata_twice": "keeps the last __metadata__",
    "DuplicateKey__escaped_metadata_name": "keeps the last __metadata__",
    "DuplicateKey__metadata_key": "keeps the last value",
    "MetadataNotObject__null": "treats __metadata__: null as absent",
    "UnknownField__extra_field": "ignores unknown fields",
    "TensorNotObject__array_form": "accepts the array form",
}


def st_rule(code):
    return "st.%s.%s" % (ST_AREA.get(code, "header"), kebab(code))


def st(kind, name, data, code, source=ST_SPEC, reference=None):
    add("safetensors", kind, name, data, st_rule(code) if code else "st.valid", source, code,
        reference)


def st_one(entry, data=b"x"):
    return make_corpus.raw_file(b'{"a":' + entry + b"}", data)


def st_meta(value: bytes):
    """A header whose __metadata__ value is `value` (raw JSON text) and no tensors."""
    return make_corpus.raw_file(b'{"__metadata__":{"k":' + value + b"}}")


def make_safetensors():
    rf, canonical, pattern = make_corpus.raw_file, make_corpus.canonical, make_corpus.pattern
    # The valid corpus, rebuilt here as make_corpus.py builds it.
    st("y", "worked_example", canonical([("w", "F32", [2, 2], make_corpus.f32(1, 2, 3, 4))],
                                         {"format": "tinyllm"}), None)
    st("y", "empty_object_unpadded", rf(b"{}"), None)
    st("y", "empty_object_padded", rf(b"{}      "), None)
    st("y", "whitespace_around_object", rf(
        b' \t\r\n{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} \n', b"x"), None)
    st("y", "empty_metadata_object", rf(b'{"__metadata__":{}}'), None)
    st("y", "scalar", canonical([("s", "F64", [], pattern(8))]), None)
    st("y", "zero_size_shares_offset", rf(
        b'{"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        b'"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}', pattern(4)), None)
    st("y", "zero_first_running_product", rf(
        b'{"z":{"dtype":"F32","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}}'),
        None)
    st("y", "every_dtype", canonical([("t_" + d.lower(), d, [8], pattern(make_corpus.DTYPE_BITS[d]))
                                      for d in make_corpus.DTYPE_ORDER]), None)
    st("y", "fields_in_any_order", rf(
        b'{"w":{"data_offsets":[0,2],"shape":[1],"dtype":"BF16"}}', b"ab"), None)
    st("y", "escaped_and_unicode_names", rf(
        '{"\\u00e9\\"\\\\\\n":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"\u00e9\u4e2d\U0001F600":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'.encode(),
        b"ab"), None)
    # The invalid corpus: make_corpus.py's table, whose keys are CODE__what.
    for key, data in invalid_safetensors().items():
        code, what = key.split("__")
        if key in ST_LENIENT:
            st("i", kebab(code).replace("-", "_") + "__" + what, data, code,
               "SECURITY.md, Strictness policy", ST_REF + ": " + ST_LENIENT[key])
        else:
            st("n", kebab(code).replace("-", "_") + "__" + what, data, code)
    # Every dtype: a 2x4 tensor, its size off by one byte, and its name in lower case.
    for dtype, bits in make_corpus.DTYPE_BITS.items():
        size = 8 * bits // 8
        entry = '{"dtype":"%s","shape":[2,4],"data_offsets":[0,%d]}'
        st("y", "dtype_%s_2x4" % dtype, st_one((entry % (dtype, size)).encode(), pattern(size)),
           None, "safetensors Dtype enum: " + dtype)
        st("n", "dtype_%s_size_plus_one" % dtype,
           st_one((entry % (dtype, size + 1)).encode(), pattern(size + 1)), "TensorInvalidInfo",
           "safetensors: data_offsets span = product(shape) * dtype size")
        if dtype != dtype.lower():
            st("n", "dtype_%s_lowercase" % dtype,
               st_one((entry % (dtype.lower(), size)).encode(), pattern(size)), "InvalidDtype",
               "safetensors Dtype enum: names are upper case")
    for name in ("F128", "Q4_0", "STR", "", "F32 ", "I4"):
        label = (name.strip() or "empty") + ("_space" if name.endswith(" ") else "")
        st("n", "dtype_unknown_" + label,
           st_one(b'{"dtype":"' + name.encode() + b'","shape":[1],"data_offsets":[0,1]}'),
           "InvalidDtype", "safetensors Dtype enum")
    make_safetensors_json()
    make_safetensors_numbers()


def invalid_safetensors():
    """make_corpus.py's invalid table, captured by running its main() against a dict."""
    captured = {}
    real_write = make_corpus.write
    make_corpus.write = lambda folder, name, content: captured.__setitem__(
        (folder, name), content)
    try:
        make_corpus.main()
    finally:
        make_corpus.write = real_write
    return {name[:-len(".safetensors")]: data for (folder, name), data in captured.items()
            if folder == "invalid"}


def make_safetensors_json():
    """RFC 8259 text rules, in a metadata value."""
    rfc = "RFC 8259 (the header is JSON)"
    for ch in range(0x20):
        st("n", "json_raw_control_%02x_in_string" % ch, st_meta(b'"a' + bytes([ch]) + b'b"'),
           "ControlCharacter", rfc + " section 7: control characters must be escaped")
    for esc in (b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t", b"\\u0041",
                b"\\u00e9", b"\\u4e2d", b"\\ud83d\\ude00", b"\\u001f", b"\\uFFFF"):
        label = esc.decode().replace("\\", "").replace('"', "quote").replace("/", "slash")
        st("y", "json_escape_" + label, st_meta(b'"' + esc + b'"'), None, rfc + " section 7")
    for esc, code in ((b"\\x41", "InvalidEscape"), (b"\\'", "InvalidEscape"),
                      (b"\\a", "InvalidEscape"), (b"\\U00000041", "InvalidEscape"),
                      (b"\\u12", "InvalidUnicodeEscape"), (b"\\u00G1", "InvalidUnicodeEscape"),
                      (b"\\ud800", "LoneSurrogate"), (b"\\udc00", "LoneSurrogate"),
                      (b"\\ud800\\u0041", "LoneSurrogate"), (b"\\udc00\\ud800", "LoneSurrogate")):
        label = re.sub(r"[^a-zA-Z0-9]", "", esc.decode())
        st("n", "json_escape_bad_" + label, st_meta(b'"' + esc + b'"'), code, rfc + " section 7")
    for label, text in (("two_byte", "\u00e9"), ("three_byte", "\u4e2d"),
                        ("four_byte", "\U0001F600"), ("noncharacter_fffe", "\ufffe"),
                        ("max_10ffff", "\U0010FFFF"), ("del_7f", "\x7f"), ("c1_0085", "\x85")):
        st("y", "utf8_" + label, st_meta(b'"' + text.encode() + b'"'), None,
           "RFC 3629 well-formed UTF-8")
    for label, raw in (("overlong_2", b"\xc0\xaf"), ("overlong_3", b"\xe0\x80\xaf"),
                       ("overlong_4", b"\xf0\x80\x80\xaf"), ("surrogate", b"\xed\xa0\x80"),
                       ("above_10ffff", b"\xf4\x90\x80\x80"), ("lone_continuation", b"\x80"),
                       ("truncated_2", b"\xc3"), ("truncated_3", b"\xe4\xb8"),
                       ("byte_fe", b"\xfe"), ("byte_ff", b"\xff"), ("latin1", b"\xe9t\xe9")):
        st("n", "utf8_bad_" + label, st_meta(b'"' + raw + b'"'), "InvalidUtf8",
           "RFC 3629 / RFC 8259 section 8.1: text must be UTF-8")
        st("n", "utf8_bad_name_" + label, st_one(b'{"dtype":"U8","shape":[1],"data_offsets":[0,1]}')
           .replace(b'{"a":', b'{"a' + raw + b'":'), "InvalidUtf8",
           "RFC 3629: tensor names are JSON strings")
    for label, value, code in (("true", b"true", "MetadataValueNotString"),
                               ("false", b"false", "MetadataValueNotString"),
                               ("null", b"null", "MetadataValueNotString"),
                               ("number", b"1", "MetadataValueNotString"),
                               ("object", b'{"a":"b"}', "MetadataValueNotString"),
                               ("array", b'["a"]', "MetadataValueNotString"),
                               ("single_quotes", b"'a'", "UnexpectedToken"),
                               ("bare_word", b"abc", "InvalidLiteral"),
                               ("truex", b"truex", "InvalidLiteral")):
        st("n", "metadata_value_" + label, st_meta(value), code,
           "safetensors: __metadata__ is a map of string to string")
    for label, header, code in (
            ("trailing_comma_object", b'{"__metadata__":{"k":"v",}}', "UnexpectedToken"),
            ("trailing_comma_top", b'{"__metadata__":{},}', "UnexpectedToken"),
            ("missing_colon", b'{"__metadata__" {}}', "UnexpectedToken"),
            ("unclosed", b'{"__metadata__":{}', "UnexpectedEnd"),
            ("comment", b'{/*c*/}', "UnexpectedToken"),
            ("form_feed_whitespace", b'{\x0c}', "UnexpectedToken"),
            ("nbsp_whitespace", b'{\xc2\xa0}', "UnexpectedToken"),
            ("bom", b'\xef\xbb\xbf{}', "UnexpectedToken"),
            ("nul_after_object", b'{}\x00', "TrailingContent"),
            ("string_top", b'"{}"', "HeaderNotObject"),
            ("number_top", b"1", "HeaderNotObject"),
            ("null_top", b"null", "HeaderNotObject"),
            ("empty_header", b"", "UnexpectedEnd"),
            ("spaces_only", b"        ", "UnexpectedEnd")):
        st("n", "json_" + label, make_corpus.raw_file(header), code, "RFC 8259 grammar")
    for label, header in (("tab", b'{\t"__metadata__"\t:\t{\t}\t}'),
                          ("newline", b'{\n"__metadata__"\n:\n{\n}\n}'),
                          ("crlf", b'{\r\n"__metadata__":{}\r\n}'),
                          ("padding_24_spaces", b"{}" + b" " * 22)):
        st("y", "json_whitespace_" + label, make_corpus.raw_file(header), None,
           "RFC 8259 section 2: insignificant whitespace")


def make_safetensors_numbers():
    spec = "safetensors: shape and data_offsets are arrays of unsigned integers"
    shape_form = '{"dtype":"U8","shape":[%s],"data_offsets":[0,1]}'
    for label, text, code in (("leading_zero", "01", "InvalidNumber"),
                              ("minus_zero", "-0", "InvalidShape"),
                              ("float", "1.0", "InvalidShape"), ("exponent", "1e0", "InvalidShape"),
                              ("plus", "+1", "InvalidNumber"), ("hex", "0x1", "InvalidNumber"),
                              ("negative", "-1", "InvalidShape"), ("string", '"1"', "InvalidShape"),
                              ("null", "null", "InvalidShape"),
                              ("above_u64", "18446744073709551616", "InvalidShape")):
        st("n", "shape_" + label, st_one((shape_form % text).encode()), code, spec)
    offsets_form = '{"dtype":"U8","shape":[1],"data_offsets":[%s]}'
    for label, text, code in (("float", "0.0,1", "InvalidDataOffsets"),
                              ("exponent", "0,1e0", "InvalidDataOffsets"),
                              ("minus_zero", "-0,1", "InvalidDataOffsets"),
                              ("negative", "-1,1", "InvalidDataOffsets"),
                              ("string", '"0",1', "InvalidDataOffsets"),
                              ("empty", "", "InvalidDataOffsets"),
                              ("above_u64", "0,18446744073709551616", "InvalidDataOffsets"),
                              ("past_end", "0,2", "TensorInvalidInfo")):
        st("n", "offsets_" + label, st_one((offsets_form % text).encode()), code, spec)
    for label, shape, size in (("4d", "1,2,1,2", 4), ("8d", "1,1,1,1,1,1,1,2", 2),
                               ("zero_last", "3,0", 0), ("zero_only", "0", 0)):
        entry = '{"dtype":"U8","shape":[%s],"data_offsets":[0,%d]}' % (shape, size)
        st("y", "shape_" + label, st_one(entry.encode(), b"x" * size), None, spec)
    # Header length prefix.
    prefix = "safetensors: N is an unsigned little-endian u64, the header's byte length"
    st("n", "prefix_n_zero", make_corpus.raw_file(b"", n=0), "UnexpectedEnd", prefix)
    st("n", "prefix_n_one_short", make_corpus.raw_file(b"{}", n=1), "UnexpectedEnd", prefix)
    st("n", "prefix_n_huge", make_corpus.raw_file(b"{}", n=2**64 - 1), "HeaderTooLarge", prefix)
    st("n", "prefix_n_big_endian", struct.pack(">Q", 2) + b"{}", "HeaderTooLarge", prefix)
    st("n", "prefix_only", struct.pack("<Q", 2), "InvalidHeaderLength", prefix)
    st("n", "prefix_one_byte", b"\x02", "HeaderTooSmall", prefix)


# ==================================================================== GGUF
GGUF_SPEC = "ggml docs/gguf.md"
GGML_REF = "ggml gguf_init_from_file (npm @node-llama-cpp 3.21.1)"
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
          BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}
TYPE_NAME = {U8: "uint8", I8: "int8", U16: "uint16", I16: "int16", U32: "uint32", I32: "int32",
             F32: "float32", BOOL: "bool", STRING: "string", ARRAY: "array", U64: "uint64",
             I64: "int64", F64: "float64"}
# ggml's tensor types: id -> (name, elements per block, bytes per block); src/gguf/ggml_types.cc.
GGML_TYPES = {
    0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
    6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36),
    10: ("q2_K", 256, 84), 11: ("q3_K", 256, 110), 12: ("q4_K", 256, 144),
    13: ("q5_K", 256, 176), 14: ("q6_K", 256, 210), 15: ("q8_K", 256, 292),
    16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74), 18: ("iq3_xxs", 256, 98),
    19: ("iq1_s", 256, 50), 20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110),
    22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136), 24: ("i8", 1, 1), 25: ("i16", 1, 2),
    26: ("i32", 1, 4), 27: ("i64", 1, 8), 28: ("f64", 1, 8), 29: ("iq1_m", 256, 56),
    30: ("bf16", 1, 2), 34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66),
    39: ("mxfp4", 32, 17), 40: ("nvfp4", 64, 36), 41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18),
}
# Types newer than the pinned npm ggml 3.21.1 (added to ggml after it).
GGML_NEWER = {40, 41, 42}


def g_str(s) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def g_value(vtype, value) -> bytes:
    if vtype == STRING:
        return g_str(value)
    if vtype == ARRAY:
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(g_value(etype, v) for v in items)
    return struct.pack(SCALAR[vtype], value)


def g_kv(key, vtype, value) -> bytes:
    return g_str(key) + struct.pack("<I", vtype) + g_value(vtype, value)


def gguf(kvs=(), tensors=(), version=3, alignment=32, raw_kvs=None, pad=b"\x00", tail=b"",
         n_kv=None, n_tensors=None, magic=b"GGUF", data=None):
    """kvs: (key, type, value); tensors: (name, dims, type, bytes or None for zeros).
    Tensor data follow each other, each padded to the alignment; the data section starts at
    the alignment after the tensor infos."""
    body_kv = raw_kvs if raw_kvs is not None else b"".join(g_kv(*kv) for kv in kvs)
    infos, blobs, offset = b"", b"", 0
    for name, dims, ttype, payload in tensors:
        if payload is None:
            _, blck, size = GGML_TYPES[ttype]
            n = 1
            for d in dims:
                n *= d
            payload = b"\x00" * (n // blck * size)
        infos += g_str(name) + struct.pack("<I", len(dims)) + b"".join(
            struct.pack("<q", d) for d in dims) + struct.pack("<IQ", ttype, offset)
        padded = payload + pad * (-len(payload) % alignment)
        blobs += padded
        offset += len(padded)
    head = magic + struct.pack("<I", version) + struct.pack(
        "<QQ", len(tensors) if n_tensors is None else n_tensors,
        (len(kvs) if raw_kvs is None else 1) if n_kv is None else n_kv) + body_kv + infos
    if tensors:
        head += pad * (-len(head) % alignment)
    return head + (blobs if data is None else data) + tail


def gg(kind, name, data, rule, source=GGUF_SPEC, code=None, reference=None):
    add("gguf", kind, name, data, rule, source, code, reference)


def make_gguf():
    arch = ("general.architecture", STRING, "llama")
    small = [("w", [32, 2], 0, None)]
    gg("y", "minimal_no_tensors", gguf([arch]), "gguf.valid")
    gg("y", "empty_no_kv_no_tensors", gguf(), "gguf.valid")
    gg("y", "one_f32_tensor", gguf([arch], small), "gguf.valid")
    gg("y", "version_2", gguf([arch], small, version=2), "gguf.valid",
       GGUF_SPEC + ": version 2 has 64-bit counts like version 3")
    for version, code in ((0, "GgufUnsupportedVersion"), (1, "GgufUnsupportedVersion"),
                          (4, "GgufUnsupportedVersion"), (0x03000000, "GgufByteSwapped"),
                          (0xFFFFFFFF, "GgufUnsupportedVersion")):
        gg("n", "version_%x" % version, gguf([arch], small, version=version),
           "gguf.header." + kebab(code[4:]), code=code)
    for magic in (b"GGUE", b"gguf", b"FUGG", b"GGML", b"\x00\x00\x00\x00"):
        # Without the magic the file is not recognised as GGUF (stguard: an unknown file).
        gg("n", "magic_" + re.sub(r"[^a-zA-Z]", "_", magic.decode()), gguf([arch], magic=magic),
           "gguf.header.bad-magic")
    # Every value type, as a scalar and as an array.
    samples = {U8: [0, 255], I8: [-128, 127], U16: [0, 65535], I16: [-1, 2], U32: [7, 8],
               I32: [-7, 8], F32: [1.5, -2.0], BOOL: [0, 1], U64: [2**64 - 1, 0],
               I64: [-(2**63), 5], F64: [0.25, 1e300], STRING: ["a", "\u00e9\U0001F600"]}
    for vtype, values in samples.items():
        tname = TYPE_NAME[vtype]
        gg("y", "value_" + tname, gguf([arch, ("test.value", vtype, values[0])]), "gguf.value")
        gg("y", "array_of_" + tname, gguf([arch, ("test.array", ARRAY, (vtype, values))]),
           "gguf.value")
        gg("y", "empty_array_of_" + tname, gguf([arch, ("test.array", ARRAY, (vtype, []))]),
           "gguf.value")
    for vtype in (13, 14, 255, 0x80000000):
        gg("n", "value_type_%d" % vtype,
           gguf(raw_kvs=g_str("test.v") + struct.pack("<II", vtype, 0)),
           "gguf.value.invalid-value-type", code="GgufInvalidValueType")
        gg("n", "array_element_type_%d" % vtype,
           gguf(raw_kvs=g_str("test.v") + struct.pack("<IIQ", ARRAY, vtype, 0)),
           "gguf.value.invalid-value-type", code="GgufInvalidValueType")
    gg("n", "array_of_arrays", gguf(raw_kvs=g_str("test.v") + struct.pack("<IIQ", ARRAY, ARRAY, 0)),
       "gguf.value.invalid-value-type", GGUF_SPEC + ": arrays of arrays are not read by ggml",
       "GgufInvalidValueType")
    make_gguf_lenient(arch, small)
    make_gguf_tensors(arch)
    make_gguf_truncations(arch)
    make_gguf_corpus()


def make_gguf_lenient(arch, small):
    for b in (2, 255):
        gg("i", "bool_byte_%d" % b, gguf([arch, ("test.b", BOOL, b)]), "gguf.value.bool",
           "SECURITY.md, GGUF files", "GgufInvalidBool", "reads any non-zero byte as true")
        gg("i", "bool_array_byte_%d" % b, gguf([arch, ("test.b", ARRAY, (BOOL, [0, b]))]),
           "gguf.value.bool", "SECURITY.md, GGUF files", "GgufInvalidBool",
           "reads any non-zero byte as true")
    for label, key in (("upper_case", "General.Name"), ("space", "general.a b"),
                       ("empty_segment", "general..name"), ("leading_dot", ".general"),
                       ("trailing_dot", "general."), ("non_ascii", "g\u00e9n\u00e9ral.name"),
                       ("slash", "general/name"), ("empty", "")):
        gg("i", "key_" + label, gguf([arch, (key, U32, 1)]), "gguf.key.syntax",
           GGUF_SPEC + ": keys are lower_snake_case ASCII separated by dots", "GgufInvalidKey",
           "accepts any byte string as a key")
    gg("n", "duplicate_key", gguf([arch, ("a.b", U32, 1), ("a.b", U32, 2)]),
       "gguf.key.duplicate", code="GgufDuplicateKey")
    for where, kvs, tensors in (
            ("string_value", [arch, ("a.s", STRING, b"a\x00b")], small),
            ("string_array_element",
             [arch, ("a.s", ARRAY, (STRING, [b"a\x00x", b"a\x00y"]))], small),
            ("tensor_name", [arch], [("w\x00x", [32, 2], 0, None)])):
        gg("i", "string_nul_" + where, gguf(kvs, tensors), "gguf.string.nul",
           "SECURITY.md, GGUF files", "GgufNulInString",
           "accepts the bytes; gguf_get_val_str and tensor names cut at the NUL")
    for where, raw in (("overlong", b"\xc0\xaf"), ("surrogate", b"\xed\xa0\x80"),
                       ("lone_continuation", b"\x80"), ("byte_ff", b"\xff")):
        gg("i", "string_utf8_" + where, gguf([arch, ("a.s", STRING, b"x" + raw)]),
           "gguf.string.utf8", GGUF_SPEC + ": strings are UTF-8", "InvalidUtf8",
           "accepts any bytes")
        gg("i", "tensor_name_utf8_" + where, gguf([arch], [(b"w" + raw, [32, 2], 0, None)]),
           "gguf.string.utf8", GGUF_SPEC + ": strings are UTF-8", "InvalidUtf8",
           "accepts any bytes")
    gg("i", "tensor_name_64_bytes", gguf([arch], [("w" * 64, [32], 0, None)]),
       "gguf.tensor.name-length", GGUF_SPEC + ": tensor names are at most 64 bytes",
       "GgufInvalidTensorName", "refuses names of GGML_MAX_NAME (64) bytes or more")
    gg("y", "tensor_name_63_bytes", gguf([arch], [("w" * 63, [32], 0, None)]),
       "gguf.tensor.name-length")
    for alignment in (8, 16, 64, 256, 4096):
        gg("y", "alignment_%d" % alignment,
           gguf([arch, ("general.alignment", U32, alignment)], small, alignment=alignment),
           "gguf.alignment")
    for alignment in (1, 2, 4):
        gg("i", "alignment_%d" % alignment,
           gguf([arch, ("general.alignment", U32, alignment)], small, alignment=alignment),
           "gguf.alignment", GGUF_SPEC + ": general.alignment must be a multiple of 8",
           "GgufInvalidAlignment", "accepts any power of two")
    for alignment in (0, 3, 24, 1000):
        gg("n", "alignment_%d" % alignment,
           gguf([arch, ("general.alignment", U32, alignment)], small, alignment=max(alignment, 1)),
           "gguf.alignment", code="GgufInvalidAlignment")
    gg("n", "alignment_as_u64", gguf([arch, ("general.alignment", U64, 32)], small),
       "gguf.alignment", GGUF_SPEC + ": general.alignment is a uint32", "GgufInvalidAlignment")
    gg("n", "alignment_as_string", gguf([arch, ("general.alignment", STRING, "32")], small),
       "gguf.alignment", GGUF_SPEC + ": general.alignment is a uint32", "GgufInvalidAlignment")
    gg("i", "padding_non_zero", gguf([arch], [("w", [3], 0, None), ("v", [32], 0, None)],
                                     pad=b"\xaa"),
       "gguf.padding.zero", GGUF_SPEC + ": padding bytes are zero", "GgufNonZeroPadding",
       "ignores padding content")
    gg("i", "trailing_bytes", gguf([arch], small, tail=b"\x00" * 32), "gguf.trailing-bytes",
       "SECURITY.md, GGUF files", "GgufTrailingBytes", "ignores bytes after the last tensor")
    gg("i", "last_tensor_unpadded", gguf([arch], [("w", [3], 0, None)])[:-20],
       "gguf.padding.missing", "SECURITY.md, GGUF files", "GgufMissingPadding",
       "no_alloc=true accepts; no_alloc=false refuses (it reads the padded size)")


def make_gguf_tensors(arch):
    for tid, (name, blck, size) in GGML_TYPES.items():
        dims = [blck * (2 if blck == 1 else 1), 2]
        kind = "y"
        gg(kind, "tensor_type_" + name, gguf([arch], [("w", dims, tid, None)]), "gguf.tensor.type",
           GGUF_SPEC + ": ggml_type %d" % tid + (" (newer than npm ggml 3.21.1)"
                                                 if tid in GGML_NEWER else ""))
        if blck > 1:
            gg("n", "tensor_type_%s_partial_block" % name,
               gguf([arch], [("w", [blck + 1, 1], tid, b"\x00" * (2 * size))]),
               "gguf.tensor.block", "ggml: ne[0] is a multiple of the block size",
               "GgufBlockMismatch")
    for tid in (4, 5, 31, 32, 33, 36, 37, 38, 43, 1000, 0xFFFFFFFF):
        gg("n", "tensor_type_id_%d" % tid, gguf([arch], [("w", [32], tid, b"\x00" * 32)]),
           "gguf.tensor.type", "ggml: removed or unknown type id", "GgufUnknownType")
    for dims in ([1], [2, 3], [4, 3, 2], [2, 2, 2, 2], [0], [0, 7]):
        label = "x".join(map(str, dims))
        gg("y", "dims_" + label, gguf([arch], [("w", dims, 0, None)]), "gguf.tensor.dims")
    gg("i", "dims_none", gguf([arch], [("w", [], 0, b"\x00" * 4)]), "gguf.tensor.dims",
       "SECURITY.md, GGUF files", "GgufInvalidDims", "reads 0 dims as a scalar")
    for label, dims in (("zero_in_ne1", [32, 0]), ("zero_in_ne2", [4, 4, 0]),
                        ("zero_in_ne3", [4, 4, 4, 0])):
        gg("i", "dims_" + label, gguf([arch], [("w", dims, 0, None)]), "gguf.tensor.dims",
           "SECURITY.md, GGUF files (SIGFPE in ggml built July 2026)", "GgufInvalidDims",
           "npm 3.21.1 accepts; ggml built from llama.cpp in July 2026 dies of SIGFPE")
    for label, dims in (("overflow_beside_zero_3d", [2**40, 2**40, 0]),
                        ("overflow_beside_zero_4d", [2**62, 2**62, 2**62, 0]),
                        ("overflow_after_zero_first", [0, 2**40, 2**40])):
        gg("i", "dims_" + label, gguf([arch], [("w", dims, 0, b"")]), "gguf.tensor.element-count",
           "SECURITY.md, GGUF files", "ValidationOverflow",
           "npm 3.21.1 accepts (the element count wraps to 0); gguf-py 0.19 refuses")
    for label, dims, code in (("five", [1, 1, 1, 1, 1], "GgufInvalidDims"),
                              ("negative", [-1, 1], "GgufInvalidDims"),
                              ("int64_min", [-(2**63)], "GgufInvalidDims"),
                              ("product_overflow", [2**32, 2**32], "ValidationOverflow"),
                              ("product_overflow_4d", [2**16] * 4, "ValidationOverflow")):
        gg("n", "dims_" + label, gguf([arch], [("w", dims, 0, b"\x00" * 32)]), "gguf.tensor.dims",
           code=code)
    two = gguf([arch], [("w", [3], 0, None), ("v", [32], 0, None)])
    v_info = g_str("v") + struct.pack("<Iq", 1, 32) + struct.pack("<IQ", 0, 32)
    gg("n", "tensor_offset_misaligned",
       two.replace(v_info, v_info[:-8] + struct.pack("<Q", 12)), "gguf.tensor.offset",
       code="GgufTensorOffset")
    gg("n", "tensor_offset_overlap",
       two.replace(v_info, v_info[:-8] + struct.pack("<Q", 0)), "gguf.tensor.offset",
       code="GgufTensorOffset")
    gg("n", "duplicate_tensor", gguf([arch], [("w", [32], 0, None), ("w", [32], 0, None)]),
       "gguf.tensor.duplicate", code="GgufDuplicateTensor")
    gg("n", "tensor_past_end", gguf([arch], [("w", [32, 4], 0, None)])[:-64], "gguf.tensor.bounds",
       code="GgufTensorOutOfFile")
    for label, n_kv, n_t in (("kv_count_huge", 2**63, 0), ("tensor_count_huge", 1, 2**63),
                             ("kv_count_one_more", 2, 0), ("tensor_count_one_more", 1, 1)):
        gg("n", label, gguf([arch], n_kv=n_kv if label.startswith("kv") else None,
                             n_tensors=n_t if label.startswith("tensor") else None),
           "gguf.header.counts", code="GgufTruncated")


def make_gguf_truncations(arch):
    full = gguf([arch, ("a.s", STRING, "hello"), ("a.arr", ARRAY, (U32, [1, 2, 3]))],
                [("w", [32], 0, None), ("v", [16], 1, None)])
    # Both tensors are whole multiples of the alignment (128 and 32 bytes): no final padding,
    # so every shorter prefix is a truncated file, whatever the reader's padding rule.
    assert len(full) % 32 == 0
    step = max(1, len(full) // 40)
    for cut in list(range(0, len(full), step)) + [len(full) - 1]:
        gg("n", "truncated_at_%03d_of_%d" % (cut, len(full)), full[:cut], "gguf.truncated",
           GGUF_SPEC + ": every announced byte must be present")


# `stguard check` codes where a corpus file's name gives the code of a format-specific path:
# a file without its format's magic is an unknown file to `check` (no code recorded).
CHECK_CODE = {"GgufBadMagic__bad_magic": None, "NotATorchCheckpoint__text": None,
              "ZipHeaderMismatch__cd_names_other_file": "ZipUnexpectedRecord"}


def make_gguf_corpus():
    """corpus/gguf/refuse: the CVE classes of ggml's reader and the differentials."""
    folder = os.path.join(ROOT, "corpus", "gguf", "refuse")
    lenient = {"GgufNulInString", "GgufInvalidKey", "GgufInvalidBool", "InvalidUtf8",
               "GgufNonZeroPadding", "GgufTrailingBytes", "GgufMissingPadding"}
    for file in sorted(os.listdir(folder)):
        code, what = file[:-len(".gguf")].split("__")
        check_code = CHECK_CODE.get(file[:-len(".gguf")], code)
        with open(os.path.join(folder, file), "rb") as f:
            data = f.read()
        kind = "i" if code in lenient or "zero_in_ne" in what or "beside_zero" in what or \
            "after_zero" in what else "n"
        gg(kind, "corpus_%s__%s" % (kebab(code).replace("-", "_"), what), data,
           "gguf." + kebab(code[4:] if code.startswith("Gguf") else code),
           "corpus/gguf (ggml reader CVE classes and differentials)", check_code,
           GGML_REF + " accepts it (see SECURITY.md, GGUF files)" if kind == "i" else None)


# ==================================================================== npy
NPY_SPEC = "numpy/doc/neps/nep-0001-npy-format.rst (format.py)"
NUMPY_REF = "numpy 1.24 np.load(allow_pickle=False)"


def npy(header: str, data: bytes, version=(1, 0), pad_to=64, raw_header=None) -> bytes:
    """header: the dict's text; padded with spaces and a final newline to pad_to."""
    text = raw_header if raw_header is not None else header.encode("latin-1")
    pre = 10 if version == (1, 0) else 12
    if raw_header is None:
        total = pre + len(text) + 1
        text += b" " * (-total % pad_to) + b"\n"
    length = struct.pack("<H", len(text)) if version == (1, 0) else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes(version) + length + text + data


def hdr(descr, shape, fortran=False):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        repr(descr), fortran, repr(tuple(shape)))


NPY_DTYPES = {"<f2": 2, "<f4": 4, "<f8": 8, "<i1": 1, "<i2": 2, "<i4": 4, "<i8": 8,
              "|u1": 1, "<u2": 2, "<u4": 4, "<u8": 8, "|b1": 1, "<c8": 8, "<c16": 16,
              ">f4": 4, ">i8": 8, "|i1": 1, "|S5": 5, "<U3": 12, "|V8": 8, "<M8[s]": 8,
              "<m8[ms]": 8}
NPY_CASES = {}   # name -> (kind, data, code, reference), reused inside npz archives


def np_case(kind, name, data, rule, source=NPY_SPEC, code=None, reference=None):
    add("npy", kind, name, data, rule, source, code, reference)
    NPY_CASES[name] = (kind, data, rule, code, reference)


def make_npy():
    for descr, size in NPY_DTYPES.items():
        label = {"<": "le_", ">": "be_", "|": "na_"}[descr[0]] + re.sub(
            r"[^a-zA-Z0-9]", "_", descr[1:]).strip("_")
        np_case("y", "dtype_" + label, npy(hdr(descr, [2, 3]), b"\x00" * 6 * size), "npy.valid")
    for label, shape in (("scalar", []), ("empty", [0]), ("one", [1]), ("3d", [2, 1, 3]),
                         ("32d", [1] * 32), ("zero_middle", [2, 0, 3])):
        n = 1
        for d in shape:
            n *= d
        np_case("y", "shape_" + label, npy(hdr("<f4", shape), b"\x00" * 4 * n), "npy.valid")
    np_case("y", "fortran_order", npy(hdr("<f4", [2, 3], True), b"\x00" * 24), "npy.valid")
    np_case("y", "version_2_0", npy(hdr("<f4", [2]), b"\x00" * 8, version=(2, 0)), "npy.valid")
    np_case("y", "version_3_0", npy(hdr("<f4", [2]), b"\x00" * 8, version=(3, 0)), "npy.valid")
    np_case("y", "keys_other_order",
            npy("{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}", b"\x00" * 8),
            "npy.valid")
    np_case("y", "padded_to_16", npy(hdr("<f4", [2]), b"\x00" * 8, pad_to=16), "npy.valid",
            NPY_SPEC + ": the total header is a multiple of 16 (64 since numpy 1.19's writer)")
    np_case("i", "structured", npy("{'descr': [('a', '<f4'), ('b', '<i2')], 'fortran_order': "
                                   "False, 'shape': (2,), }", b"\x00" * 12), "npy.descr.structured",
            "SECURITY.md, NumPy .npy files", "NpyHeaderSyntax",
            NUMPY_REF + " accepts structured dtypes (no tensor equivalent: stguard refuses them)")
    np_case("y", "double_quotes", npy('{"descr": "<f4", "fortran_order": False, "shape": (2,), }',
                                      b"\x00" * 8), "npy.valid", NPY_SPEC + ": a Python literal")
    lenient = [
        ("key_twice", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
         "npy.header.keys", "NpyHeaderKeys"),
        ("descr_dtype_name", hdr("float32", [2]), "npy.descr", "NpyDescr"),
        ("descr_native_order", hdr("=f4", [2]), "npy.descr", "NpyDescr"),
        ("descr_pipe_multibyte", hdr("|f4", [2]), "npy.descr", "NpyDescr"),
        ("python2_long", "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("leading_zero", "{'descr': '<f4', 'fortran_order': False, 'shape': (02,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("underscore_number", "{'descr': '<f4', 'fortran_order': False, 'shape': (0_2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("tab", "{'descr':\t'<f4', 'fortran_order': False, 'shape': (2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("unicode_prefix", "{u'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("string_concatenation", "{'descr': '<' 'f4', 'fortran_order': False, 'shape': (2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("shape_list", "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("fortran_order_int", "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("newline_inside", "{'descr': '<f4',\n'fortran_order': False, 'shape': (2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
        ("string_escape", "{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (2,), }",
         "npy.header.syntax", "NpyHeaderSyntax"),
    ]
    for name, header, rule, code in lenient:
        np_case("i", name, npy(header, b"\x00" * 8), rule, "SECURITY.md, NumPy .npy files", code,
                NUMPY_REF + " accepts it")
    short = hdr("<f4", [2]) + ("" if (10 + len(hdr("<f4", [2])) + 1) % 16 else " ")
    np_case("i", "preamble_not_16", npy(short, b"\x00" * 8, pad_to=4), "npy.preamble",
            "SECURITY.md, NumPy .npy files", "NpyPreamble", NUMPY_REF + " accepts it")
    np_case("i", "no_final_newline", npy("", b"\x00" * 8, raw_header=(
        hdr("<f4", [2]).encode() + b" " * 64)[:118]), "npy.header.syntax",
        "SECURITY.md, NumPy .npy files", "NpyHeaderSyntax", NUMPY_REF + " accepts it")
    np_case("i", "blank_before_brace", npy(" " + hdr("<f4", [2]), b"\x00" * 8),
            "npy.header.syntax", "SECURITY.md, NumPy .npy files", "NpyHeaderSyntax",
            NUMPY_REF + " accepts it")
    np_case("i", "trailing_data", npy(hdr("<f4", [2]), b"\x00" * 9), "npy.data.length",
            "SECURITY.md, NumPy .npy files", "NpyDataLength",
            NUMPY_REF + " ignores the extra bytes")
    for name, header, data, code, what in (
            ("item_size_2_31", hdr("|S2147483648", [0]), b"", "NpyDescr",
             "wraps the item size to a negative number"),
            ("datetime_multiple_0", hdr("<M8[0s]", [1]), b"\x00" * 8, "NpyDescr",
             "accepts a unit multiple of 0"),
            ("negative_dim", hdr("<f4", [-1]), b"", "NpyHeaderSyntax",
             "accepts a negative dimension when no data follow")):
        np_case("i", name, npy(header, data), "npy.descr" if code == "NpyDescr" else
                "npy.header.keys", "SECURITY.md, NumPy .npy files", code, NUMPY_REF + " " + what)
    for descr in ("|S0", "<U0"):
        np_case("i", "descr_" + descr[1:], npy(hdr(descr, [2]), b""), "npy.descr",
                "SECURITY.md, NumPy .npy files", "NpyDescr", NUMPY_REF + " reads it as S1/U1")
    np_case("i", "non_ascii_field_name",
            npy("", b"\x00" * 8, raw_header=(
                "{'descr': [('\u00e9', '<f4')], 'fortran_order': False, 'shape': (2,), }"
                .encode() + b" " * 64)[:117] + b"\n"),
            "npy.header.syntax", "SECURITY.md, NumPy .npy files", "NpyHeaderSyntax",
            NUMPY_REF + " accepts latin-1 text")
    make_npy_refusals()


def make_npy_refusals():
    refusals = [
        ("shape_33d", hdr("<f4", [1] * 33), b"\x00" * 4, "npy.header.keys", "NpyHeaderKeys"),
        ("bytes_prefix", "{'descr': b'<f4', 'fortran_order': False, 'shape': (2,), }",
         b"\x00" * 8, "npy.header.syntax", "NpyHeaderSyntax"),
        ("descr_f12", hdr("<f12", [2]), b"\x00" * 24, "npy.descr", "NpyDescr"),
        ("object_dtype", hdr("|O", [1]), b"\x00" * 8, "npy.descr.object", "NpyObjectArray"),
        ("missing_shape", "{'descr': '<f4', 'fortran_order': False, }", b"", "npy.header.keys",
         "NpyHeaderKeys"),
        ("missing_descr", "{'fortran_order': False, 'shape': (2,), }", b"\x00" * 8,
         "npy.header.keys", "NpyHeaderKeys"),
        ("extra_key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }",
         b"\x00" * 8, "npy.header.keys", "NpyHeaderSyntax"),
        ("short_data", hdr("<f4", [2]), b"\x00" * 7, "npy.data.length", "NpyDataLength"),
        ("no_data", hdr("<f4", [2]), b"", "npy.data.length", "NpyDataLength"),
        ("huge_shape", hdr("<f4", [2**62, 4]), b"", "npy.data.length", "ValidationOverflow"),
        ("not_a_dict", "[1, 2]", b"", "npy.header.syntax", "NpyHeaderSyntax"),
        ("unknown_descr", hdr("<q9", [1]), b"\x00" * 8, "npy.descr", "NpyDescr"),
        ("descr_int", "{'descr': 4, 'fortran_order': False, 'shape': (1,), }", b"\x00" * 4,
         "npy.descr", "NpyHeaderSyntax"),
        ("code_in_header", "{'descr': __import__('os').getcwd(), 'fortran_order': False, "
         "'shape': (1,), }", b"", "npy.header.syntax", "NpyHeaderSyntax"),
    ]
    for name, header, data, rule, code in refusals:
        np_case("n", name, npy(header, data), rule, NPY_SPEC, code)
    magic = "npy.preamble"
    # Without the magic the file is not recognised as .npy (stguard: an unknown file).
    np_case("n", "bad_magic", b"\x93NUMPX\x01\x00" + npy(hdr("<f4", [1]), b"\x00" * 4)[8:], magic)
    np_case("n", "version_4_0", npy(hdr("<f4", [1]), b"\x00" * 4, version=(4, 0)), magic,
            code="NpyPreamble")
    np_case("n", "version_1_1", npy(hdr("<f4", [1]), b"\x00" * 4, version=(1, 1)), magic,
            code="NpyPreamble")
    np_case("n", "header_len_past_end", b"\x93NUMPY\x01\x00\xff\xff{}", magic, code="NpyPreamble")
    np_case("n", "empty_file", b"", magic)
    np_case("n", "magic_only", b"\x93NUMPY", magic, code="NpyPreamble")


# ==================================================================== ZIP (npz)
ZIP_SPEC = "PKWARE APPNOTE.TXT 6.3"
NPZ_REF = "numpy 1.24 np.load(allow_pickle=False) on .npz (zipfile)"
DOS_DATE = (0, 0x21)  # 00:00:00, 1980-01-01


def zip_archive(members, comment=b"", lead=b"", tail=b"", flags=0, central_extra=None):
    """members: (name bytes, data, method, compressed bytes or None, crc or None).
    Written byte by byte with a fixed timestamp: reproducible everywhere."""
    out, central = bytearray(lead), bytearray()
    for name, data, method, packed, crc in members:
        packed = data if packed is None else packed
        crc = zlib.crc32(data) if crc is None else crc
        version = 20 if method != 12 else 46
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, version, flags, method, *DOS_DATE, crc,
                           len(packed), len(data), len(name), 0) + name + packed
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, version, flags, method,
                               *DOS_DATE, crc, len(packed), len(data), len(name), 0, 0, 0, 0, 0,
                               offset) + name
    cd_offset = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                       cd_offset, len(comment)) + comment + tail
    return bytes(out)


def member(name, data, method=0, packed=None, crc=None):
    return (name.encode() if isinstance(name, str) else name, data, method, packed, crc)


def nz(kind, name, data, rule, source=ZIP_SPEC, code=None, reference=None):
    add("npz", kind, name, data, rule, source, code, reference)


def make_npz():
    a = npy(hdr("<f4", [2]), b"\x00\x00\x80?\x00\x00\x00@")
    b = npy(hdr("<i8", [3]), struct.pack("<3q", 1, 2, 3))
    nz("y", "one_member", zip_archive([member("a.npy", a)]), "npz.valid")
    nz("y", "two_members", zip_archive([member("a.npy", a), member("b.npy", b)]), "npz.valid")
    nz("y", "empty_archive", zip_archive([]), "npz.valid")
    # The only deflated member: its stream is a literal, so no zlib version changes it.
    nz("y", "deflated_member", zip_archive([member("a.npy", a, 8, DEFLATED_A)]), "npz.valid",
       "np.savez_compressed writes deflated members")
    nz("y", "utf8_flagged_name", zip_archive([member("\u00e9.npy", a)], flags=0x800), "npz.valid",
       ZIP_SPEC + " appendix D: bit 11 means the name is UTF-8")
    for name, (kind, data, rule, code, reference) in NPY_CASES.items():
        if kind == "y":
            nz("y", "member_" + name, zip_archive([member("x.npy", data)]), "npz.valid")
        elif kind == "n" and not data.startswith(b"\x93NUMPY"):
            nz("i", "member_" + name, zip_archive([member("x.npy", data)]), "npz.member.not-npy",
               "SECURITY.md, NumPy .npz archives", code,
               NPZ_REF + " returns a member without the .npy magic as its raw bytes")
        elif kind == "n":
            nz("n", "member_" + name, zip_archive([member("x.npy", data)]), rule,
               "a member is an .npy file: " + NPY_SPEC, code)
    lenient = [
        ("leading_bytes", zip_archive([member("a.npy", a)], lead=b"junk"), "npz.zip.layout",
         None),
        ("trailing_bytes", zip_archive([member("a.npy", a)], tail=b"junk"), "npz.zip.layout",
         "ZipFormat"),
        ("archive_comment", zip_archive([member("a.npy", a)], comment=b"hello"),
         "npz.zip.layout", "ZipLayout"),
        ("member_not_npy", zip_archive([member("a.npy", a), member("readme.txt", b"hi")]),
         "npz.name.suffix", "ZipUnexpectedRecord"),
        ("member_in_folder", zip_archive([member("d/a.npy", a)]), "npz.name.path", "NpzMemberName"),
        ("member_backslash", zip_archive([member("d\\a.npy", a)]), "npz.name.path", "NpzMemberName"),
        ("member_dot_dot", zip_archive([member("../a.npy", a)]), "npz.name.path", "NpzMemberName"),
        ("member_absolute", zip_archive([member("/a.npy", a)]), "npz.name.path", "NpzMemberName"),
        ("duplicate_name", zip_archive([member("a.npy", a), member("a.npy", b)]),
         "npz.name.duplicate", "ZipDuplicateName"),
        ("key_shadowing_npy_npy", zip_archive([member("x.npy", a), member("x.npy.npy", b)]),
         "npz.name.shadowing", "ZipDuplicateName"),
        ("key_shadowing_reversed", zip_archive([member("x.npy.npy", b), member("x.npy", a)]),
         "npz.name.shadowing", "ZipDuplicateName"),
        ("name_cp437", zip_archive([member(b"\xc3\xa9.npy", a)]), "npz.name.cp437", "NpzMemberName"),
        ("name_cp437_twins", zip_archive([member(b"\x82.npy", a), member("\u00e9.npy", b, 0)]),
         "npz.name.cp437", "NpzMemberName"),
        ("deflate_trailing_bytes", zip_archive([member("a.npy", a, 8, DEFLATED_A + b"xyz")]),
         "npz.deflate.trailing", "DeflateData"),
        ("bzip2_member", zip_archive([member("a.npy", a, 12, bz2.compress(a, 9))]),
         "npz.zip.method", "ZipUnsupported"),
        ("bad_crc_unread_member", zip_archive([member("a.npy", a), member("b.npy", b, crc=1)]),
         "npz.zip.crc", "ZipChecksum"),
    ]
    for name, data, rule, code in lenient:
        nz("i", name, data, rule, "SECURITY.md, NumPy .npz archives", code,
           NPZ_REF + " accepts it (or, for a bad CRC, only fails when the member is read)")
    refusals = [
        ("bad_crc", zip_archive([member("a.npy", a, crc=0x12345678)]), "npz.zip.crc", "ZipChecksum"),
        ("truncated_member", zip_archive([member("a.npy", a)])[:40], "npz.zip.layout", "ZipFormat"),
        ("no_end_record", zip_archive([member("a.npy", a)])[:-22], "npz.zip.layout", "ZipFormat"),
        ("not_a_zip", b"PK\x05\x06" + b"\x00" * 10, "npz.zip.layout", "ZipFormat"),
        ("unknown_method_99", zip_archive([member("a.npy", a, 99)]), "npz.zip.method", "ZipUnsupported"),
        ("encrypted_flag", zip_archive([member("a.npy", a)], flags=1), "npz.zip.method",
         "ZipUnsupported"),
        ("bad_deflate", zip_archive([member("a.npy", a, 8, b"\xff" * 20)]), "npz.deflate.data",
         "DeflateData"),
    ]
    for name, data, rule, code in refusals:
        nz("n", name, data, rule, ZIP_SPEC, code)
    # Second end record: a ZIP whose comment holds another end record naming other members.
    inner = zip_archive([member("b.npy", b)])
    nz("n", "second_end_record_in_comment", zip_archive([member("a.npy", a)], comment=inner[-22:]),
       "npz.zip.end-record", "zip readers that search the end record backwards disagree",
       "ZipLayout")
    # A tar header before the ZIP: tar readers and zip readers see different files.
    tar = b"a.npy".ljust(100, b"\x00") + b"0000644\x00" * 3 + b"%011o\x00" % len(a) + \
        b"00000000000\x00" + b" " * 8 + b"0" + b"\x00" * 100 + b"ustar\x0000"
    tar = tar.ljust(512, b"\x00")
    nz("n", "tar_polyglot", tar + zip_archive([member("b.npy", b)]), "npz.zip.layout",
       "tar/ZIP polyglots (loader differential)")


# np.savez_compressed-style deflate of the member a above, frozen as a literal.
DEFLATED_A = None


# ==================================================================== PyTorch
TORCH_REF = "torch 1.13 torch.load(weights_only=True)"
# Callables whose pickle would run code under torch.load(weights_only=False): built at run time.
RUNTIME_GLOBALS = ["builtins.eval", "builtins.exec", "os.system", "posix.system",
                   "subprocess.Popen", "subprocess.check_output", "builtins.open",
                   "importlib.import_module", "builtins.getattr", "pickle.loads", "marshal.loads",
                   "runpy._run_code", "pip.main", "bdb.Bdb.run", "operator.attrgetter",
                   "operator.methodcaller", "functools.partial", "cProfile.run",
                   "pydoc.pipepager", "__builtin__.eval", "torch.storage._load_from_bytes",
                   "types.FunctionType", "code.InteractiveInterpreter.runsource",
                   "timeit.timeit", "webbrowser.open", "shutil.rmtree"]
RUNTIME_CONTAINERS = ["zip", "legacy", "raw"]
RUNTIME_SHAPES = ["frame_straddle", "protocol0", "protocol1", "inst_opcode",
                  "stack_global_memoised", "nullifai_broken_zip", "nullifai_broken_raw",
                  "polyglot_pickle_then_zip", "polyglot_legacy_then_zip",
                  "trailing_pickle_after_raw", "trailing_pickle_after_legacy",
                  "legacy_sys_info_payload", "legacy_protocol_payload", "zip_bad_crc",
                  "zip_name_mismatch", "zip_deflated_payload", "nested_pickle_loads"]
RUNTIME_CODES = {"frame_straddle": "PickleFrameAmbiguous", "trailing_pickle_after_raw":
                 "TrailingContent", "trailing_pickle_after_legacy": "TrailingContent",
                 "zip_bad_crc": "ZipChecksum", "zip_name_mismatch": "ZipHeaderMismatch",
                 "zip_deflated_payload": "ZipUnsupported"}
CODE_RUNNING = re.compile(r"os_system|eval|subprocess|getattr|importlib|pickle_loads|marshal|"
                          r"setattr|whole_module|stack_global")
# Files `stguard check` accepts (a pickle of plain values), but that `convert` refuses.
PT_LENIENT = {"RawPickle": "torch.load(weights_only=True) of torch 1.13 refuses a pickle without "
                           "the legacy magic number; weights_only=False loads it",
              "NotAStateDict": "torch.load loads a pickle whose root is not a dict"}


def pt(kind, name, data, rule, source, code=None, reference=None, runtime=None, expected=None):
    add("pytorch", kind, name, data, rule, source, code, reference, runtime, expected)


def make_pytorch():
    base = os.path.join(ROOT, "corpus", "torch")
    for sub, kind in (("valid", "y"), ("torch2", "y")):
        for file in sorted(os.listdir(os.path.join(base, sub))):
            path = os.path.join(base, sub, file)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            pt(kind, sub + "_" + file[:-3].replace(".", "_"), data, "pt.valid",
               "torch.save (Debian torch 1.13; torch2/: torch 2.x dtypes, hand-made)")
    for sub in ("refuse", "bypass"):
        for file in sorted(os.listdir(os.path.join(base, sub))):
            code, what = file[:-3].split("__")
            with open(os.path.join(base, sub, file), "rb") as f:
                data = f.read()
            if sub == "bypass" or CODE_RUNNING.search(what) or b"print" in data:
                continue  # would run code: described as a runtime case below instead
            source = "corpus/torch/" + sub + " (torch.load and scanner differentials)"
            if code in PT_LENIENT:
                pt("i", what, data, "pt.container." + kebab(code), source + "; stguard check "
                   "accepts it, convert refuses it with " + code, None, PT_LENIENT[code],
                   expected="accept")
            else:
                pt("n", what, data, "pt." + kebab(code), source,
                   CHECK_CODE.get(file[:-3], code))
    for container in RUNTIME_CONTAINERS:
        for callee in RUNTIME_GLOBALS:
            name = "runs_%s_%s" % (re.sub(r"[^a-zA-Z0-9]", "_", callee), container)
            pt("n", name, None, "pt.pickle.global-refused",
               "pickle: GLOBAL/STACK_GLOBAL + REDUCE calls any importable callable",
               "PickleGlobalRefused", runtime={"builder": "call", "callable": callee,
                                               "container": container})
    for shape in RUNTIME_SHAPES:
        pt("n", "bypass_" + shape, None, "pt.scanner-bypass." + shape.replace("_", "-"),
           "pickle scanner bypass classes (picklescan, modelscan, fickling advisories)",
           RUNTIME_CODES.get(shape, "PickleGlobalRefused"), runtime={"builder": shape})


# ==================================================================== output
def check_folder():
    """Compares every format folder with what this script writes; returns the differences."""
    differences = []
    for fmt in FORMATS:
        folder = os.path.join(OUT, fmt)
        wanted = dict(FILES[fmt])
        wanted["cases.json"] = cases_json(fmt).encode()
        present = set(os.listdir(folder)) if os.path.isdir(folder) else set()
        for name in sorted(present | set(wanted)):
            path = os.path.join(folder, name)
            if name not in wanted or name not in present:
                differences.append(os.path.join(fmt, name))
                continue
            with open(path, "rb") as f:
                if f.read() != wanted[name]:
                    differences.append(os.path.join(fmt, name))
    return differences


def cases_json(fmt):
    return json.dumps({"format": fmt, "cases": CASES[fmt]}, indent=1, ensure_ascii=False) + "\n"


def main():
    global DEFLATED_A
    DEFLATED_A = bytes.fromhex(DEFLATED_A_HEX)
    make_safetensors()
    make_gguf()
    make_npy()
    make_npz()
    make_pytorch()
    if CHECK:
        differences = check_folder()
        for name in differences:
            print("differs from tools/make_conformance.py's output:", name)
        if differences:
            print("run tools/make_conformance.py and commit conformance/")
        return 1 if differences else 0
    for fmt in FORMATS:
        folder = os.path.join(OUT, fmt)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        for file, data in FILES[fmt].items():
            with open(os.path.join(folder, file), "wb") as f:
                f.write(data)
        with open(os.path.join(folder, "cases.json"), "wb") as f:
            f.write(cases_json(fmt).encode())
    total = sum(len(c) for c in CASES.values())
    print(total, "cases:", ", ".join("%s %d" % (f, len(CASES[f])) for f in FORMATS))
    return 0


DEFLATED_A_HEX = "9bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a06e9366a2aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f91a463a9a3a0ab50a14002e0686067b0606060700"

if __name__ == "__main__":
    sys.exit(main())
