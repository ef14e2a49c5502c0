#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_source_rules.py SOURCE_DIR: the rules of the source tree that a compiler does not check.

1. Layers. Includes inside src/ run only down the layers, in the order README.md's layout
   block lists the folders under src/ (lowest first): a file may include a header of its
   own folder or of a folder listed before it. A public header (stguard/X.h) belongs to
   the folder of the .cc file whose first include it is (src/write/writer.cc defines
   stguard/writer.h); public headers no .cc defines belong to no layer.
2. Header guards match paths: src/a/b.h is guarded by STGUARD_SRC_A_B_H_.
3. No test seam is spelt in src/: no STGUARD_TEST_ variable (tests/seams/ reads them).
4. No issue-tracker numbers in src/, include/ or cli/: say the rule instead.
5. No format dispatch outside the library: the front ends (cli/, src/capi/, python/, web/)
   print or forward what the library decides, and never branch on a format. A `case` label or an ==/!=
   comparison naming a Format enumerator (Format::kGguf, STGUARD_FORMAT_GGUF), or a
   format's word from include/stguard/formats.def ("gguf") compared, matched by `case`,
   tested with `in (...)` or used as a dict key, is a violation. Passing an enumerator
   as an argument (AppendValidEnvelope(path, Format::kGguf...)) is not: it forwards a fact.

Prints each violation and exits 1 if there is any. `--self-test` checks the checks on
small accepted and rejected samples.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ISSUE = re.compile(r'[Ii]ssue #?[0-9]+')


def layer_order(readme_text):
    """The src/ folders in README's layout block, lowest layer first."""
    order = []
    in_src = False
    for line in readme_text.splitlines():
        if line.startswith('src/'):
            in_src = True
            continue
        if in_src:
            match = re.match(r'^  ([a-z_]+)/\s', line)
            if match:
                order.append(match.group(1))
            elif not line.startswith('   '):
                break
    return order


def public_header_layers(sources):
    """stguard/X.h -> the folder whose .cc file includes it first."""
    owners = {}
    for path, text in sources.items():
        if not path.endswith('.cc'):
            continue
        first = INCLUDE.search(text)
        if first and first.group(1).startswith('stguard/'):
            owners.setdefault(first.group(1), path.split('/')[1])
    return owners


def layer_violations(sources, order):
    rank = {folder: i for i, folder in enumerate(order)}
    owners = public_header_layers(sources)
    found = []
    for path, text in sorted(sources.items()):
        folder = path.split('/')[1]
        if folder not in rank:
            found.append(f'{path}: folder {folder}/ is not in README.md\'s layer list')
            continue
        for included in INCLUDE.findall(text):
            target = owners.get(included) if included.startswith('stguard/') else \
                included.split('/')[0] if '/' in included else None
            if target in rank and rank[target] > rank[folder]:
                found.append(f'{path}: includes {included} ({target}/ is above {folder}/)')
    return found


def guard_violations(sources):
    found = []
    for path, text in sorted(sources.items()):
        if not path.endswith('.h'):
            continue
        want = 'STGUARD_' + re.sub(r'[/.]', '_', path[:-2]).upper() + '_H_'
        match = re.search(r'^#ifndef (\w+)', text, re.M)
        if not match or match.group(1) != want:
            found.append(f'{path}: header guard should be {want}')
    return found


def text_violations(files):
    found = []
    for path, text in sorted(files.items()):
        if path.startswith('src/') and 'STGUARD_TEST_' in text:
            found.append(f'{path}: names a STGUARD_TEST_ variable (test seams live in tests/)')
        if ISSUE.search(text):
            found.append(f'{path}: cites an issue number ("{ISSUE.search(text).group(0)}")')
    return found


FORMAT_ROW = re.compile(r'^STGUARD_FORMAT\(\w+,\s*\w+,\s*"([^"]+)"', re.M)
ENUMERATOR = r'(?:\b(?:\w+::)*Format::k\w+|\bSTGUARD_FORMAT_[A-Z_]+)'
ENUM_DISPATCH = re.compile(r'\bcase\s+' + ENUMERATOR + r'|[=!]=\s*' + ENUMERATOR + '|' +
                           ENUMERATOR + r'\s*[=!]=')
# Files whose dispatch moves into the library with work under way elsewhere, each with
# how many dispatching lines it may keep until then: more is a violation. Lower the counts
# and drop the rows as the work lands (none is left: every front end asks the library).
DISPATCH_PENDING = {}


# The front end that lives under src/ (the C API is compiled into the library, but only
# converts and forwards): it is held to the front ends' rule.
FRONT_IN_SRC = 'src/capi/'


def format_words(formats_def):
    """The formats' words ("unknown", "safetensors", "gguf"...) from formats.def's rows."""
    return FORMAT_ROW.findall(formats_def)


def word_dispatch(words):
    """A regex matching a format's word compared, matched, tested for membership or used
    as a dict key."""
    word = '["\'](?:' + '|'.join(re.escape(w) for w in words) + ')["\']'
    return re.compile(r'(?:===?|!==?)\s*' + word + '|' + word + r'\s*(?:===?|!==?)|'
                      r'\bcase\s+' + word + r'|\bin\s*[\(\[\{][^\)\]\}]*' + word + '|' +
                      r'^\s*' + word + r'\s*:', re.M)


def dispatch_violations(files, words, pending=None):
    pending = DISPATCH_PENDING if pending is None else pending
    found = []
    by_word = word_dispatch(words)
    for path, text in sorted(files.items()):
        if path.startswith('src/') and not path.startswith(FRONT_IN_SRC):
            continue
        lines = sorted({text.count('\n', 0, match.start()) + 1
                        for pattern in (ENUM_DISPATCH, by_word)
                        for match in pattern.finditer(text)})
        if len(lines) <= pending.get(path, 0):
            continue
        for line in lines:
            found.append(f'{path}:{line}: format dispatch in a front end: ask the library\'s '
                         'facts (stguard/formats.h) or let it do the work')
    return found


def read_tree(root, folders):
    files = {}
    for folder in folders:
        for directory, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if name.endswith(('.cc', '.h', '.def', '.py', '.js')):
                    path = os.path.join(directory, name)
                    with open(path, encoding='utf-8') as f:
                        files[os.path.relpath(path, root)] = f.read()
    return files


def self_test():
    order = layer_order('src/   lib\n  base/  b\n  write/  w\n                  more\n'
                        '  data/  d\ncli/   c\n')
    assert order == ['base', 'write', 'data'], order
    good = {'src/base/a.cc': '#include "stguard/a.h"\n',
            'src/data/d.cc': '#include "stguard/d.h"\n#include "base/x.h"\n',
            'src/data/x.h': '#ifndef STGUARD_SRC_DATA_X_H_\n'}
    assert layer_violations(good, order) == []
    assert guard_violations(good) == []
    assert text_violations(good) == []
    bad = {'src/base/a.cc': '#include "stguard/a.h"\n#include "data/x.h"\n',
           'src/write/w.cc': '#include "stguard/w.h"\n#include "stguard/d.h"\n',
           'src/data/d.cc': '#include "stguard/d.h"\n',
           'src/data/x.h': '#ifndef STGUARD_SRC_X_H_\n// issue 12\n',
           'src/base/t.cc': 'getenv("STGUARD_TEST_X")'}
    assert len(layer_violations(bad, order)) == 2, layer_violations(bad, order)
    assert len(guard_violations(bad)) == 1
    assert len(text_violations(bad)) == 2
    words = format_words('STGUARD_FORMAT(Unknown, UNKNOWN, "unknown", "", 0)\n'
                         'STGUARD_FORMAT(Gguf, GGUF, "gguf", "GGUF", 1)\n'
                         'STGUARD_FORMAT(Npy, NPY, "npy", ".npy", 1)\n')
    assert words == ['unknown', 'gguf', 'npy'], words
    forwards = {'cli/a.cc': 'AppendValidEnvelope(path, Format::kGguf, &out);\n'
                            'if (facts.convertible) return FormatName(format);\n',
                'python/stguard/a.py': 'kind = {"format": "gguf"}\nprint("npy files")\n'
                                       'fmt = raw.get("format", "unknown")\n',
                'web/a.js': "const line = result.format ? ` \u00b7 ${result.format}` : '';\n",
                'src/a.cc': 'switch (f) {\n  case Format::kGguf: return "gguf";\n}\n',
                'src/capi/a.cc': 'return static_cast<stguard_format>(SniffFormat(bytes));\n'}
    assert dispatch_violations(forwards, words, pending={}) == []
    dispatches = {'cli/a.cc': 'switch (f) {\n  case Format::kGguf: break;\n}\n',
                  'cli/b.cc': 'if (format == stguard::Format::kNpy) return;\n',
                  'cli/c.cc': 'if (STGUARD_FORMAT_GGUF != format) return;\n',
                  'python/stguard/a.py': 'if raw["format"] == "npy":\n    pass\n',
                  'python/stguard/b.py': 'if name in ("gguf", "x"):\n    pass\n',
                  'python/stguard/c.py': 'TABLE = {\n    "gguf": 1,\n}\n',
                  'web/app.js': 'switch (r.format) { case "npy": break; }\n',
                  'web/b.js': "const f = r.format !== 'unknown' ? r.format : '';\n",
                  'src/capi/b.cc': 'if (format == STGUARD_FORMAT_NPY) return 1;\n'}
    flagged = dispatch_violations(dispatches, words, pending={})
    assert len(flagged) == len(dispatches), flagged
    # A file allowed one dispatching line fails at a second.
    assert dispatch_violations({'cli/b.cc': dispatches['cli/b.cc']}, words, {'cli/b.cc': 1}) == []
    assert len(dispatch_violations({'cli/b.cc': dispatches['cli/b.cc'] * 2}, words,
                                   {'cli/b.cc': 1})) == 2
    print('self-test passed')


def main():
    if sys.argv[1:] == ['--self-test']:
        self_test()
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        order = layer_order(f.read())
    sources = read_tree(root, ['src'])
    found = layer_violations(sources, order) + guard_violations(sources)
    found += text_violations(read_tree(root, ['src', 'include', 'cli']))
    with open(os.path.join(root, 'include/stguard/formats.def'), encoding='utf-8') as f:
        words = format_words(f.read())
    found += dispatch_violations(read_tree(root, ['cli', FRONT_IN_SRC, 'python/src',
                                                  'python/stguard', 'web']), words)
    for line in found:
        print(line)
    print(f'{len(sources)} files under src/, layers {" < ".join(order)}: '
          f'{len(found)} violations')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
