#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""pickletools' opcode table, in the terms of stguard's (src/pickle/opcodes.h).

    check_opcodes.py FILE          exit 1 unless FILE is what CPython's pickletools says
    check_opcodes.py --write FILE  write it
    check_opcodes.py --self-test   a changed line is caught

One line per opcode: its byte (hex), name, argument class, protocol, stack_before and
stack_after ('m' markobject, 's' stackslice, 'v' any other stack object; '-' none). The
argument class is pickletools' argument name for a fixed width (uint1, uint2, int4, uint4,
uint8, float8), len1/len4/len8 for a counted string, line or twolines for text up to a
newline, none. pickle_opcodes_test (tests/pickle_opcodes_test.cc) compares stguard's table
with the checked-in FILE, and ctest runs this script against it, so neither can drift from
CPython.
"""
import pickletools
import sys

COUNTED = {pickletools.TAKEN_FROM_ARGUMENT1: "len1", pickletools.TAKEN_FROM_ARGUMENT4: "len4",
           pickletools.TAKEN_FROM_ARGUMENT4U: "len4", pickletools.TAKEN_FROM_ARGUMENT8U: "len8"}


def arg_class(arg):
    if arg is None:
        return "none"
    if arg.n == pickletools.UP_TO_NEWLINE:
        return "twolines" if arg.name == "stringnl_noescape_pair" else "line"
    if arg.n in COUNTED:
        return COUNTED[arg.n]
    return arg.name


def stack(objects):
    letters = "".join("m" if o is pickletools.markobject else
                      "s" if o is pickletools.stackslice else "v" for o in objects)
    return letters or "-"


def table():
    rows = sorted(pickletools.opcodes, key=lambda o: ord(o.code))
    return "".join("0x%02x %s %s %d %s %s\n" % (ord(o.code), o.name, arg_class(o.arg), o.proto,
                                               stack(o.stack_before), stack(o.stack_after))
                   for o in rows)


def matches(text):
    return text == table()


def main(argv):
    if argv == ["--self-test"]:
        # Accept the table itself; reject it with one stack effect or one row changed.
        text = table()
        assert matches(text)
        assert not matches(text.replace("0x52 REDUCE none 0 vv v\n", "0x52 REDUCE none 0 v v\n"))
        assert not matches(text.replace("0x95 FRAME uint8 4", "0x95 FRAME uint8 3"))
        return 0
    if len(argv) == 2 and argv[0] == "--write":
        with open(argv[1], "w") as out:
            out.write(table())
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        if matches(f.read()):
            return 0
    print("%s differs from pickletools' table: regenerate it with --write and update "
          "src/pickle/opcodes.cc to match" % argv[0], file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
