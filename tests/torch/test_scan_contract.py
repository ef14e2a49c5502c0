#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`stguard scan`'s exit contract, and the bypass corpus.

- Every file of corpus/torch (valid, torch2, refuse, bypass): exit 0 exactly when its
  verdict is clean or needs-key, 1 for names-code and cannot-prove-safe;
  --require-convertible exits 1 also for a safe file that would not convert as it is, and
  `convertible` in --json says which.
- corpus/torch/bypass (tests/torch/make_bypasses.py): every file is refused by scan,
  check and convert with the code its name gives.

  STGUARD_CLI=build/stguard STGUARD_TORCH_CORPUS=corpus/torch test_scan_contract.py
"""
import json
import os
import subprocess
import sys
import tempfile

CLI = os.environ["STGUARD_CLI"]
CORPUS = os.environ["STGUARD_TORCH_CORPUS"]
BYPASS = os.path.join(CORPUS, "bypass")
SAFE = ("clean", "needs-key")
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, timeout=60)


def corpus_files():
    for folder in ("valid", "torch2", "refuse", "bypass"):
        root = os.path.join(CORPUS, folder)
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith(".json"):
                    yield os.path.join(dirpath, name)


def check_exit_contract():
    seen = {"safe": 0, "unsafe": 0, "unconvertible": 0}
    for path in corpus_files():
        result = run("scan", "--json", path)
        report = json.loads(result.stdout.decode().splitlines()[0])
        verdict = report.get("scan_verdict")
        if verdict is None:  # not pickle-bearing (a text file): not a scan verdict
            continue
        safe = verdict in SAFE
        seen["safe" if safe else "unsafe"] += 1
        expect(result.returncode == (0 if safe else 1),
               f"{path}: {verdict} exits {result.returncode}")
        expect(report["verdict"] == ("valid" if safe else "refused"), f"{path}: envelope")
        expect(report["convertible"] == ("scan_error" not in report), f"{path}: convertible")
        strict = run("scan", "--require-convertible", path).returncode
        expect(strict == (0 if report["convertible"] else 1),
               f"{path}: --require-convertible exits {strict}")
        if safe and not report["convertible"]:
            seen["unconvertible"] += 1
    # Both sides of the rule were exercised, and safe files that do not convert.
    expect(all(count > 0 for count in seen.values()), f"corpus coverage {seen}")
    # A folder: a safe one exits 0 (needs-key inside), 1 with --require-convertible.
    folder = os.path.join(CORPUS, "valid")
    expect(run("scan", folder).returncode == 0, "scan of valid/ exits 0")
    expect(run("scan", "--require-convertible", folder).returncode == 1,
           "scan --require-convertible of valid/ exits 1 (training checkpoints need --key)")


def check_bypasses():
    names = sorted(name for name in os.listdir(BYPASS) if name.endswith(".pt"))
    expect(len(names) >= 29, f"{len(names)} bypass files")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(BYPASS, name)
            code = name.split("__")[0]
            result = run("scan", "--json", path)
            report = json.loads(result.stdout)
            expect(result.returncode == 1 and report["verdict"] == "refused" and
                   report["code"] == code, f"scan {name}: {result.returncode} {report.get('code')}")
            expect(run("check", path).returncode == 1, f"check {name}")
            out = os.path.join(tmp, "out.safetensors")
            expect(run("convert", path, out).returncode == 1 and not os.path.exists(out),
                   f"convert {name}")


check_exit_contract()
check_bypasses()
for failure in failures:
    print("FAIL:", failure)
print("scan contract:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
