#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every command's --json output carries the envelope (tests/cli/envelope.schema.json.in,
its format list filled from formats.def by tests/support/formats.py), the
fields every command adds ($defs.result) and its own command's ($defs.check, .inspect...),
and its exit status follows the verdict: 0 valid, 1 invalid or refused, 2 error; over several
paths, the worst verdict's (refused, invalid, error, valid). The envelope's fields come in
their order, and the nested "error" object has an offset exactly when the envelope does.

Standard library only: the schema is checked by the small validator below, which knows
the keywords the schema uses (type, const, enum, required, properties, minimum, if/then/
else, not, anyOf, $defs) and fails on any other, so the schema cannot silently outgrow it.
Every command (check, inspect, inspect --stats, scan, lint, convert) runs on the sample of
every format in corpus/formats/ (WORD.EXT, whose check --json says "format": "WORD") and on
folders (matrix_cases), besides the cases below; a format formats.def lists without a sample
fails it.
GGUF float metadata in inspect --json follows $defs.gguf_float and reads back as the same
float (the sign of -0.0 included); the text output prints the same digits.

Usage: test_envelope.py STGUARD_CLI CORPUS_DIR
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import formats  # noqa: E402
from input_bytes import npy_bytes  # noqa: E402
TYPES = {"object": dict, "string": str, "integer": int, "array": list, "boolean": bool,
         "number": (int, float)}
KNOWN = {"$schema", "title", "description", "type", "const", "enum", "required",
         "properties", "minimum", "if", "then", "else", "not", "anyOf", "$defs"}


def errors(schema, value, where="$"):
    """The ways `value` breaks `schema` (an empty list when it conforms)."""
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError(f"validator does not know {sorted(unknown)}")
    found = []
    if "type" in schema:
        wanted = TYPES[schema["type"]]
        if not isinstance(value, wanted) or (wanted is not bool and isinstance(value, bool)):
            return [f"{where}: not {schema['type']}: {value!r}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise ValueError(f"{where}: enum is not a list: {schema['enum']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
        found.append(f"{where}: {value} < {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{where}: missing {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                found += errors(sub, value[key], f"{where}.{key}")
    if "not" in schema and not errors(schema["not"], value, where):
        found.append(f"{where}: matches a schema it must not")
    if "anyOf" in schema and all(errors(s, value, where) for s in schema["anyOf"]):
        found.append(f"{where}: matches none of anyOf")
    if "if" in schema:
        branch = "then" if not errors(schema["if"], value, where) else "else"
        if branch in schema:
            found += errors(schema[branch], value, where)
    return found


def format_words():
    """formats.def's words ("unknown", "safetensors"...), then "folder"."""
    return formats.words() + ["folder"]


def format_errors(schema):
    """The schema's "format" words are formats.def's and "folder", and the template that
    makes it holds no list of its own: a hand-written list, or one missing a word, fails."""
    found = []
    listed = schema["properties"]["format"]["enum"]
    if listed != format_words():
        found.append(f"the schema's formats {listed}, formats.def's {format_words()}")
    template = {"properties": {"format": {"enum": ["@formats.def@", "folder"]}}}
    if formats.fill_formats(template, ["npy", "gguf"])["properties"]["format"]["enum"] != \
            ["npy", "gguf", "folder"]:
        found.append("fill_formats does not put formats.def's words in the placeholder")
    for hand_written in (["npy", "gguf", "folder"], ["@formats.def@", "npy", "folder"]):
        try:
            formats.fill_formats({"properties": {"format": {"enum": hand_written}}},
                                 ["npy", "gguf"])
            found.append(f"fill_formats accepted the enum {hand_written}")
        except ValueError:
            pass
    return found


def self_test(schema):
    """The validator rejects what the schema forbids (so the checks below can fail)."""
    good = {"schema_version": 2, "file": "f", "format": "npy", "verdict": "valid"}
    bad_ones = [
        {**good, "schema_version": 1},
        {**good, "format": "bin"},
        {**good, "verdict": "ok"},
        {k: v for k, v in good.items() if k != "file"},
        {**good, "code": "HeaderTooLarge"},                       # valid with a code
        {**good, "verdict": "invalid"},                           # invalid without one
        {**good, "verdict": "invalid", "code": "X", "message": "m", "tensor": "",
         "offset": -1},
    ]
    assert not errors(schema, good), errors(schema, good)
    for bad in bad_ones:
        assert errors(schema, bad), f"validator accepted {bad}"
    # The fields every command adds, and each command's own.
    defs = schema["$defs"]
    error = {"code": "X", "message": "m", "context": "", "tensor": ""}
    bad_invalid = {**good, "verdict": "invalid", "code": "X", "message": "m", "tensor": ""}
    command_cases = [  # (schema, accepted, rejected)
        (defs["result"], {**good, "ok": True}, {**good, "ok": False}),
        (defs["result"], {**bad_invalid, "ok": False, "error": error},
         {**bad_invalid, "ok": False}),
        (defs["check"], {**good, "tensors": 1, "warnings": []}, {**good, "warnings": []}),
        (defs["check"], {**good, "format": "folder", "tensors": 1, "shards": 1, "data_bytes": 4,
                         "index": None, "warnings": []},
         {**good, "format": "folder", "tensors": 1, "warnings": []}),
        (defs["inspect"], {**good, "arrays": []}, {**good, "metadata": {}}),
        (defs["inspect_stats"], {**good, "tensors": [], "totals": {}}, {**good, "tensors": []}),
        (defs["scan"], {**good, "pickle": None}, {**good, "scan_verdict": "clean"}),
        (defs["lint"], {**good, "family": None, "errors": 0, "warnings": 0, "findings": []},
         {**good, "family": None, "errors": 0, "warnings": 0}),
        (defs["convert"], {**good, "output": [], "tensors": 0, "notes": []},
         {**good, "output": "x", "tensors": 0, "notes": []}),
    ]
    for sub, accepted, rejected in command_cases:
        assert not errors(sub, accepted), (accepted, errors(sub, accepted))
        assert errors(sub, rejected), f"validator accepted {rejected}"
    gguf_float = schema["$defs"]["gguf_float"]
    for good_float in (-0.0, 1.0, 1e300, "nan", "inf", "-inf"):
        assert not errors(gguf_float, good_float), good_float
    for bad_float in ("NaN", "Infinity", "1.0", True, None):
        assert errors(gguf_float, bad_float), f"validator accepted {bad_float!r}"


def command_schema(schema, args):
    """The schema of the command `args` runs: $defs.<command> (inspect_stats for --stats)."""
    name = "inspect_stats" if args[0] == "inspect" and "--stats" in args else args[0]
    return schema["$defs"][name]


EXIT_STATUS = {"valid": 0, "invalid": 1, "refused": 1, "error": 2}


def matrix_cases(corpus, tmp):
    """Every command on the sample of every format (corpus/formats/) and on folders:
    (arguments, None), the exit status to follow the verdict printed."""
    folder = os.path.join(tmp, "matrix")
    os.mkdir(folder)
    torch = os.path.join(corpus, "torch")
    inputs = list(formats.samples(os.path.dirname(os.path.abspath(corpus))).values()) + [
        os.path.join(torch, "valid", "sharded"),
        os.path.join(tmp, "good"),
        os.path.join(tmp, "evil"),
        os.path.join(tmp, "no_shard"),
    ]
    cases = []
    for i, path in enumerate(inputs):
        for command in (["check"], ["inspect"], ["inspect", "--stats"], ["scan"], ["lint"]):
            cases.append(([*command, "--json", path], None))
        cases.append((["convert", "--json", path, os.path.join(folder, f"out{i}")], None))
    return cases


def run(cli, *args):
    result = subprocess.run([cli, *args], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout


def gguf_bytes():
    # GGUF v3, one tensor "t" of F32 [2] and no key: header, tensor info, padding to 32.
    out = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
    out += struct.pack("<Q", 1) + b"t" + struct.pack("<IQIQ", 1, 2, 0, 0)
    out += b"\0" * (-len(out) % 32)
    return out + struct.pack("<2f", 1.0, 2.0) + b"\0" * 24  # the last tensor padded too


# (key, GGUF type, packed value, the float it must read back as: None for NaN)
FLOATS = [("f.neg_zero", 6, struct.pack("<f", -0.0), -0.0),
          ("f.one", 6, struct.pack("<f", 1.0), 1.0),
          ("f.tenth", 6, struct.pack("<f", 0.1), struct.unpack("<f", struct.pack("<f", 0.1))[0]),
          ("f.nan", 6, struct.pack("<I", 0x7FC00000), None),
          ("f.inf", 6, struct.pack("<f", math.inf), math.inf),
          ("d.neg_zero", 12, struct.pack("<d", -0.0), -0.0),
          ("d.big", 12, struct.pack("<d", 1e300), 1e300),
          ("d.third", 12, struct.pack("<d", 1 / 3), 1 / 3),
          ("d.minus_inf", 12, struct.pack("<d", -math.inf), -math.inf),
          ("d.nan", 12, struct.pack("<Q", 0xFFF8000000000001), None)]
FLOAT_TEXT = {"f.neg_zero": "-0.0", "f.one": "1.0", "f.tenth": "0.1", "f.nan": "nan",
              "f.inf": "inf", "d.neg_zero": "-0.0", "d.big": "1e+300",
              "d.third": "0.3333333333333333", "d.minus_inf": "-inf", "d.nan": "nan"}


def gguf_float_bytes():
    """GGUF v3 without tensors: the FLOATS as keys, and one f32 array of them."""
    def string(text):
        return struct.pack("<Q", len(text)) + text.encode()
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(FLOATS) + 1)
    for key, kind, packed, _ in FLOATS:
        out += string(key) + struct.pack("<I", kind) + packed
    singles = [packed for _, kind, packed, _ in FLOATS if kind == 6]
    out += string("f.array") + struct.pack("<IIQ", 9, 6, len(singles)) + b"".join(singles)
    return out


def same_float(got, expected, single):
    """Whether the JSON value `got` reads back as `expected` (rounded to an f32 when
    `single`: an f32 is printed with the shortest digits that round back to it)."""
    if expected is None:
        return got == "nan"
    if math.isinf(expected):
        return got == ("inf" if expected > 0 else "-inf")
    if not isinstance(got, float):
        return False
    back = struct.unpack("<f", struct.pack("<f", got))[0] if single else got
    return back == expected and math.copysign(1, back) == math.copysign(1, expected)


def float_errors(cli, schema, tmp):
    """inspect --json and inspect of GGUF float metadata: $defs.gguf_float, the same float
    back in Python, the same digits in the text output."""
    path = os.path.join(tmp, "floats.gguf")
    with open(path, "wb") as f:
        f.write(gguf_float_bytes())
    status, out = run(cli, "inspect", "--json", path)
    if status != 0:
        return [f"inspect --json floats.gguf: exit {status}: {out}"]
    metadata = json.loads(out)["metadata"]
    found = []
    singles = [expected for _, kind, _, expected in FLOATS if kind == 6]
    pairs = [(key, metadata[key]["value"], expected, kind == 6)
             for key, kind, _, expected in FLOATS]
    pairs += [(f"f.array[{i}]", got, expected, True)
              for i, (got, expected) in enumerate(zip(metadata["f.array"]["value"], singles))]
    for key, got, expected, single in pairs:
        found += [f"{key}: {e}" for e in errors(schema["$defs"]["gguf_float"], got, key)]
        if not same_float(got, expected, single):
            found.append(f"{key}: {got!r} does not read back as {expected!r}")
    status, text = run(cli, "inspect", path)
    for key, digits in FLOAT_TEXT.items():
        if not any(key in line and line.rstrip().endswith(" " + digits)
                   for line in text.splitlines()):
            found.append(f"inspect text: no line for {key} ending in {digits!r}: {text}")
    return found


def cases(cli, corpus, tmp):
    """(arguments, expected exit status) for every command with --json (OUT last)."""
    valid_st = os.path.join(corpus, "valid", "worked_example.safetensors")
    valid_pt = os.path.join(corpus, "torch", "valid", "dtypes.zip.pt")
    evil_pt = os.path.join(corpus, "torch", "refuse", "PickleGlobalRefused__raw_os_system.pt")
    npy = os.path.join(tmp, "a.npy")
    with open(npy, "wb") as f:
        f.write(npy_bytes())
    gguf = os.path.join(tmp, "m.gguf")
    with open(gguf, "wb") as f:
        f.write(gguf_bytes())
    broken = os.path.join(tmp, "broken.safetensors")
    with open(broken, "wb") as f:
        f.write(struct.pack("<Q", 1 << 40) + b"{}")
    good = os.path.join(tmp, "good")
    os.mkdir(good)
    shutil.copy(valid_st, os.path.join(good, "model.safetensors"))
    evil = os.path.join(tmp, "evil")
    shutil.copytree(good, evil)
    shutil.copy(evil_pt, os.path.join(evil, "pytorch_model.bin"))
    missing = os.path.join(tmp, "missing")
    not_canonical = os.path.join(tmp, "spaced.safetensors")
    with open(not_canonical, "wb") as f:
        f.write(safetensors_bytes(b'{ "t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'))
    no_shard = os.path.join(tmp, "no_shard")
    os.mkdir(no_shard)
    with open(os.path.join(no_shard, "model.safetensors.index.json"), "w") as f:
        f.write('{"metadata":{},"weight_map":{"t":"model-00001-of-00001.safetensors"}}')
    return [
        (["check", "--json", "--canonical", not_canonical], 1),
        (["check", "--json", no_shard], 1), (["lint", "--json", no_shard], 1),
        (["scan", "--json", no_shard], 0), (["inspect", "--stats", "--json", no_shard], 1),
        (["lint", "--json", "--config", missing, good], 2),

        (["check", "--json", valid_st], 0), (["check", "--json", valid_pt], 0),
        (["check", "--json", evil_pt], 1), (["check", "--json", npy], 0),
        (["check", "--json", gguf], 0), (["check", "--json", broken], 1),
        (["check", "--json", good], 0), (["check", "--json", evil], 1),
        (["check", "--json", missing], 2), (["check", "--json", "--canonical", valid_pt], 2),
        (["inspect", "--json", valid_st], 0), (["inspect", "--json", valid_pt], 0),
        (["inspect", "--json", npy], 0), (["inspect", "--json", gguf], 0),
        (["inspect", "--json", broken], 1), (["inspect", "--json", evil_pt], 1),
        (["inspect", "--json", missing], 2),
        (["inspect", "--stats", "--json", good], 0), (["inspect", "--stats", "--json", evil], 1),
        (["lint", "--json", good], 0), (["lint", "--json", evil], 1),
        (["lint", "--json", missing], 2),
        (["scan", "--json", valid_pt], 0), (["scan", "--json", evil_pt], 1),
        (["scan", "--json", missing], 2), (["scan", "--json", npy], 0),
        (["scan", "--json", good], 0),
        (["convert", "--json", valid_pt, os.path.join(tmp, "pt.safetensors")], 0),
        (["convert", "--json", "--dtype", "F16", valid_st, os.path.join(tmp, "f16.safetensors")], 0),
        (["convert", "--json", npy, os.path.join(tmp, "npy.safetensors")], 0),
        (["convert", "--json", gguf, os.path.join(tmp, "gguf.safetensors")], 0),
        (["convert", "--json", evil_pt, os.path.join(tmp, "evil.safetensors")], 1),
        (["convert", "--json", broken, os.path.join(tmp, "broken_out.safetensors")], 1),
        (["convert", "--json", missing, os.path.join(tmp, "missing_out.safetensors")], 2),
    ]


def safetensors_bytes(header):
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + b"\x01"


ORDER = ["schema_version", "file", "format", "verdict", "code", "message", "offset", "member",
         "tensor"]


def order_errors(args, value):
    """The envelope's fields first, in their order; "error" agrees about the offset."""
    keys = list(value)
    present = [key for key in ORDER if key in value]
    found = []
    if keys[:len(present)] != present:
        found.append(f"{args}: envelope fields {keys[:len(present)]}, expected {present}")
    nested = value.get("error")
    if isinstance(nested, dict) and ("offset" in nested) != ("offset" in value):
        found.append(f"{args}: error.offset and offset disagree: {value}")
    return found


def exit_order_errors(cli, corpus, tmp):
    """Several paths: the worst verdict's exit status, whatever the order of the paths."""
    evil_pt = os.path.join(corpus, "torch", "refuse", "PickleGlobalRefused__raw_os_system.pt")
    valid_st = os.path.join(corpus, "valid", "worked_example.safetensors")
    broken = os.path.join(tmp, "broken.safetensors")
    missing = os.path.join(tmp, "missing")
    found = []
    for args, status in [(["check", missing, evil_pt], 1), (["check", evil_pt, missing], 1),
                         (["check", missing, broken], 1), (["check", missing, valid_st], 2),
                         (["check", valid_st, valid_st], 0), (["scan", missing, evil_pt], 1),
                         (["scan", evil_pt, missing], 1), (["scan", missing], 2)]:
        got, out = run(cli, *args)
        if got != status:
            found.append(f"{args}: exit {got}, expected {status}: {out}")
    return found


def convert_errors(args, status, value):
    """convert --json: what it wrote exists and holds the tensors it counts; an input that
    is not valid writes nothing and lists nothing."""
    if args[0] != "convert":
        return []
    out = args[-1]
    if status != 0:
        if value.get("output") != [] or os.path.exists(out):
            return [f"{args}: wrote {value.get('output')} for an input that is not valid"]
        return []
    written = value.get("output")
    # A file converts to OUT; a folder (of PyTorch shards) into OUT, its files listed.
    into_folder = os.path.isdir(out) and written and \
        all(os.path.dirname(path) == out and os.path.isfile(path) for path in written)
    if not into_folder and (written != [out] or not os.path.isfile(out)):
        return [f"{args}: output {written}, expected [{out!r}] or files in it"]
    if not isinstance(value.get("tensors"), int) or value["tensors"] < 1:
        return [f"{args}: tensors {value.get('tensors')!r}"]
    return []


def main():
    cli, corpus = sys.argv[1], sys.argv[2]
    schema = formats.envelope_schema()
    self_test(schema)
    failures = format_errors(schema)
    with tempfile.TemporaryDirectory() as tmp:
        matrix = matrix_cases(corpus, tmp)
        checked_formats = set()
        for args, status in cases(cli, corpus, tmp) + matrix:
            got, out = run(cli, *args)
            lines = [line for line in out.splitlines() if line.strip()]
            if status is not None and got != status:
                failures.append(f"{args}: exit {got}, expected {status}: {out}")
            # scan of a folder reports each pickle-bearing file on a line of its own.
            if len(lines) != 1 and not (args[0] == "scan" and os.path.isdir(args[-1])):
                failures.append(f"{args}: expected one JSON line, got {out!r}")
                continue
            for line in lines[:-1]:
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as error:
                    failures.append(f"{args}: not JSON ({error}): {line!r}")
                    continue
                failures += [f"{args}: {e}" for e in errors(schema, value)]
                failures += [f"{args}: {e}" for e in errors(schema["$defs"]["scan"], value)]
            try:
                value = json.loads(lines[-1])
            except json.JSONDecodeError as error:
                failures.append(f"{args}: not JSON ({error}): {lines[0]!r}")
                continue
            failures += [f"{args}: {e}" for e in errors(schema, value)]
            failures += [f"{args}: {e}" for e in errors(schema["$defs"]["result"], value)]
            failures += [f"{args}: {e}" for e in errors(command_schema(schema, args), value)]
            if EXIT_STATUS.get(value.get("verdict")) != got:
                failures.append(f"{args}: exit {got} for verdict {value.get('verdict')}")
            failures += order_errors(args, value)
            failures += convert_errors(args, got, value)
            if (args, status) in matrix and args[0] == "check":
                checked_formats.add(value.get("format"))
                sample = os.path.basename(args[-1]).split(".")[0]
                if os.path.isfile(args[-1]) and value.get("format") != sample:
                    failures.append(f"{args}: format {value.get('format')!r}: the sample "
                                    f"of corpus/formats/ is named for {sample!r}")
            expected = {0: "valid", 2: "error"}.get(status)
            if expected and value.get("verdict") != expected:
                failures.append(f"{args}: verdict {value.get('verdict')}, expected {expected}")
        # The matrix has an input of every format formats.def lists: a new format needs one.
        if checked_formats != set(format_words()):
            failures.append(f"the matrix checks formats {sorted(checked_formats)}, "
                            f"formats.def lists {sorted(format_words())}: add a sample of "
                            "each to corpus/formats/")
        failures += float_errors(cli, schema, tmp)
        failures += exit_order_errors(cli, corpus, tmp)
    for failure in failures:
        print("FAIL", failure)
    print(f"{'FAILED' if failures else 'ok'}: envelope schema over every command's --json")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
