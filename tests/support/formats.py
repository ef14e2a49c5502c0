# SPDX-License-Identifier: Apache-2.0
"""What the tests know about formats, all read from data a new format adds anyway:

- words(): the formats' words ("unknown", "safetensors"...) in include/stguard/formats.def's
  order, the words the JSON envelope's "format" prints (besides "folder");
- samples(): one file of every format, corpus/formats/WORD.EXT (the word is the name up
  to its first dot); a format without one fails the tests that run every format;
- envelope_schema(): the JSON envelope's schema, tests/cli/envelope.schema.json.in with
  its "format" enum filled from formats.def (the one place the schema's format list is
  made: every test that validates against the schema reads it from here).

Run as a program, it prints the filled schema: `python3 tests/support/formats.py >
envelope.schema.json` writes the file a user of --json validates against.
Standard library only; import with tests/support on sys.path.
"""
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ROW = re.compile(r'^STGUARD_FORMAT\(\w+,\s*\w+,\s*"([^"]+)"', re.M)
# The one element of the template's "format" enum that stands for formats.def's words.
PLACEHOLDER = "@formats.def@"


def words(root=ROOT):
    """formats.def's words, in value order."""
    with open(os.path.join(root, "include", "stguard", "formats.def"), encoding="utf-8") as f:
        found = ROW.findall(f.read())
    if not found:
        raise ValueError("formats.def: no STGUARD_FORMAT row read")
    return found


def samples(root=ROOT):
    """{word: path} of corpus/formats/, one file of each format."""
    folder = os.path.join(root, "corpus", "formats")
    out = {}
    for name in sorted(os.listdir(folder)):
        word = name.split(".")[0]
        if word in out:
            raise ValueError(f"corpus/formats: two samples of {word}: {out[word]}, {name}")
        out[word] = os.path.join(folder, name)
    return out


def fill_formats(template, format_words):
    """The schema `template` with its "format" enum's placeholder replaced by
    `format_words`. A template without the placeholder (a hand-written list) is refused."""
    enum = template["properties"]["format"]["enum"]
    if not isinstance(enum, list) or enum.count(PLACEHOLDER) != 1:
        raise ValueError(f'the schema\'s "format" enum must hold "{PLACEHOLDER}" once (the '
                         f"formats come from formats.def, not from a list here): {enum}")
    at = enum.index(PLACEHOLDER)
    filled = enum[:at] + list(format_words) + enum[at + 1:]
    if len(set(filled)) != len(filled):
        raise ValueError(f'the schema\'s "format" enum repeats a word: {filled}')
    template["properties"]["format"]["enum"] = filled
    return template


def envelope_schema(root=ROOT):
    """The envelope's schema, its format list from formats.def."""
    path = os.path.join(root, "tests", "cli", "envelope.schema.json.in")
    with open(path, encoding="utf-8") as f:
        template = json.load(f)
    return fill_formats(template, words(root))


if __name__ == "__main__":
    json.dump(envelope_schema(), sys.stdout, indent=2)
    sys.stdout.write("\n")
