# SPDX-License-Identifier: Apache-2.0
"""Adversarial torch checkpoints whose pickle is small but shares values: a reader that
copies a shared value each time it is used needs memory and time quadratic in the pickle.

Usage: make_hostile_pickles.py SHAPE OUT [PICKLE_BYTES]
Each SHAPE writes a torch ZIP checkpoint (stored records, as torch.save writes them) whose
data.pkl is about PICKLE_BYTES (default 1,000,000) long and whose one storage is 16 bytes.
No torch needed: the opcodes are written by hand (protocol 4, the subset torch.save uses).
"""
import struct
import sys
import zipfile

PROTO4 = b"\x80\x04"
MARK, STOP, TUPLE, REDUCE, SETITEM, SETITEMS = b"(", b".", b"t", b"R", b"s", b"u"
APPENDS, EMPTY_DICT, EMPTY_LIST, NEWFALSE = b"e", b"}", b"]", b"\x89"
BINPERSID, MEMOIZE = b"Q", b"\x94"

STORAGE_BYTES = 16


class Pickle:
    """Opcodes with a memo counter (MEMOIZE stores under len(memo))."""

    def __init__(self):
        self.out = bytearray(PROTO4)
        self.memo = 0

    def op(self, *parts):
        for part in parts:
            self.out += part

    def memoize(self):
        self.out += MEMOIZE
        self.memo += 1
        return self.memo - 1

    def get(self, key):
        self.out += b"h" + bytes([key]) if key < 256 else b"j" + struct.pack("<I", key)

    def int1(self, value):
        self.out += b"K" + bytes([value])

    def text(self, value):
        data = value.encode()
        self.out += b"\x8c" + bytes([len(data)]) + data

    def global_(self, module, name):
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def __len__(self):
        return len(self.out)


def tensor(p, rebuild, storage, hooks, sizes, strides):
    """_rebuild_tensor_v2(storage, 0, sizes, strides, False, {}); sizes and strides are
    memo keys, or callables that write the tuple in place (and return its memo key)."""
    p.get(rebuild)
    p.op(MARK)
    p.get(storage)
    p.int1(0)
    for part in (sizes, strides):
        p.get(part) if isinstance(part, int) else part()
    p.op(NEWFALSE)
    p.get(hooks)
    p.op(TUPLE, REDUCE)


def int_tuple(p, count, value):
    """Writes a tuple of `count` BININT1 in place and memoises it (it stays on the stack)."""
    p.op(MARK)
    for _ in range(count):
        p.int1(value)
    p.op(TUPLE)
    return p.memoize()


def shape_memo_reduce(size):
    """One memoised size tuple of N ones, used as sizes and strides by T tensors."""
    p = Pickle()
    keys = prefix(p)
    dims = size // 4
    shared = []
    p.op(MARK)
    p.text("t0")
    tensor(p, *keys, lambda: shared.append(int_tuple(p, dims, 1)), lambda: p.get(shared[0]))
    name = 1
    while len(p) < size:
        p.text("t%d" % name)
        tensor(p, *keys, shared[0], shared[0])
        name += 1
    p.op(SETITEMS)
    return finish(p)


def shape_tied_names(size):
    """One tensor of N unit dimensions, named T times (the state dict's walk copies)."""
    p = Pickle()
    keys = prefix(p)
    dims = size // 8
    p.op(MARK)
    p.text("t0")
    tensor(p, *keys, lambda: int_tuple(p, dims, 1), lambda: int_tuple(p, dims, 1))
    shared = p.memoize()
    name = 1
    while len(p) < size:
        p.text("t%d" % name)
        p.get(shared)
        name += 1
    p.op(SETITEMS)
    return finish(p)


def shape_nested_tuples(size):
    """Tuples of 64 memo references to the tuple one level down, many levels deep (each
    level is defined inside the next: MARK ... MARK ints TUPLE GET... TUPLE ...)."""
    p = Pickle()
    prefix(p)
    levels = size // 330
    p.text("nested")
    p.op(MARK * levels)
    level = int_tuple(p, 64, 1)
    for _ in range(levels):
        for _ in range(63):
            p.get(level)
        p.op(TUPLE)
        level = p.memoize()
    p.op(SETITEM)
    return finish(p)


def shape_list_of_gets(size):
    """A long list, then a list holding it T times by memo reference."""
    p = Pickle()
    prefix(p)
    p.text("lists")
    p.op(EMPTY_LIST, MARK, EMPTY_LIST, MARK)
    for _ in range(size // 4):
        p.int1(1)
    p.op(APPENDS)
    big = p.memoize()
    while len(p) < size:
        for _ in range(1000):
            p.get(big)
        p.op(APPENDS, MARK)
    p.op(APPENDS, SETITEM)
    return finish(p)


def shape_reduce_big_args(size):
    """A memoised argument tuple of N values REDUCEd on OrderedDict (refused at once)."""
    p = Pickle()
    prefix(p)
    p.text("od")
    p.global_("collections", "OrderedDict")
    int_tuple(p, size // 2, 1)
    p.op(REDUCE, SETITEM)
    return finish(p)


def shape_memoize_values(size):
    """As many values and memo entries per byte as the opcodes allow: EMPTY_DICT MEMOIZE,
    all left on the stack (refused at STOP)."""
    p = Pickle()
    prefix(p)
    while len(p) < size:
        p.op(EMPTY_DICT)
        p.memoize()
    return finish(p)


def prefix(p):
    """Leaves [root OrderedDict] on the stack, root["_"] a scalar tensor (so the dict is a
    state dict), and the rebuild global, the storage and an empty dict in the memo."""
    p.global_("collections", "OrderedDict")
    p.op(b")", REDUCE)
    p.text("_")
    p.global_("torch._utils", "_rebuild_tensor_v2")
    rebuild = p.memoize()
    p.op(MARK)
    p.op(MARK)
    p.text("storage")
    p.global_("torch", "ByteStorage")
    p.text("0")
    p.text("cpu")
    p.int1(STORAGE_BYTES)
    p.op(TUPLE, BINPERSID)
    storage = p.memoize()
    p.int1(0)
    p.op(b")")
    empty = p.memoize()
    p.get(empty)
    p.op(NEWFALSE, EMPTY_DICT)
    hooks = p.memoize()
    p.op(TUPLE, REDUCE, SETITEM)
    return rebuild, storage, hooks


def finish(p):
    p.op(STOP)
    return bytes(p.out)


def shape_shared_location(size):
    """A memoised location string of half the pickle, named by many storages."""
    p = Pickle()
    prefix(p)
    p.text("storages")
    p.op(EMPTY_LIST, MARK)
    location = None
    name = 1
    while len(p) < size:
        p.op(MARK)
        p.text("storage")
        p.global_("torch", "ByteStorage")
        p.text("k%d" % name)
        if location is None:
            data = b"cpu" * (size // 6)
            p.op(b"X" + struct.pack("<I", len(data)) + data)
            location = p.memoize()
        else:
            p.get(location)
        p.int1(STORAGE_BYTES)
        p.op(TUPLE, BINPERSID)
        name += 1
    p.op(APPENDS, SETITEM)
    return finish(p)


def shape_tied_within_budget(size):
    """Accepted: 8-dimension tensors, each under 16 names, as many as fit: the copies
    (sizes and strides, per tensor and per name) come to 1.7 per byte, near the budget."""
    p = Pickle()
    keys = prefix(p)
    name = 0
    p.op(MARK)
    while len(p) < size:
        p.text("t%d" % name)
        tensor(p, *keys, lambda: int_tuple(p, 8, 1), lambda: int_tuple(p, 8, 1))
        shared = p.memoize()
        for alias in range(15):
            p.text("u%d.%d" % (name, alias))
            p.get(shared)
        name += 1
        if name % 1000 == 0:  # SETITEMS in batches, as torch.save writes them
            p.op(SETITEMS, MARK)
    p.op(SETITEMS)
    return finish(p)


def shape_many_scalars(size):
    """Accepted: as many scalar tensors as fit (the most tensors per pickle byte)."""
    p = Pickle()
    keys = prefix(p)
    empty = []
    p.op(MARK)
    p.text("t0")
    tensor(p, *keys, lambda: (p.op(b")"), empty.append(p.memoize())), lambda: p.get(empty[0]))
    name = 1
    while len(p) < size:
        p.text("t%d" % name)
        tensor(p, *keys, empty[0], empty[0])
        name += 1
        if name % 1000 == 0:
            p.op(SETITEMS, MARK)
    p.op(SETITEMS)
    return finish(p)


SHAPES = {
    "shared_location": shape_shared_location,
    "tied_within_budget": shape_tied_within_budget,
    "many_scalars": shape_many_scalars,
    "memo_reduce": shape_memo_reduce,
    "tied_names": shape_tied_names,
    "nested_tuples": shape_nested_tuples,
    "list_of_gets": shape_list_of_gets,
    "reduce_big_args": shape_reduce_big_args,
    "memoize_values": shape_memoize_values,
}


def write_checkpoint(path, pickle_bytes):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickle_bytes)
        archive.writestr("archive/data/0", bytes(range(STORAGE_BYTES)))
        archive.writestr("archive/version", b"3\n")


if __name__ == "__main__":
    target = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    write_checkpoint(sys.argv[2], SHAPES[sys.argv[1]](target))
