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


def read_tree(root, folders):
    files = {}
    for folder in folders:
        for directory, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if name.endswith(('.cc', '.h', '.def')):
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
    for line in found:
        print(line)
    print(f'{len(sources)} files under src/, layers {" < ".join(order)}: '
          f'{len(found)} violations')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
