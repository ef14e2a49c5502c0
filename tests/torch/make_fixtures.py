#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the torch checkpoint fixtures with real torch.save (Debian's python3-torch).

  make_fixtures.py OUTDIR [--large]

valid/<name>.pt      checkpoints stguard must convert to exactly what torch.load gives
                     (zip and legacy formats); valid/sharded/ a two-shard folder with index
refuse/<CODE>__<name>.pt
                     malicious or lying files; CODE is the ErrorCode name stguard must give
--large also writes valid/large_*.pt (tens of MB), which are not kept in the corpus.
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import zipfile
import zlib

import torch

out = sys.argv[1]
large = "--large" in sys.argv
os.makedirs(os.path.join(out, "valid", "sharded"), exist_ok=True)
os.makedirs(os.path.join(out, "refuse"), exist_ok=True)
torch.manual_seed(0)


def save_both(obj, name):
    torch.save(obj, os.path.join(out, "valid", name + ".zip.pt"))
    torch.save(obj, os.path.join(out, "valid", name + ".legacy.pt"),
               _use_new_zipfile_serialization=False)


# Every dtype torch and safetensors share.
dtypes = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8,
    "u8": torch.uint8, "bool": torch.bool, "c64": torch.complex64,
}
all_dtypes = collections.OrderedDict()
for key, dtype in dtypes.items():
    if dtype == torch.bool:
        all_dtypes[key] = torch.rand(3, 4) > 0.5
    elif dtype == torch.complex64:
        all_dtypes[key] = torch.randn(3, 4, dtype=torch.complex64)
    elif dtype.is_floating_point:
        all_dtypes[key] = torch.randn(3, 4).to(dtype)
    else:
        all_dtypes[key] = torch.randint(-100 if dtype != torch.uint8 else 0, 100, (3, 4)).to(dtype)
save_both(all_dtypes, "dtypes")

save_both({"scalar": torch.tensor(3.5), "empty": torch.zeros(0, 4), "empty1": torch.zeros(0),
           "one": torch.ones(1, 1, 1)}, "scalars_empty")

base = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
save_both({"transposed": base[0].t(), "sliced": base[1:, 1:3], "stepped": base[:, ::2, 1::3],
           "permuted": base.permute(2, 0, 1), "row": base[2, 1], "col": base[:, 2, 3],
           "expanded": torch.arange(3.0).reshape(3, 1).expand(3, 4)}, "views")

shared = torch.arange(20, dtype=torch.int32)
save_both({"a": shared[:10], "b": shared[10:], "c": shared.reshape(4, 5)[1:3]}, "shared_storage")

embed = torch.randn(8, 4)
save_both(collections.OrderedDict([("embed.weight", embed), ("lm_head.weight", embed),
                                   ("other", torch.randn(2))]), "tied")

save_both({"größe.ß": torch.ones(2), "名字": torch.zeros(3), "emoji😀": torch.arange(4)}, "unicode")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3)
        self.bn = torch.nn.BatchNorm1d(4)
        self.fc = torch.nn.Linear(4, 2)


net = Net()
save_both(net.state_dict(), "module_state_dict")
save_both({"epoch": 3, "state_dict": net.state_dict(), "lr": 0.1, "name": "run",
           "best": None, "history": [1.0, 2.0], "flags": (True, False)}, "training")
# Two levels deep, as some trainers wrap the model ({"module": {"model": ...}}): --key twice.
torch.save({"module": {"model": net.state_dict(), "ema": None}, "step": 7},
           os.path.join(out, "valid", "nested.zip.pt"))

# Two-shard folder with its index, as transformers' save_pretrained writes it.
sd = collections.OrderedDict([("a.weight", torch.randn(4, 4)), ("b.weight", torch.randn(3)),
                              ("c.bias", torch.arange(5, dtype=torch.int64))])
shards = {"pytorch_model-00001-of-00002.bin": ["a.weight", "b.weight"],
          "pytorch_model-00002-of-00002.bin": ["c.bias"]}
weight_map = {}
for shard, names in shards.items():
    torch.save({n: sd[n] for n in names}, os.path.join(out, "valid", "sharded", shard))
    weight_map.update({n: shard for n in names})
total = sum(t.numel() * t.element_size() for t in sd.values())
with open(os.path.join(out, "valid", "sharded", "pytorch_model.bin.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)

if large:
    torch.save({"big.%d" % i: torch.randn(1024, 1024) for i in range(16)},
               os.path.join(out, "valid", "large.zip.pt"))
    torch.save({"big.%d" % i: torch.randn(512, 1024).t() for i in range(8)},
               os.path.join(out, "valid", "large_strided.legacy.pt"),
               _use_new_zipfile_serialization=False)

# ---------------------------------------------------------------- malicious and lying files


def refuse(code, name, data):
    with open(os.path.join(out, "refuse", "%s__%s.pt" % (code, name)), "wb") as f:
        f.write(data)


class Reduce:
    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


import builtins  # noqa: E402
import importlib  # noqa: E402
import marshal  # noqa: E402
import subprocess  # noqa: E402

payloads = {
    "os_system": Reduce(os.system, ("echo pwned",)),
    "eval": Reduce(builtins.eval, ("1+1",)),
    "getattr": Reduce(builtins.getattr, (Reduce(importlib.import_module, ("os",)), "system")),
    "subprocess": Reduce(subprocess.call, (["true"],)),
    "importlib": Reduce(importlib.import_module, ("os",)),
    "marshal": Reduce(marshal.loads, (b"\xe3",)),
    "pickle_loads": Reduce(pickle.loads, (b"\x80\x02N.",)),
}


def zip_with_pickle(pkl, folder="archive", extra=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(folder + "/data.pkl", pkl)
        z.writestr(folder + "/version", "3\n")
        for n, d in (extra or {}).items():
            z.writestr(folder + "/" + n, d)
    return buf.getvalue()


legacy_prefix = (pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2) +
                 pickle.dumps({"protocol_version": 1001, "little_endian": True,
                               "type_sizes": {"short": 2, "int": 4, "long": 4}}, protocol=2))
for name, payload in payloads.items():
    obj = {"weight": payload}
    raw = pickle.dumps(obj, protocol=2)
    refuse("PickleGlobalRefused", "raw_" + name, raw)
    refuse("PickleGlobalRefused", "zip_" + name, zip_with_pickle(raw))
    refuse("PickleGlobalRefused", "legacy_" + name, legacy_prefix + raw + pickle.dumps([], protocol=2))
# Protocol 4 uses STACK_GLOBAL with memoised strings.
refuse("PickleGlobalRefused", "zip_proto4_os_system",
       zip_with_pickle(pickle.dumps({"w": payloads["os_system"]}, protocol=4)))

# Hand-written pickles for the bypass families.
P2 = b"\x80\x02"
stack_global_memo = (b"\x80\x04" + b"\x8c\x02os\x94" + b"\x8c\x06system\x94" + b"h\x00h\x01\x93"
                     + b"\x8c\x02id\x85R.")
refuse("PickleGlobalRefused", "stack_global_memoised", zip_with_pickle(stack_global_memo))
# Memo confusion: BINPUT 1 (keys counted from 1, as Python 2's cPickle did) then MEMOIZE,
# which stores under len(memo) == 1 again: CPython would overwrite the first value.
memo_confusion = b"\x80\x04\x8c\x05helloq\x01\x8c\x02os\x94."
refuse("PickleMemoConflict", "memo_put_vs_memoize", zip_with_pickle(memo_confusion))
# A key past the next one (0 expected).
refuse("PickleMemoKey", "memo_key_skipped", zip_with_pickle(b"\x80\x02}q\x02."))
# A key redefined: MEMOIZE stores keys 0 and 1, then BINPUT 1 again.
memo_redefined = b"\x80\x04\x8c\x05hello\x94\x8c\x02os\x94q\x01."
refuse("PickleMemoConflict", "memo_redefined", zip_with_pickle(memo_redefined))
# LONG_BINPUT 0xffffffff: torch's C unpickler allocates its memo by the key (MemoryError).
memo_huge = b"\x80\x02}r\xff\xff\xff\xff."
refuse("PickleMemoKey", "long_binput_huge", zip_with_pickle(memo_huge))
# BUILD used as setattr on an OrderedDict.
build_setattr = (P2 + b"ccollections\nOrderedDict\n)R" + b"}X\x09\x00\x00\x00__class__N" + b"sb.")
refuse("PickleBadArguments", "build_setattr", zip_with_pickle(build_setattr))
# OrderedDict REDUCEd with arguments.
refuse("PickleBadArguments", "ordereddict_args",
       zip_with_pickle(P2 + b"ccollections\nOrderedDict\n]\x85R."))
# A refused opcode: INST / NEWOBJ.
refuse("PickleOpcodeRefused", "newobj",
       zip_with_pickle(P2 + b"ccollections\nOrderedDict\n)\x81."))
# A whole pickled nn.Module.
mod_buf = io.BytesIO()
torch.save(torch.nn.Linear(2, 2), mod_buf)
refuse("PickleGlobalRefused", "whole_module", mod_buf.getvalue())
mod_buf = io.BytesIO()
torch.save(torch.nn.Linear(2, 2), mod_buf, _use_new_zipfile_serialization=False)
refuse("PickleGlobalRefused", "whole_module_legacy", mod_buf.getvalue())
# Structural corruption.
refuse("PickleCorrupt", "no_stop", zip_with_pickle(P2 + b"N"))
refuse("PickleCorrupt", "two_values", zip_with_pickle(P2 + b"NN."))
refuse("RawPickle", "raw_clean_pickle", pickle.dumps({"a": 1}, protocol=2))
# Legacy streams torch.load reads differently (tests/torch/legacy_ambiguity.py): a tar
# archive hidden in the first key, a frame past STOP, a memo key torch cannot allocate.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import legacy_ambiguity  # noqa: E402
marker = "/tmp/stguard_fixture_marker"
refuse("TarAmbiguous", "tar_shaped_legacy", legacy_ambiguity.tar_shaped_legacy(marker))
refuse("PickleFrameAmbiguous", "long_frame_legacy", legacy_ambiguity.long_frame_legacy(marker))
refuse("PickleMemoKey", "huge_memo_key_legacy", legacy_ambiguity.huge_memo_key_legacy())
refuse("NotATorchCheckpoint", "text", b"hello world\n")


# Lying storages: rewrite data.pkl of a real checkpoint.
def real_zip(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def rewrite_zip(data, fn):
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            name, content = fn(info.filename, src.read(info.filename))
            if name is not None:
                z.writestr(name, content)
    return buf.getvalue()


good = real_zip({"w": torch.arange(6, dtype=torch.float32).reshape(2, 3)})


def patch_pkl(old, new):
    return rewrite_zip(good, lambda n, c: (n, c.replace(old, new) if n.endswith("data.pkl") else c))


# The pickle: ... K\x06 t Q K\x00 K\x02 K\x03 \x86 ... K\x03 K\x01 \x86 ...
refuse("StorageMismatch", "numel_mismatch", patch_pkl(b"K\x06tq", b"K\x07tq"))
refuse("TensorOutOfBounds", "view_past_end", patch_pkl(b"QK\x00K\x02K\x03", b"QK\x01K\x02K\x03"))
refuse("TensorOutOfBounds", "negative_stride", patch_pkl(b"K\x03K\x01\x86", b"K\x03J\xff\xff\xff\xff\x86"))
refuse("TensorOutOfBounds", "size_overflow",
       patch_pkl(b"QK\x00K\x02K\x03\x86", b"QK\x00\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x3fK\x03\x86"))
refuse("ZipMissingRecord", "missing_record",
       rewrite_zip(good, lambda n, c: (None, c) if "/data/" in n else (n, c)))
# ZIP tricks.
b = bytearray(good)
pos = b.rfind(b"PK\x01\x02")  # the last central directory entry: rename what it points at
first_cd = b.find(b"PK\x01\x02")
name_len = struct.unpack_from("<H", b, first_cd + 28)[0]
cd_name = first_cd + 46
b[cd_name + name_len - 3:cd_name + name_len] = b"pkX"
refuse("ZipHeaderMismatch", "cd_names_other_file", bytes(b))
b = bytearray(good)
data_start = b.find(b"\x80\x02")
b[data_start + 5] ^= 0x01
refuse("ZipChecksum", "bad_crc", bytes(b))
refuse("ZipFormat", "truncated", good[:len(good) // 2])
refuse("ZipFormat", "trailing_garbage", good + b"garbage")
lead = io.BytesIO()
lead.write(b"PK\x03\x04" + bytes(40))  # looks like a ZIP, but bytes precede the first record
with zipfile.ZipFile(lead, "a", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", P2 + b"}.")
refuse("ZipLayout", "leading_garbage", lead.getvalue())
two = io.BytesIO()
with zipfile.ZipFile(two, "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", P2 + b"}.")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.writestr("archive/data.pkl", P2 + b"N.")
refuse("ZipDuplicateName", "two_data_pkl", two.getvalue())
refuse("ZipBadName", "two_folders", zip_with_pickle(P2 + b"}.", extra={"../x": b""}))
two = io.BytesIO()
with zipfile.ZipFile(two, "w", zipfile.ZIP_STORED) as z:
    z.writestr("a/data.pkl", P2 + b"}.")
    z.writestr("b/version", b"3\n")
refuse("ZipBadName", "two_top_folders", two.getvalue())
comp = io.BytesIO()
with zipfile.ZipFile(comp, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("archive/data.pkl", P2 + b"}.")
refuse("ZipUnsupported", "deflated", comp.getvalue())
refuse("ZipMissingRecord", "no_data_pkl",
       rewrite_zip(good, lambda n, c: (n.replace("data.pkl", "other.pkl"), c)))
# Legacy lies.
legacy = io.BytesIO()
torch.save({"w": torch.arange(4.0)}, legacy, _use_new_zipfile_serialization=False)
lb = legacy.getvalue()
refuse("LegacyHeader", "legacy_big_endian", lb.replace(b"little_endian\x71\x02\x88", b"little_endian\x71\x02\x89"))
refuse("UnexpectedEnd", "legacy_truncated", lb[:-3])
refuse("TrailingContent", "legacy_trailing", lb + b"x")
refuse("NotAStateDict", "not_a_dict", real_zip([torch.ones(2)]))
# Amplification: a few bytes of pickle asking for far more output than the file holds
# (TorchOptions::max_output_ratio): a stride-0 view of one element, and many distinct
# overlapping windows of one storage (as_strided), each of which would get its own bytes.
refuse("OutputTooLarge", "expand_stride0", real_zip({"w": torch.zeros(1).expand(2_000_000)}))
window = torch.arange(16384, dtype=torch.float32)
refuse("OutputTooLarge", "overlapping_windows",
       real_zip({"w%d" % i: window.as_strided((16384 - i,), (1,), i) for i in range(40)}))
print("fixtures written to", out)
