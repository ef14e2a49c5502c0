#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Make the torch 2.x checkpoint fixtures that Debian's torch 1.13 cannot write.

  make_torch2_fixtures.py CORPUS_TORCH_DIR      (normally corpus/torch)

torch 2.x saves a tensor whose dtype has no legacy storage class (torch/storage.py
_new_dtypes: float8_*, uint16/32/64, complex32, ...) as (torch/_tensor.py
_reduce_ex_internal)

    torch._utils._rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
                                    backward_hooks, dtype[, metadata])

on the tensor's *untyped* storage, whose persistent id (torch/serialization.py _save /
_legacy_save, persistent_id) is

    ("storage", torch.storage.UntypedStorage, key, location, nbytes)        zip
    ("storage", torch.storage.UntypedStorage, key, location, nbytes, None)  legacy

and a torch.dtype pickles as the global torch.<name>. This script pickles the same object
graph with the same stdlib Pickler (protocol 2, as torch.save) using stand-ins that pickle
under those names, so the bytes are what torch 2.x writes; the ZIP is written by torch's
own PyTorchFileWriter (64-byte aligned records), with torch 2.x's extra records
(.format_version, .storage_alignment, byteorder, .data/serialization_id).

Writes torch2/*.pt (valid; torch 1.13 cannot load them, so they are not in valid/) and
refuse/<ErrorCode>__torch2_*.pt (checked by tests/torch/test_torch_convert.py like every
refusal). The C++ test tests/torch_checkpoint_test.cc knows the valid files' contents.
"""
import collections
import io
import os
import pickle
import struct
import sys

import torch

out = sys.argv[1]
os.makedirs(os.path.join(out, "torch2"), exist_ok=True)
os.makedirs(os.path.join(out, "refuse"), exist_ok=True)


# --- stand-ins that pickle under torch 2.x's names ------------------------------------
class FakeDtype:
    """A torch.dtype: pickles by name as the global torch.<name> (dtype.__reduce__)."""

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return self.name


FakeDtype.__module__ = "torch"


def dtype(name):
    if not isinstance(getattr(torch, name, None), (torch.dtype, FakeDtype)):
        setattr(torch, name, FakeDtype(name))  # torch 1.13 lacks most of them
    return getattr(torch, name)


def _rebuild_tensor_v3(*args):  # never called: only its name is pickled
    raise AssertionError


_rebuild_tensor_v3.__module__ = "torch._utils"
torch._utils._rebuild_tensor_v3 = _rebuild_tensor_v3


class Storage:
    """An untyped storage: its bytes, named by persistent id."""

    def __init__(self, key, data, storage_type=torch.storage.UntypedStorage, numel=None):
        self.key, self.data, self.storage_type = key, data, storage_type
        self.numel = len(data) if numel is None else numel


class Tensor:
    def __init__(self, storage, offset, size, stride, dtype_global, extra=None, func=None,
                 args=None):
        self.args = args if args is not None else (
            (storage, offset, tuple(size), tuple(stride), False, collections.OrderedDict(),
             dtype_global) + (extra or ()))
        self.func = func or torch._utils._rebuild_tensor_v3

    def __reduce_ex__(self, proto):
        return (self.func, self.args)


def pickled(obj, legacy):
    storages = {}

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if not isinstance(obj, Storage):
                return None
            storages.setdefault(obj.key, obj)
            pid = ("storage", obj.storage_type, obj.key, "cpu", obj.numel)
            return pid + (None,) if legacy else pid

    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(obj)
    return buf.getvalue(), storages


def zip_checkpoint(obj, folder="archive"):
    data, storages = pickled(obj, legacy=False)
    buf = io.BytesIO()
    writer = torch._C.PyTorchFileWriter(buf)
    # torch/serialization.py _save: data.pkl, .format_version, .storage_alignment,
    # byteorder, data/<key>...; the writer adds version (and, in 2.x, serialization_id).
    records = [("data.pkl", data), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", b"little")]
    records += [(f"data/{key}", s.data) for key, s in sorted(storages.items())]
    records += [(".data/serialization_id", b"1234567890123456789000")]
    for name, content in records:
        writer.write_record(name, content, len(content))
    writer.write_end_of_file()
    blob = buf.getvalue()
    if folder != "archive":
        raise ValueError("PyTorchFileWriter names the folder 'archive' for a buffer")
    return blob


def legacy_checkpoint(obj):
    data, storages = pickled(obj, legacy=True)
    out = io.BytesIO()
    for value in (0x1950a86a20f9469cfc6c, 1001,
                  {"protocol_version": 1001, "little_endian": True,
                   "type_sizes": {"short": 2, "int": 4, "long": 8}}):
        pickle.dump(value, out, protocol=2)
    out.write(data)
    keys = sorted(storages)
    pickle.dump(keys, out, protocol=2)
    for key in keys:  # _write_file of an untyped storage: int64 byte count, bytes
        s = storages[key]
        out.write(struct.pack("<q", len(s.data)))
        out.write(s.data)
    return out.getvalue()


def write(path, blob):
    with open(os.path.join(out, path), "wb") as f:
        f.write(blob)


# --- valid ------------------------------------------------------------------------------
# Bytes chosen so each tensor's expected content is easy to state in the C++ test.
e4m3 = Storage("0", bytes(range(12)))                           # float8_e4m3fn [3, 4]
e5m2 = Storage("1", bytes(range(100, 106)))                     # float8_e5m2 [6]
u16 = Storage("2", struct.pack("<6H", 1, 2, 3, 65534, 65535, 7))  # uint16 [2, 3]
u32 = Storage("3", struct.pack("<2I", 4000000000, 5))           # uint32 [2]
u64 = Storage("4", struct.pack("<Q", 2**64 - 1))                # uint64 [] (a scalar)
state = collections.OrderedDict([
    ("fp8.e4m3", Tensor(e4m3, 0, [3, 4], [4, 1], dtype("float8_e4m3fn"))),
    ("fp8.e4m3.t", Tensor(e4m3, 0, [4, 3], [1, 4], dtype("float8_e4m3fn"))),  # transposed
    ("fp8.e5m2", Tensor(e5m2, 0, [6], [1], dtype("float8_e5m2"))),
    ("u16", Tensor(u16, 0, [2, 3], [3, 1], dtype("uint16"))),
    ("u16.row1", Tensor(u16, 3, [3], [1], dtype("uint16"))),  # a part of the storage
    ("u32", Tensor(u32, 0, [2], [1], dtype("uint32"), extra=(None,))),  # metadata None
    ("u64", Tensor(u64, 0, [], [], dtype("uint64"))),
])
write("torch2/new_dtypes.zip.pt", zip_checkpoint(state))
write("torch2/new_dtypes.legacy.pt", legacy_checkpoint(state))


# --- refused ------------------------------------------------------------------------------
def refuse(code, name, obj, legacy=False):
    write(f"refuse/{code}__torch2_{name}.pt",
          legacy_checkpoint(obj) if legacy else zip_checkpoint(obj))


s = Storage("0", bytes(8))
# complex32 is a torch 2.x dtype with no safetensors dtype.
refuse("PickleGlobalRefused", "complex32",
       {"w": Tensor(s, 0, [2], [1], dtype("complex32"))})
# A legacy dtype is never _rebuild_tensor_v3's argument (torch writes v2 for it).
refuse("PickleGlobalRefused", "v3_float32", {"w": Tensor(s, 0, [2], [1], torch.float32)})
refuse("PickleGlobalRefused", "float4_legacy",
       {"w": Tensor(s, 0, [2], [1], dtype("float4_e2m1fn_x2"))}, legacy=True)
# Argument shapes.
refuse("PickleBadArguments", "v3_missing_dtype",
       {"w": Tensor(None, 0, [], [], None,
                    args=(s, 0, (8,), (1,), False, collections.OrderedDict()))})
refuse("PickleBadArguments", "v3_dtype_not_a_dtype",
       {"w": Tensor(None, 0, [], [], None,
                    args=(s, 0, (8,), (1,), False, collections.OrderedDict(), "uint8"))})
refuse("PickleBadArguments", "v3_typed_storage",
       {"w": Tensor(Storage("0", bytes(8), torch.FloatStorage, 2), 0, [2], [1],
                    dtype("uint32"))})
refuse("PickleBadArguments", "v2_untyped_storage",
       {"w": Tensor(None, 0, [], [], None, func=torch._utils._rebuild_tensor_v2,
                    args=(s, 0, (8,), (1,), False, collections.OrderedDict()))})
refuse("PickleBadArguments", "v3_metadata_dict",
       {"w": Tensor(s, 0, [2], [1], dtype("uint32"), extra=({"x": 1},))})
# Storages that lie about their bytes.
refuse("StorageMismatch", "v3_partial_element",
       {"w": Tensor(Storage("0", bytes(6)), 0, [1], [1], dtype("uint32"))})
refuse("StorageMismatch", "v3_two_dtypes",
       {"a": Tensor(s, 0, [2], [1], dtype("uint32")),
        "b": Tensor(s, 0, [4], [1], dtype("uint16"))})
refuse("TensorOutOfBounds", "v3_view_past_end",
       {"w": Tensor(s, 0, [3], [1], dtype("uint32"))})  # 8 bytes hold 2 uint32
refuse("StorageMismatch", "v3_numel_is_bytes",  # the pid counts bytes, not elements
       {"w": Tensor(Storage("0", bytes(8), numel=2), 0, [2], [1], dtype("uint32"))})
