#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes corpus/torch/bypass/: files that run code under torch.load or pickle.load and that
other pickle scanners have let through (their advisories and CVEs), each with a harmless
marker payload (it prints MARKER, or runs `echo MARKER`). stguard must refuse every one:

  bypass/<CODE>__<name>.pt   CODE is the ErrorCode name stguard gives

  make_bypasses.py [OUTDIR]   (default: corpus/torch/bypass beside this checkout's tests)

Only the standard library is used, and every pickle is written byte by byte, so the files
do not depend on the Python or torch that regenerates them (except the marshalled code
object of marshal_function_type, which is the regenerating Python's).
"""
import io
import os
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "corpus", "torch",
                                                         "bypass")
MARKER = "stguard-bypass-marker"
P2, P3, P4 = b"\x80\x02", b"\x80\x03", b"\x80\x04"


# ---------------------------------------------------------------- pickle pieces (protocol 2+)
def text(value: str) -> bytes:
    """BINUNICODE."""
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def short_text(value: str) -> bytes:
    """SHORT_BINUNICODE (protocol 4)."""
    data = value.encode()
    return b"\x8c" + bytes([len(data)]) + data


def binbytes(data: bytes) -> bytes:
    """BINBYTES (protocol 3)."""
    return b"B" + struct.pack("<I", len(data)) + data


def glob(module: str, name: str) -> bytes:
    """GLOBAL (protocol 0 text form, valid in every protocol)."""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def call(function: bytes, *args: bytes) -> bytes:
    """function(*args): MARK, the arguments, TUPLE, REDUCE."""
    return function + b"(" + b"".join(args) + b"tR"


def state_dict(value: bytes) -> bytes:
    """{"weight": value}, as a checkpoint's root."""
    return b"}" + text("weight") + value + b"s"


def checkpoint_pickle(value: bytes, proto: bytes = P2) -> bytes:
    return proto + state_dict(value) + b"."


PRINT_MARKER = call(glob("builtins", "print"), text(MARKER))
PRINT_SOURCE = "print(%r)" % MARKER


# ---------------------------------------------------------------- containers
def zip_checkpoint(pkl: bytes, method=zipfile.ZIP_STORED) -> bytes:
    """A ZIP laid out as torch.save writes it: archive/data.pkl, archive/version."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in (("archive/data.pkl", pkl), ("archive/version", b"3\n")):
            # A fixed date, so that regenerating writes the same bytes.
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                       compress_type=method)
    return buf.getvalue()


# torch/serialization.py _legacy_load: magic number, protocol version and sys_info pickles,
# the main pickle, the storage keys pickle, then the raw storages (none here).
MAGIC = P2 + b"\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e"
PROTOCOL = P2 + b"M\xe9\x03."
SYS_INFO = (P2 + b"}(" + text("protocol_version") + b"M\xe9\x03" + text("little_endian") +
            b"\x88" + text("type_sizes") + b"}(" + text("short") + b"K\x02" + text("int") +
            b"K\x04" + text("long") + b"K\x04uu.")
NO_KEYS = P2 + b"]."


def legacy(main: bytes, protocol: bytes = PROTOCOL, sys_info: bytes = SYS_INFO) -> bytes:
    return MAGIC + protocol + sys_info + main + NO_KEYS


BENIGN_ZIP = zip_checkpoint(P2 + b"}.")


def zip_name_mismatch() -> bytes:
    """data.pkl's local header names another file than the central directory does: torch
    goes by the directory, Python's zipfile refuses the mismatch (scanners built on it
    give up)."""
    data = bytearray(zip_checkpoint(checkpoint_pickle(PRINT_MARKER)))
    name_len = struct.unpack_from("<H", data, 26)[0]
    end = 30 + name_len
    data[end - 3:end] = b"pkX"
    return bytes(data)


def zip_bad_crc() -> bytes:
    """data.pkl's CRC-32 is wrong in both headers: Python's zipfile raises (scanners built
    on it give up), torch's reader does not check it."""
    data = bytearray(zip_checkpoint(checkpoint_pickle(PRINT_MARKER)))
    for signature, crc_at in ((b"PK\x03\x04", 14), (b"PK\x01\x02", 16)):
        at = data.find(signature)
        data[at + crc_at] ^= 0xFF
    return bytes(data)


def frame_straddle() -> bytes:
    """A FRAME that ends inside the first opcode's argument: the C unpickler reads on
    through the frame's end, the pure-Python one (and tools built like it) stop there."""
    body = (short_text("builtins") + short_text("print") + b"\x93(" + text(MARKER) +
            b"tR.")
    return P4 + b"\x95" + struct.pack("<Q", 5) + body


def bdb_run() -> bytes:
    """bdb.Bdb().run(source): a debugger's run() executes its argument."""
    bdb = short_text("bdb") + short_text("Bdb") + b"\x93)R"
    run = short_text("bdb") + short_text("Bdb.run") + b"\x93"
    return P4 + b"}" + short_text("weight") + run + b"(" + bdb + short_text(PRINT_SOURCE) + \
        b"tRs."


def marshal_function() -> bytes:
    """types.FunctionType(marshal.loads(code), {})(): a code object rebuilt and called."""
    code = marshal_code()
    function = call(glob("types", "FunctionType"), call(glob("marshal", "loads"), binbytes(code)),
                    b"}")
    return checkpoint_pickle(function + b")R", P3)


def marshal_code() -> bytes:
    import marshal
    return marshal.dumps(compile(PRINT_SOURCE, "<marker>", "exec"))


CASES = {
    # Data after a bare pickle's STOP (picklescan's malicious6.pkl: a list, then a pickle
    # calling a global): pickle.load in a loop runs the second.
    "TrailingContent__stacked_list_then_call": P2 + b"]." + P2 + PRINT_MARKER + b".",
    "TrailingContent__stacked_dict_then_system":
        P2 + b"}." + P2 + call(glob("os", "system"), text("echo " + MARKER)) + b".",
    "TrailingContent__legacy_then_pickle":
        legacy(checkpoint_pickle(b"N")) + P2 + PRINT_MARKER + b".",
    # Callables blocklists missed.
    "PickleGlobalRefused__pip_main":
        zip_checkpoint(checkpoint_pickle(call(glob("pip", "main"), b"](" + text("show") +
                                                                   text(MARKER) + b"e"))),
    "PickleGlobalRefused__runpy_run_code":
        zip_checkpoint(checkpoint_pickle(call(glob("runpy", "_run_code"), text(PRINT_SOURCE),
                                              b"}"))),
    "PickleGlobalRefused__bdb_run": zip_checkpoint(bdb_run()),
    "PickleGlobalRefused__operator_attrgetter":
        zip_checkpoint(checkpoint_pickle(call(call(call(glob("operator", "attrgetter"),
                                                        text("write")), glob("sys", "stdout")),
                                              text(MARKER + "\n")))),
    "PickleGlobalRefused__operator_methodcaller":
        zip_checkpoint(checkpoint_pickle(call(call(glob("operator", "methodcaller"),
                                                   text("write"), text(MARKER + "\n")),
                                              glob("sys", "stdout")))),
    "PickleGlobalRefused__marshal_function_type": zip_checkpoint(marshal_function()),
    "PickleGlobalRefused__nested_pickle_loads":
        zip_checkpoint(checkpoint_pickle(call(glob("pickle", "loads"),
                                              binbytes(P2 + PRINT_MARKER + b".")), P3)),
    "PickleGlobalRefused__torch_load_from_bytes":
        zip_checkpoint(checkpoint_pickle(call(glob("torch.storage", "_load_from_bytes"),
                                              binbytes(P2 + PRINT_MARKER + b".")), P3)),
    "PickleGlobalRefused__functools_partial":
        zip_checkpoint(checkpoint_pickle(call(glob("functools", "partial"),
                                              glob("builtins", "print"), text(MARKER)) + b")R")),
    "PickleGlobalRefused__cprofile_run":
        zip_checkpoint(checkpoint_pickle(call(glob("cProfile", "run"), text(PRINT_SOURCE)))),
    "PickleGlobalRefused__pydoc_pipepager":
        zip_checkpoint(checkpoint_pickle(call(glob("pydoc", "pipepager"), text(MARKER + "\n"),
                                              text("cat")))),
    "PickleGlobalRefused__py2_builtin_alias":
        zip_checkpoint(checkpoint_pickle(call(glob("__builtin__", "eval"), text(PRINT_SOURCE)))),
    "PickleGlobalRefused__stack_global_memoised":
        zip_checkpoint(P4 + short_text("builtins") + b"\x94" + short_text("print") + b"\x94" +
                       b"h\x00h\x01\x93" + short_text(MARKER) + b"\x85R."),
    # An opcode that calls out without REDUCE.
    "PickleGlobalRefused__inst_opcode": b"(S'" + MARKER.encode() + b"'\nibuiltins\nprint\n.",
    # Protocols 0 and 1: no PROTO opcode, text opcodes.
    "PickleGlobalRefused__protocol0":
        b"cbuiltins\nprint\n(S'" + MARKER.encode() + b"'\ntR.",
    "PickleGlobalRefused__protocol1": glob("builtins", "print") + b"(" + text(MARKER) + b"tR.",
    # The ZIP container read otherwise by torch and by zipfile-based scanners.
    "ZipHeaderMismatch__zip_name_mismatch": zip_name_mismatch(),
    "ZipChecksum__zip_bad_crc": zip_bad_crc(),
    "ZipUnsupported__zip_deflated_payload":
        zip_checkpoint(checkpoint_pickle(PRINT_MARKER), zipfile.ZIP_DEFLATED),
    # Polyglots: zip readers find the ZIP by its end record, torch.load reads from byte 0.
    "PickleGlobalRefused__polyglot_pickle_then_zip": checkpoint_pickle(PRINT_MARKER) + BENIGN_ZIP,
    "PickleGlobalRefused__polyglot_legacy_then_zip":
        legacy(checkpoint_pickle(PRINT_MARKER)) + BENIGN_ZIP,
    # nullifAI: the payload runs, then the stream breaks; scanners that need a whole
    # stream report an error, or nothing.
    "PickleGlobalRefused__nullifai_broken_zip":
        zip_checkpoint(P2 + state_dict(PRINT_MARKER) + b"\xff\xff\xff"),
    "PickleGlobalRefused__nullifai_broken_raw": P2 + PRINT_MARKER + b"0\x00garbage",
    # The legacy stream's small pickles run with pickle.load too.
    "PickleGlobalRefused__legacy_sys_info_payload":
        legacy(checkpoint_pickle(b"N"), sys_info=P2 + PRINT_MARKER + b"."),
    "PickleGlobalRefused__legacy_protocol_payload":
        legacy(checkpoint_pickle(b"N"), protocol=P2 + PRINT_MARKER + b"."),
    # Frames: an opcode straddling a frame's end.
    "PickleFrameAmbiguous__frame_straddle": frame_straddle(),
}


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith(".pt"):
            os.remove(os.path.join(OUT, name))
    for name, data in CASES.items():
        with open(os.path.join(OUT, name + ".pt"), "wb") as f:
            f.write(data)
    print(len(CASES), "files written to", OUT)


if __name__ == "__main__":
    main()
