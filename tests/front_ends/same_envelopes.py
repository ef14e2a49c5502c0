#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The same 40 inputs through every front end give the same envelope.

The inputs are the sample of every format (corpus/formats/: one per word of formats.def, so
a new format's sample joins by itself and makes 41), invalid and refused files of each
reader, an empty file, folders (valid, refused, a missing shard, mixed formats, empty, an
index file) and a path that does not exist; valid, invalid, refused and error verdicts.
Each is judged by

  - the CLI: `stguard check --json PATH...` (one process, one line per path, in order);
  - the C API: stguard_check_path and stguard_result_json, from a C99 program
    (`tests/capi/capi_check_c99_test.c --json PATH...`);
  - Python: stguard.check(PATH), its envelope fields;
  - the WebAssembly glue under node (tests/web/node_envelopes.js): a file through a byte
    source, a folder through the module's file system. Skipped, saying so, when node or
    build-web/stguard.js is absent (tools/build-web.sh builds it), unless the environment
    sets STGUARD_REQUIRE_WEB=1 (.ci/run reruns the test so once build-web exists): then
    their absence fails. The path that does not exist is not given to it (a page is only
    ever given files that exist).

Lint likewise: `stguard lint --json` on a model folder lint finds clean, one with findings,
one check refuses, a GGUF file (lint does not read it) and a folder whose --config cannot be
read (lint cannot run) gives the object Python's stguard.lint holds field for field, and,
for the folders, the page's "lint" object key for key (null where check did not pass: the
page lints only what check found valid, and its envelope is then lint's).

The envelope is schema_version, file, format, verdict, and when not valid code, message,
offset (only when it points into a file), member (inside a folder), tensor: the JSON front
ends must print those keys in that order with equal values; Python's fields (None for a key
the JSON leaves out, "" for no member) must hold the same values.

Usage: same_envelopes.py REPO STGUARD_CLI CAPI_CHECK_C99_TEST PYTHONPATH BUILD_WEB
(PYTHONPATH "none" when the Python module is not built: that part is skipped, saying so.)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import formats  # noqa: E402

ENVELOPE = ["schema_version", "file", "format", "verdict", "code", "message", "offset",
            "member", "tensor"]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def copy(source, target):
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy(source, target)
    return target


def inputs(repo, tmp):
    """The paths (40 with today's formats), absolute."""
    corpus = os.path.join(repo, "corpus")
    conf = os.path.join(repo, "conformance")
    torch = os.path.join(corpus, "torch")
    samples = formats.samples(repo)
    files = list(samples.values()) + [
        # safetensors: valid, invalid with an offset and a tensor, implementation-defined
        os.path.join(corpus, "valid", "every_dtype.safetensors"),
        os.path.join(corpus, "invalid", "DuplicateKey__tensor_twice.safetensors"),
        os.path.join(conf, "safetensors", "n_dtype_BF16_size_plus_one.safetensors"),
        os.path.join(conf, "safetensors", "i_metadata_not_object__null.safetensors"),
        # PyTorch ZIP and legacy, bare pickles, tar-shaped: refused, invalid
        os.path.join(torch, "refuse", "PickleGlobalRefused__zip_os_system.pt"),
        os.path.join(torch, "refuse", "PickleGlobalRefused__legacy_os_system.pt"),
        os.path.join(torch, "refuse", "PickleGlobalRefused__raw_os_system.pt"),
        os.path.join(torch, "refuse", "TarAmbiguous__tar_shaped_legacy.pt"),
        os.path.join(torch, "refuse", "ZipChecksum__bad_crc.pt"),
        os.path.join(torch, "refuse", "UnexpectedEnd__legacy_truncated.pt"),
        os.path.join(torch, "refuse", "NotATorchCheckpoint__text.pt"),
        os.path.join(conf, "pytorch", "n_constants_pkl.pt"),
        # GGUF
        os.path.join(conf, "gguf", "n_alignment_0.gguf"),
        os.path.join(corpus, "gguf", "refuse", "GgufBadMagic__bad_magic.gguf"),
        os.path.join(corpus, "gguf", "refuse", "GgufBlockMismatch__row_not_whole_blocks.gguf"),
        # npy and npz
        os.path.join(conf, "npy", "n_code_in_header.npy"),
        os.path.join(conf, "npy", "n_object_dtype.npy"),
        os.path.join(conf, "npz", "y_empty_archive.npz"),
        os.path.join(conf, "npz", "n_bad_crc.npz"),
        # generated: an empty file
        write(os.path.join(tmp, "files", "empty.safetensors"), b""),
    ]
    valid_st = samples["safetensors"]
    raw_os_system = os.path.join(torch, "refuse", "PickleGlobalRefused__raw_os_system.pt")
    good = os.path.join(tmp, "good")
    copy(valid_st, os.path.join(good, "model.safetensors"))
    evil = os.path.join(tmp, "evil")
    copy(valid_st, os.path.join(evil, "model.safetensors"))
    copy(raw_os_system, os.path.join(evil, "sub", "extra.pt"))
    no_shard = os.path.join(tmp, "no_shard")
    write(os.path.join(no_shard, "model.safetensors.index.json"),
          b'{"metadata":{},"weight_map":{"t":"model-00001-of-00001.safetensors"}}')
    mixed = os.path.join(tmp, "mixed")
    copy(samples["gguf"], os.path.join(mixed, "model.gguf"))
    copy(samples["npy"], os.path.join(mixed, "array.npy"))
    copy(samples["npz"], os.path.join(mixed, "arrays.npz"))
    broken_member = os.path.join(tmp, "broken_member")
    copy(valid_st, os.path.join(broken_member, "model.safetensors"))
    copy(os.path.join(conf, "npy", "n_code_in_header.npy"), os.path.join(broken_member, "bad.npy"))
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    sharded = os.path.join(torch, "valid", "sharded")
    folders = [sharded, os.path.join(sharded, "pytorch_model.bin.index.json"), good, evil,
               no_shard, mixed, broken_member, empty]
    return files + folders


def json_envelope(line):
    """The envelope's keys of one JSON line, in the order printed."""
    value = json.loads(line)
    return [(key, value[key]) for key in value if key in ENVELOPE]


def cli_envelopes(cli, paths):
    run = subprocess.run([cli, "check", "--json", *paths], capture_output=True, text=True,
                         timeout=120)
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    if len(lines) != len(paths):
        raise AssertionError(f"CLI printed {len(lines)} lines for {len(paths)} paths: "
                             f"{run.stdout}{run.stderr}")
    return [json_envelope(line) for line in lines]


def capi_envelopes(printer, paths):
    # It exits with the worst verdict's status, as the CLI does: only the lines matter here.
    run = subprocess.run([printer, "--json", *paths], capture_output=True, text=True,
                         timeout=120)
    return [json_envelope(line) for line in run.stdout.splitlines()]


def python_envelopes(pythonpath, paths):
    sys.path.insert(0, pythonpath)
    import stguard  # noqa: E402 (the module built in this tree)
    out = []
    for path in paths:
        result = stguard.check(path)
        fields = {key: getattr(result, key) for key in ENVELOPE}
        out.append({key: value for key, value in fields.items()
                    if value is not None and not (key == "member" and value == "")})
    return out


def node_answers(repo, build_web, paths):
    """The glue's whole answer for each path, as JSON text (keys in the order given)."""
    script = os.path.join(repo, "tests", "web", "node_envelopes.js")
    run = subprocess.run(["node", "--no-experimental-fetch", script, build_web, *paths],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise AssertionError(f"node_envelopes.js: exit {run.returncode}: {run.stderr}")
    return run.stdout.splitlines()


def node_envelopes(repo, build_web, paths):
    return [json_envelope(line) for line in node_answers(repo, build_web, paths)]


def compare(name, gots, expecteds, paths, failures):
    """Each of `gots` against the CLI's envelope of the same path (as a dict for Python)."""
    if len(gots) != len(paths):
        failures.append(f"{name}: {len(gots)} envelopes for {len(paths)} paths")
    for path, got, expected in zip(paths, gots, expecteds):
        if got != (dict(expected) if isinstance(got, dict) else expected):
            failures.append(f"{path}:\n  CLI    {expected}\n  {name:6} {got}")


LLAMA_CONFIG = (b'{"model_type":"llama","hidden_size":64,"num_hidden_layers":1,'
                b'"num_attention_heads":4,"intermediate_size":128,"vocab_size":32}')


def lint_inputs(repo, tmp):
    """(path, --config or None, whether the page lints it): a model folder lint finds
    clean (a warning only), one with findings (shapes against config.json), one check
    refuses (lint does not run), a GGUF file (lint does not read it) and a folder whose
    --config cannot be read (lint cannot run). The page lints folders only, on its own
    config.json."""
    corpus = os.path.join(repo, "corpus")
    clean = os.path.join(tmp, "lint", "clean")
    copy(os.path.join(corpus, "valid", "worked_example.safetensors"),
         os.path.join(clean, "model.safetensors"))
    write(os.path.join(clean, "config.json"), b'{"architectures": []}')
    findings = os.path.join(tmp, "lint", "findings")
    copy(os.path.join(corpus, "sample.safetensors"), os.path.join(findings, "model.safetensors"))
    write(os.path.join(findings, "config.json"), LLAMA_CONFIG)
    refused = os.path.join(tmp, "lint", "refused")
    copy(os.path.join(corpus, "sample.safetensors"), os.path.join(refused, "model.safetensors"))
    copy(os.path.join(corpus, "torch", "refuse", "PickleGlobalRefused__raw_os_system.pt"),
         os.path.join(refused, "sub", "extra.pt"))
    write(os.path.join(refused, "config.json"), LLAMA_CONFIG)
    gguf = os.path.join(repo, "conformance", "gguf", "y_alignment_16.gguf")
    return [(clean, None, True), (findings, None, True), (refused, None, True),
            (gguf, None, False), (clean, os.path.join(tmp, "lint", "absent.json"), False)]


def ordered(value):
    """A JSON value as text with its keys in their order: equal exactly when the objects
    are, key order included."""
    return json.dumps(value, ensure_ascii=False)


def python_lint(pythonpath, path, config):
    """stguard.lint's fields, as the command's JSON names them."""
    import dataclasses
    sys.path.insert(0, pythonpath)
    import stguard  # noqa: E402 (the module built in this tree)
    result = stguard.lint(path, config)
    fields = {key: getattr(result, key) for key in ENVELOPE}
    fields = {key: value for key, value in fields.items()
              if value is not None and not (key == "member" and value == "")}
    if result.linted:
        fields.update(family=result.family, tensors=result.tensors, shards=result.shards,
                      errors=result.errors, warnings=result.warnings,
                      findings=[dataclasses.asdict(f) for f in result.findings])
    return fields


def lint_same(repo, cli, pythonpath, build_web, tmp):
    """`stguard lint --json` against Python's stguard.lint and the page's "lint" object."""
    failures = []
    cases = lint_inputs(repo, tmp)
    printed = []
    for path, config, _ in cases:
        run = subprocess.run([cli, "lint", "--json", *(["--config", config] if config else []),
                              path], capture_output=True, text=True, timeout=60)
        printed.append(json.loads(run.stdout))
    verdicts = [(p["verdict"], p.get("code")) for p in printed]
    # The cases must be what they say: clean, findings, refused, not read, could not run.
    assert verdicts == [("valid", None), ("invalid", "LintError"),
                        ("refused", "PickleGlobalRefused"), ("error", "InvalidArgument"),
                        ("error", "IoError")], verdicts
    if pythonpath != "none":
        for (path, config, _), cli_object in zip(cases, printed):
            expected = {key: value for key, value in cli_object.items()
                        if key in ENVELOPE or key in ("family", "tensors", "shards", "errors",
                                                      "findings") or
                        (key == "warnings" and "findings" in cli_object)}
            got = python_lint(pythonpath, path, config)
            if got != expected:
                failures.append(f"lint {path} --config {config}:\n  CLI    {expected}\n"
                                f"  Python {got}")
        print(f"python: {len(cases)} lint results compared")
    else:
        print("SKIPPED python lint: the Python module is not built in this tree")
    if not web_missing(build_web):
        linted = [(path, cli_object) for (path, _, page), cli_object in zip(cases, printed)
                  if page]
        answers = node_answers(repo, build_web, [path for path, _ in linted])
        for (path, cli_object), answer in zip(linted, answers):
            answer = json.loads(answer)
            if cli_object["verdict"] in ("valid", "invalid"):
                # Lint ran: the page's "lint" is the command's object, key for key.
                if ordered(answer.get("lint")) != ordered(cli_object):
                    failures.append(f"lint {path}:\n  CLI  {ordered(cli_object)}\n"
                                    f"  node {ordered(answer.get('lint'))}")
            elif answer.get("lint") is not None or \
                    json_envelope(ordered(answer)) != json_envelope(ordered(cli_object)):
                # Check did not pass: the page has no lint, and check's envelope is lint's.
                failures.append(f"lint {path}: node {ordered(answer)}, CLI {cli_object}")
        print(f"node: {len(linted)} lint results compared")
    else:
        print(f"SKIPPED node lint: node or {build_web}/stguard.js is missing "
              "(tools/build-web.sh builds it)")
    return failures


def web_missing(build_web):
    """Why the glue cannot run under node (None when it can)."""
    if not shutil.which("node"):
        return "node is missing"
    if not os.path.isfile(os.path.join(build_web, "stguard.js")):
        return f"{build_web}/stguard.js is missing (tools/build-web.sh builds it)"
    return None


def main():
    repo, cli_path, printer, pythonpath, build_web = sys.argv[1:6]
    failures = []
    if os.environ.get("STGUARD_REQUIRE_WEB") == "1" and web_missing(build_web):
        print(f"FAIL STGUARD_REQUIRE_WEB=1 but {web_missing(build_web)}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        paths = inputs(repo, tmp) + [os.path.join(tmp, "does-not-exist.safetensors")]
        # One sample per format and 29 more: 40 with today's 11 formats.
        assert len(paths) == len(formats.words()) + 29, len(paths)
        missing = [p for p in paths[:-1] if not os.path.exists(p)]
        assert not missing, f"inputs missing from the tree: {missing}"
        cli = cli_envelopes(cli_path, paths)
        verdicts = {}
        for path, envelope in zip(paths, cli):
            fields = dict(envelope)
            verdicts[fields["verdict"]] = verdicts.get(fields["verdict"], 0) + 1
            if fields.get("file") != path:
                failures.append(f"{path}: the CLI's line is about {fields.get('file')}")
        # The inputs must cover every verdict and every format word, or they test less
        # than they say.
        seen = {dict(e)["format"] for e in cli}
        formats_def = formats.words()
        assert set(verdicts) == {"valid", "invalid", "refused", "error"}, verdicts
        for word in formats_def + ["folder"]:
            assert word in seen, f"no input of format {word}: {sorted(seen)}"
        compare("C API", capi_envelopes(printer, paths), cli, paths, failures)
        if pythonpath != "none":
            compare("Python", python_envelopes(pythonpath, paths), cli, paths, failures)
            print(f"python: {len(paths)} envelopes compared")
        else:
            print("SKIPPED python: the Python module is not built in this tree")
        if not web_missing(build_web):
            # The page is never given a path that does not exist: the last one is left out.
            compare("node", node_envelopes(repo, build_web, paths[:-1]), cli, paths[:-1],
                    failures)
            print(f"node: {len(paths) - 1} envelopes compared")
        else:
            print(f"SKIPPED node glue: node or {build_web}/stguard.js is missing "
                  "(tools/build-web.sh builds it)")
        lint_failures = lint_same(repo, cli_path, pythonpath, build_web, tmp)
    for failure in failures + lint_failures:
        print("FAIL", failure)
    print(f"{'FAILED' if failures else 'ok'}: {len(paths)} inputs, verdicts {verdicts}, "
          f"the same envelope from every front end run")
    print(f"{'FAILED' if lint_failures else 'ok'}: lint, the same object from every front end run")
    return 1 if failures or lint_failures else 0


if __name__ == "__main__":
    sys.exit(main())
