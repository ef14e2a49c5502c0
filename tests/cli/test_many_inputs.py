#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_many_inputs.py STGUARD CORPUS: check, scan and lint over many inputs.

--jobs keeps the input order, --from reads inputs (a file or standard input), --json is
JSON Lines, the summary goes to standard error, the exit status is the worst verdict's,
and --sarif writes a log that validates against the SARIF 2.1.0 schema (fetched by
tools/fetch_sarif_schema.sh; skipped, saying so, when it or python3-jsonschema is absent),
never onto an input.
"""
import json
import os
import subprocess
import sys
import tempfile

STGUARD, CORPUS = sys.argv[1], sys.argv[2]
SCHEMA = os.environ.get('STGUARD_SARIF_SCHEMA') or os.path.join(
    os.environ.get('STGUARD_CACHE', os.path.expanduser('~/.cache/stguard')),
    'sarif-schema', 'sarif-2.1.0-rtm.5.json')
failures = []


def run(*args, stdin=None):
    return subprocess.run([STGUARD, *args], capture_output=True, text=True, input=stdin)


def expect(condition, what):
    if not condition:
        failures.append(what)


def inputs():
    torch = os.path.join(CORPUS, 'torch')
    paths = [os.path.join(CORPUS, 'sample.safetensors'), os.path.join(torch, 'valid')]
    for sub in ('valid', 'refuse'):
        folder = os.path.join(torch, sub)
        paths += [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
    folder = os.path.join(CORPUS, 'invalid')
    paths += [os.path.join(folder, name) for name in sorted(os.listdir(folder))[:20]]
    return paths + [os.path.join(CORPUS, 'no such file')]


def check_order_and_json_lines(paths):
    one = run('check', '--json', '--jobs', '1', *paths)
    two = run('check', '--json', '-j', '2', *paths)
    expect(one.stdout == two.stdout, '--jobs 2 prints what --jobs 1 prints, in order')
    lines = [json.loads(line) for line in one.stdout.splitlines()]
    expect([line['file'] for line in lines] == paths, 'one JSON object per line, in input order')
    verdicts = {line['verdict'] for line in lines}
    expect(verdicts == {'valid', 'invalid', 'refused', 'error'}, f'every verdict: {verdicts}')
    # Refused outranks error: the exit status is 1, not the largest number (2).
    expect(one.returncode == 1, f'worst verdict refused exits 1, got {one.returncode}')
    summary = one.stderr.strip().splitlines()[-1]
    counts = {v: sum(line['verdict'] == v for line in lines) for v in verdicts}
    expect(summary.startswith(f"{len(paths)} files: {counts['valid']} valid, "
                              f"{counts['invalid']} invalid, {counts['refused']} refused, "
                              f"{counts['error']} error"), f'summary: {summary}')
    lone = run('check', paths[0])
    expect(lone.returncode == 0 and lone.stderr == '', 'one input: no summary')
    unreadable = run('check', paths[0], paths[-1])
    expect(unreadable.returncode == 2, 'an unreadable input alone exits 2')


def check_from(paths, scratch):
    listing = os.path.join(scratch, 'list.txt')
    with open(listing, 'w') as f:
        f.write('\n'.join(paths[1:]) + '\n\n')
    direct = run('check', '--json', *paths)
    listed = run('check', '--json', '--from', listing, paths[0])
    expect(listed.stdout.splitlines() == direct.stdout.splitlines()[0:1] +
           direct.stdout.splitlines()[1:], '--from FILE adds its lines after the operands')
    piped = run('scan', '--json', '--from', '-', stdin='\n'.join(paths) + '\n')
    scanned = run('scan', '--json', *paths)
    expect(piped.stdout == scanned.stdout and piped.returncode == scanned.returncode,
           '--from - reads standard input')
    missing = run('check', '--from', os.path.join(scratch, 'absent'))
    expect(missing.returncode == 2 and 'cannot read --from' in missing.stderr,
           'an unreadable --from is a usage error')
    with open(listing, 'wb') as f:
        f.write(b'a\0b\n')
    nul = run('check', '--from', listing)
    expect(nul.returncode == 2 and 'line 1' in nul.stderr, 'a NUL byte in --from is refused')
    for jobs in ('0', '257', 'x'):
        expect(run('check', '--jobs', jobs, paths[0]).returncode == 2, f'--jobs {jobs} refused')


def check_sarif(paths, scratch):
    log = os.path.join(scratch, 'out.sarif')
    result = run('scan', '--sarif', log, *paths)
    expect(result.returncode == 1, 'scan --sarif keeps the exit status')
    with open(log) as f:
        sarif = json.load(f)
    results = sarif['runs'][0]['results']
    expect(len(sarif['runs']) == 1, 'one run')
    expect(all(r['locations'][0]['physicalLocation']['region']['startLine'] == 1
               for r in results), 'every result on line 1')
    expect(any('byteOffset' in r['locations'][0]['physicalLocation']['region']
               for r in results), 'errors with an offset carry byteOffset')
    rules = sarif['runs'][0]['tool']['driver']['rules']
    expect(all(rules[r['ruleIndex']]['id'] == r['ruleId'] for r in results), 'ruleIndex')
    expect(any(r['id'] == 'NotARegularFile' and r['help']['text'] ==
               'the path names a directory, device or other non-file' for r in rules),
           "rules carry error_codes.def's text")
    uris = {r['locations'][0]['physicalLocation']['artifactLocation']['uri'] for r in results}
    expect(not any(p.endswith('.pt') and p.startswith(os.path.join(CORPUS, 'torch', 'valid'))
                   for p in uris), 'valid files have no result')
    victim = os.path.join(scratch, 'victim.bin')
    with open(victim, 'wb') as f:
        f.write(b'\x80\x02}q\x00.')
    onto = run('check', '--sarif', victim, victim)
    with open(victim, 'rb') as f:
        expect(f.read() == b'\x80\x02}q\x00.' and onto.returncode == 2,
               '--sarif onto an input is refused, the input untouched')
    try:
        import jsonschema
    except ImportError:
        print('skipped SARIF schema validation: python3-jsonschema is not installed')
        return
    if not os.path.exists(SCHEMA):
        print(f'skipped SARIF schema validation: {SCHEMA} absent (tools/fetch_sarif_schema.sh)')
        return
    with open(SCHEMA) as f:
        schema = json.load(f)
    for command in ('check', 'scan', 'lint'):
        run(command, '--sarif', log, *paths)
        with open(log) as f:
            jsonschema.validate(json.load(f), schema)
    broken = dict(sarif, version='2.0')
    try:
        jsonschema.validate(broken, schema)
        failures.append('the schema rejects a wrong version')
    except jsonschema.ValidationError:
        pass
    print('SARIF validated against the 2.1.0 schema')


def main():
    paths = inputs()
    with tempfile.TemporaryDirectory() as scratch:
        check_order_and_json_lines(paths)
        check_from(paths, scratch)
        check_sarif(paths, scratch)
    lint = run('lint', '--json', os.path.join(CORPUS, 'sample.safetensors'),
               os.path.join(CORPUS, 'torch', 'valid'))
    expect(len(lint.stdout.splitlines()) == 2, 'lint takes several inputs, one line each')
    for failure in failures:
        print('FAIL:', failure)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
