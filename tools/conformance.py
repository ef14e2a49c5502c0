#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs conformance/ through every reader it finds and prints how each fares.

  conformance.py [--json] [--only IMPL...] [--suite DIR] [--fail-on IMPL...]

Every reader (an "implementation") runs in child processes with a time limit per case and a
memory limit (RLIMIT_AS where the runtime allows one), one process for many cases where the
reader allows it; a child that dies on a case marks that case "crash" and a new child takes
the rest. Outcomes: accept, reject, crash, timeout, ran-code (a PyTorch payload created its
marker file), skipped. A y_ case agrees when accepted, an n_ case when rejected; an i_ case
agrees with any outcome but crash, timeout and ran-code, except for stguard's own columns,
which must give the strict choice written in cases.json.

--fail-on IMPL exits 1 when such an implementation disagrees, crashes or times out on any
case (the CTest test passes the stguard columns). Otherwise the exit status is 0.

PyTorch cases marked "runtime" in cases.json are built here, in a temporary folder, with a
harmless payload: it creates the file MARKER in the loader's working folder.

Environment: STGUARD_CLI (default build/stguard), STGUARD_PYTHONPATH (default build/python),
STGUARD_WEB_DIR (default build-web), STGUARD_GGML_LIB (default the fetch_ggml.sh cache),
STGUARD_NODE_MODULES (default ~/.cache/stguard-conformance/node_modules, filled by
tools/deps.sh --all), STGUARD_PYTHON, NUMPY_PYTHON and TORCH_PYTHON (default /usr/bin/python3);
STGUARD_NO_ADDRESS_LIMIT=1 runs stguard's readers without the address-space limit (sanitizer
builds).
"""
import argparse
import io
import json
import os
import resource
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
FORMATS = ("safetensors", "gguf", "npy", "npz", "pytorch")
MARKER = "conformance-ran-code"
CASE_SECONDS = 20
MEMORY_BYTES = 4 << 30
GGML_VERSION_PIN = "3.21.1"


# ============================================================ workers (run in the child)
def worker_main(kind, arg):
    """Reads one path per line on stdin, answers one line: OUTCOME<TAB>detail."""
    # Answers go to a copy of the original standard output; the reader's own output (and
    # whatever a payload prints) goes to standard error, so it cannot forge an answer.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    handler = WORKERS[kind](arg)
    for line in sys.stdin:
        path = line.rstrip("\n")
        try:
            outcome, detail = handler(path)
        except Exception as e:  # the reader refused the file: that is its verdict
            outcome, detail = "reject", "%s: %s" % (type(e).__name__, str(e)[:120])
        answers.write("%s\t%s\n" % (outcome, detail.replace("\n", " ").replace("\t", " ")))
        answers.flush()


def numpy_worker(_):
    import numpy as np

    def run(path):
        if path.endswith(".npz"):
            with np.load(path, allow_pickle=False) as z:
                for key in z.files:
                    z[key]
        else:
            np.load(path, allow_pickle=False)
        return "accept", ""
    return run


def torch_worker(weights_only):
    import warnings
    import torch
    warnings.simplefilter("ignore")
    weights_only = weights_only == "true"

    def run(path):
        marker = os.path.join(os.getcwd(), MARKER)
        if os.path.exists(marker):
            os.remove(marker)
        try:
            torch.load(path, map_location="cpu", weights_only=weights_only)
            outcome, detail = "accept", ""
        except Exception as e:
            outcome, detail = "reject", "%s: %s" % (type(e).__name__, str(e)[:120])
        if os.path.exists(marker):
            os.remove(marker)
            return "ran-code", detail
        return outcome, detail
    return run


def stguard_python_worker(_):
    import stguard

    def run(path):
        result = stguard.check(path)
        return verdict_outcome(result.verdict), "%s %s" % (result.verdict,
                                                           getattr(result, "code", "") or "")
    return run


def ggml_worker(no_alloc):
    import ctypes
    lib = ctypes.CDLL(ggml_library())

    class Params(ctypes.Structure):
        _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.POINTER(ctypes.c_void_p))]
    log = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(
        lambda level, text, data: None)
    lib.ggml_log_set(log, None)
    lib.gguf_init_from_file.restype = ctypes.c_void_p
    lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, Params]
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    lib.ggml_free.argtypes = [ctypes.c_void_p]
    alloc = no_alloc != "true"

    def run(path):
        ctx = ctypes.c_void_p()
        params = Params(not alloc, ctypes.pointer(ctx))
        gguf = lib.gguf_init_from_file(path.encode(), params)
        if not gguf:
            return "reject", "gguf_init_from_file returned NULL"
        lib.gguf_free(gguf)
        if ctx.value:
            lib.ggml_free(ctx)
        return "accept", ""
    run.log = log  # ctypes frees a callback whose Python object is gone
    return run


WORKERS = {"numpy": numpy_worker, "torch": torch_worker, "stguard-python": stguard_python_worker,
           "ggml": ggml_worker}


def verdict_outcome(verdict):
    return {"valid": "accept", "invalid": "reject", "refused": "reject"}.get(verdict, "error")


# ============================================================ child processes (the parent)
def limits(memory):
    def apply():
        os.setsid()
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))
    return apply


class Pool:
    """One child at a time answering one path per line; restarted after a crash or timeout."""

    def __init__(self, argv, env=None, cwd=None, memory=MEMORY_BYTES):
        self.argv, self.env, self.cwd, self.memory, self.child = argv, env, cwd, memory, None

    def start(self):
        self.child = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                                      preexec_fn=limits(self.memory), bufsize=0)
        self.buffer = b""

    def stop(self):
        if self.child:
            try:
                os.killpg(self.child.pid, 9)
            except ProcessLookupError:
                pass
            self.child.wait()
            self.child = None

    def ask(self, path):
        if self.child is None:
            self.start()
        try:
            self.child.stdin.write(path.encode() + b"\n")
        except BrokenPipeError:
            self.stop()
            return "crash", "the reader exited before the case"
        deadline = time.monotonic() + CASE_SECONDS
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready = select.select([self.child.stdout], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self.stop()
                return "timeout", "more than %d s" % CASE_SECONDS
            chunk = os.read(self.child.stdout.fileno(), 65536)
            if not chunk:
                status = self.child.wait()
                self.child = None
                return "crash", "exit status %d" % status
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        outcome, _, detail = line.decode(errors="replace").partition("\t")
        return outcome, detail


class Implementation:
    """name: the column; formats: the cases it reads; check(paths) -> {path: (outcome, detail)}."""
    strict = False  # stguard's columns must give the strict choice on i_ cases

    def __init__(self, name, formats, missing=None):
        self.name, self.formats, self.missing = name, formats, missing

    def close(self):
        pass


class PoolImplementation(Implementation):
    def __init__(self, name, formats, argv, env=None, cwd=None, memory=MEMORY_BYTES, missing=None):
        super().__init__(name, formats, missing)
        self.pool = Pool(argv, env, cwd, memory) if not missing else None

    def check(self, paths):
        return {p: self.pool.ask(p) for p in paths}

    def close(self):
        if self.pool:
            self.pool.stop()


class StguardCli(Implementation):
    """`stguard check --json FILE...`: one process for many files, one JSON line per file, in
    order. Only `verdict` is read from each line. A batch that dies is rerun file by file."""
    strict = True

    def __init__(self, cli):
        super().__init__("stguard-cli", FORMATS,
                         None if os.access(cli, os.X_OK) else "no %s (build stguard_cli)" % cli)
        self.cli = cli

    def run(self, paths):
        try:
            done = subprocess.run([self.cli, "check", "--json", "--"] + paths,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  timeout=CASE_SECONDS * max(1, len(paths) // 50 + 1),
                                  preexec_fn=limits(stguard_memory()))
        except subprocess.TimeoutExpired:
            return None if len(paths) > 1 else {paths[0]: ("timeout", "")}
        lines = [line for line in done.stdout.decode(errors="replace").splitlines() if line]
        if done.returncode < 0 or len(lines) != len(paths):
            if len(paths) > 1:
                return None
            return {paths[0]: ("crash", "exit status %d" % done.returncode)}
        out = {}
        for path, line in zip(paths, lines):
            verdict = json.loads(line).get("verdict")
            out[path] = (verdict_outcome(verdict), verdict or "")
        return out

    def check(self, paths):
        out = {}
        for i in range(0, len(paths), 200):
            batch = paths[i:i + 200]
            got = self.run(batch)
            if got is None:
                got = {}
                for p in batch:
                    got.update(self.run([p]))
            out.update(got)
        return out


# ============================================================ discovery
def stguard_memory():
    """Sanitizer builds reserve terabytes of address space: STGUARD_NO_ADDRESS_LIMIT lifts the
    limit for stguard's own readers there."""
    return None if os.environ.get("STGUARD_NO_ADDRESS_LIMIT") else MEMORY_BYTES


def ggml_library():
    path = os.environ.get("STGUARD_GGML_LIB") or os.path.join(
        os.environ.get("STGUARD_CACHE", os.path.expanduser("~/.cache/stguard")),
        "ggml-" + GGML_VERSION_PIN, "libggml-base.so")
    return path


def python_module_version(python, module, env=None):
    """The module's version as `python` imports it, or None when it cannot."""
    try:
        done = subprocess.run([python, "-c", "import %s as m; print(getattr(m, '__version__', '?'))"
                               % module], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode().strip().split("+")[0] if done.returncode == 0 else None


def node_modules():
    return os.environ.get("STGUARD_NODE_MODULES") or os.path.expanduser(
        "~/.cache/stguard-conformance/node_modules")


def worker_argv(python, kind, arg=""):
    return [python, os.path.abspath(__file__), "--worker", kind, arg or "-"]


def implementations(workdir, only=None):
    """Every reader's column; with `only` (name prefixes), only the readers it names are
    probed (importing torch takes seconds)."""
    def wanted(key):
        return not only or any(key.startswith(o) or o.startswith(key) for o in only)
    found = []
    cli = os.environ.get("STGUARD_CLI") or os.path.join(ROOT, "build", "stguard")
    found.append(StguardCli(cli))
    if wanted("stguard-python"):
        found += stguard_python(workdir)
    if wanted("stguard-wasm"):
        found.append(node_implementation(
            "stguard-wasm", FORMATS, "stguard",
            os.environ.get("STGUARD_WEB_DIR") or os.path.join(ROOT, "build-web"), workdir,
            strict=True))
    if wanted("numpy"):
        found += numpy_readers(workdir)
    if wanted("torch"):
        found += torch_readers(workdir)
    if wanted("ggml"):
        found += ggml_readers(workdir)
    modules = node_modules()
    for package, key, formats in (("@huggingface/gguf", "hf-gguf", ("gguf",)),
                                  ("hyllama", "hyllama", ("gguf",)),
                                  ("@huggingface/hub", "hf-hub", ("safetensors",))):
        if wanted(key):
            found.append(node_implementation(package, formats, package, modules, workdir))
    return found


def stguard_python(workdir):
    pypath = os.environ.get("STGUARD_PYTHONPATH") or os.path.join(ROOT, "build", "python")
    env = dict(os.environ)
    env["PYTHONPATH"] = pypath + os.pathsep + env.get("PYTHONPATH", "")
    python = os.environ.get("STGUARD_PYTHON") or (
        "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)
    have = python_module_version(python, "stguard", env)
    impl = PoolImplementation("stguard-python", FORMATS,
                              worker_argv(python, "stguard-python"), env, workdir,
                              memory=stguard_memory(),
                              missing=None if have else
                              "import stguard fails (PYTHONPATH %s)" % pypath)
    impl.strict = True
    return [impl]


def numpy_readers(workdir):
    numpy_python = os.environ.get("NUMPY_PYTHON", "/usr/bin/python3")
    have = python_module_version(numpy_python, "numpy")
    return [PoolImplementation(
        "numpy-%s" % (have or "?"), ("npy", "npz"),
        worker_argv(numpy_python, "numpy"), None, workdir,
        missing=None if have else "%s cannot import numpy" % numpy_python)]


def torch_readers(workdir):
    found = []
    torch_python = os.environ.get("TORCH_PYTHON", "/usr/bin/python3")
    have = python_module_version(torch_python, "torch")
    version = have or "?"
    for wo in ("true", "false"):
        found.append(PoolImplementation(
            "torch-%s-weights_only=%s" % (version, wo.capitalize()), ("pytorch",),
            worker_argv(torch_python, "torch", wo), None, workdir, memory=8 << 30,
            missing=None if have else "%s cannot import torch" % torch_python))
    return found


def ggml_readers(workdir):
    found = []
    lib = ggml_library()
    version = "?"
    if os.path.isfile(lib):
        probe = ("import ctypes, sys; v = ctypes.CDLL(sys.argv[1]).ggml_version; "
                 "v.restype = ctypes.c_char_p; print(v().decode())")
        try:
            version = subprocess.run([sys.executable, "-c", probe, lib], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, timeout=60
                                     ).stdout.decode().strip() or "?"
        except (OSError, subprocess.TimeoutExpired):
            pass
    for no_alloc in ("true", "false"):
        found.append(PoolImplementation(
            "ggml-%s-npm-%s-no_alloc=%s" % (version, GGML_VERSION_PIN, no_alloc), ("gguf",),
            worker_argv(sys.executable, "ggml", no_alloc), None, workdir,
            missing=None if os.path.isfile(lib) else "no %s (tools/fetch_ggml.sh)" % lib))
    return found


# ============================================================ node readers
NODE_WORKER = r"""
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const http = require('http');
const [kind, where] = process.argv.slice(2);

async function makeReader() {
  if (kind === 'stguard') {
    const sources = new Map();
    const stguardRead = (id, offset, length) => {
      const fd = sources.get(id);
      const bytes = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const got = fs.readSync(fd, bytes, done, length - done, offset + done);
        if (got === 0) throw new Error('unexpected end of file');
        done += got;
      }
      return bytes;
    };
    const Module = await require(path.resolve(where, 'stguard.js'))(
        {stguardRead, print: () => {}, printErr: () => {}});
    const check = Module.cwrap('stguard_check_source', 'string',
                               ['number', 'string', 'number', 'number']);
    let next = 1;
    return async (file) => {
      const fd = fs.openSync(file, 'r');
      const id = next++;
      sources.set(id, fd);
      try {
        const verdict = JSON.parse(check(id, file, fs.fstatSync(fd).size, 0)).verdict;
        return [{valid: 'accept', invalid: 'reject', refused: 'reject'}[verdict] || 'error',
                verdict];
      } finally {
        sources.delete(id);
        fs.closeSync(fd);
      }
    };
  }
  const modulePath = path.join(where, kind);
  if (kind === '@huggingface/gguf') {
    const {gguf} = await import(require.resolve(modulePath));
    return async (file) => {
      await gguf(file, {allowLocalFile: true, computeParametersCount: false});
      return ['accept', ''];
    };
  }
  if (kind === 'hyllama') {
    const {ggufMetadata} = await import(require.resolve(modulePath));
    return async (file) => {
      const b = fs.readFileSync(file);
      ggufMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
      return ['accept', ''];
    };
  }
  if (kind === '@huggingface/hub') {
    const {parseSafetensorsMetadata} = await import(require.resolve(modulePath));
    let current = null;
    const server = http.createServer((req, res) => {
      // The Hub's resolve path: /{repo}/resolve/{revision}/{file}, with Range requests.
      const data = current ? fs.readFileSync(current) : Buffer.alloc(0);
      if (!req.url.includes('/resolve/')) { res.writeHead(404); res.end(); return; }
      const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range || '');
      let start = 0, end = data.length - 1;
      if (range) { start = +range[1]; if (range[2] !== '') end = Math.min(+range[2], end); }
      // The Hub names every file version by an ETag and its commit.
      const common = {'ETag': '"conformance"', 'X-Repo-Commit': '0'.repeat(40),
                      'Accept-Ranges': 'bytes'};
      if (req.method === 'HEAD') {
        res.writeHead(200, {...common, 'Content-Length': data.length}); res.end(); return;
      }
      if (start > end && data.length > 0) { res.writeHead(416); res.end(); return; }
      res.writeHead(range ? 206 : 200, {...common, 'Content-Length': Math.max(0, end - start + 1),
                                        'Content-Range': `bytes ${start}-${end}/${data.length}`});
      res.end(data.subarray(start, end + 1));
    });
    await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
    server.unref();
    const hubUrl = `http://127.0.0.1:${server.address().port}`;
    return async (file) => {
      current = file;
      await parseSafetensorsMetadata({repo: 'conformance/case', path: 'model.safetensors',
                                      hubUrl, fetch});
      return ['accept', ''];
    };
  }
  throw new Error('unknown reader ' + kind);
}

makeReader().then(async (read) => {
  const lines = readline.createInterface({input: process.stdin});
  for await (const file of lines) {
    let answer;
    try {
      answer = await read(file);
    } catch (e) {
      answer = ['reject', String(e && e.message || e).slice(0, 120)];
    }
    process.stdout.write(answer[0] + '\t' + String(answer[1]).replace(/[\t\n]/g, ' ') + '\n');
  }
}, (e) => { console.error(e); process.exit(3); });
"""


def node_version_of(where, package):
    try:
        with open(os.path.join(where, package, "package.json")) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


def node_implementation(name, formats, kind, where, workdir, strict=False):
    node = shutil.which("node")
    script = os.path.join(workdir, "node_worker.js")
    if not os.path.exists(script):
        with open(script, "w") as f:
            f.write(NODE_WORKER)
    if kind == "stguard":
        missing = None if os.path.isfile(os.path.join(where, "stguard.js")) else \
            "no %s/stguard.js (tools/build-web.sh)" % where
        column = name
    else:
        version = node_version_of(where, kind)
        missing = None if version else "npm package %s not in %s (tools/deps.sh --all)" % (
            kind, where)
        column = "%s-%s" % (kind.replace("@huggingface/", "hf-"), version or "?")
    if not node:
        missing = "no node"
    # V8 reserves far more address space than it uses: the memory limit is the heap's.
    # Emscripten's glue loads the .wasm with fetch when node has one; the tests run it without.
    flags = ["--no-experimental-fetch"] if kind == "stguard" else []
    impl = PoolImplementation(column, formats,
                              [node or "node", "--max-old-space-size=2048"] + flags +
                              [script, kind, where],
                              None, workdir, memory=None, missing=missing)
    impl.strict = strict
    return impl


# ============================================================ runtime PyTorch cases
P2, P4 = b"\x80\x02", b"\x80\x04"


def text(value):
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def short_text(value):
    data = value.encode()
    return b"\x8c" + bytes([len(data)]) + data


def binbytes(data):
    return b"B" + struct.pack("<I", len(data)) + data


def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def call(function, *args):
    return function + b"(" + b"".join(args) + b"tR"


MAKE_MARKER_SOURCE = "open(%r, 'w').close()" % MARKER
MAKE_MARKER = call(glob("builtins", "open"), text(MARKER), text("w"))
PATH_MARKER = call(glob("pathlib", "Path"), text(MARKER))


def payload_for(callee):
    """A pickle expression that calls `callee` so that the marker file gets created."""
    g = glob(*callee.rsplit(".", 1))
    src = text(MAKE_MARKER_SOURCE)
    inner = P2 + MAKE_MARKER + b"."
    if callee in ("builtins.eval", "builtins.exec", "__builtin__.eval", "cProfile.run"):
        return call(g, src)
    if callee in ("os.system", "posix.system"):
        return call(g, text("touch " + MARKER))
    if callee == "subprocess.Popen":
        return call(glob("subprocess", "run"), b"]" + text("touch") + b"a" + text(MARKER) + b"a")
    if callee == "subprocess.check_output":
        return call(g, b"]" + text("touch") + b"a" + text(MARKER) + b"a")
    if callee == "builtins.open":
        return MAKE_MARKER
    if callee == "importlib.import_module":
        return call(call(glob("builtins", "getattr"), call(g, text("os")), text("system")),
                    text("touch " + MARKER))
    if callee == "builtins.getattr":
        return call(call(g, PATH_MARKER, text("touch")))
    if callee in ("pickle.loads", "torch.storage._load_from_bytes"):
        return call(g, binbytes(inner))
    if callee in ("marshal.loads", "types.FunctionType"):
        import marshal
        code = marshal.dumps(compile(MAKE_MARKER_SOURCE, "<marker>", "exec"))
        return call(call(glob("types", "FunctionType"),
                         call(glob("marshal", "loads"), binbytes(code)), b"}"))
    if callee == "runpy._run_code":
        return call(g, src, b"}")
    if callee == "pip.main":
        return call(glob("pathlib", "Path.touch"), PATH_MARKER)
    if callee == "bdb.Bdb.run":
        return call(glob("bdb", "Bdb.run"), call(glob("bdb", "Bdb")), src)
    if callee == "operator.attrgetter":
        return call(call(call(g, text("touch")), PATH_MARKER))
    if callee == "operator.methodcaller":
        return call(call(g, text("touch")), PATH_MARKER)
    if callee == "functools.partial":
        return call(call(g, glob("builtins", "open"), text(MARKER), text("w")))
    if callee == "pydoc.pipepager":
        return call(g, text(""), text("touch " + MARKER))
    if callee == "code.InteractiveInterpreter.runsource":
        return call(glob("code", "InteractiveInterpreter.runsource"),
                    call(glob("code", "InteractiveInterpreter")), src)
    if callee == "timeit.timeit":
        return call(g, text("pass"), src, b"N" + b"K\x01")
    if callee in ("webbrowser.open", "shutil.rmtree"):
        return call(glob("pathlib", "Path.touch"), PATH_MARKER)
    raise ValueError(callee)


def state_dict(value, proto=P4):
    return proto + b"}" + text("weight") + value + b"s."


def zip_checkpoint(pkl, method=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in (("archive/data.pkl", pkl), ("archive/version", b"3\n")):
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                       compress_type=method)
    return buf.getvalue()


LEGACY_MAGIC = P2 + b"\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e"
LEGACY_PROTOCOL = P2 + b"M\xe9\x03."
LEGACY_SYS_INFO = (P2 + b"}(" + text("protocol_version") + b"M\xe9\x03" + text("little_endian") +
                   b"\x88" + text("type_sizes") + b"}(" + text("short") + b"K\x02" + text("int") +
                   b"K\x04" + text("long") + b"K\x04uu.")


def legacy(main, protocol=LEGACY_PROTOCOL, sys_info=LEGACY_SYS_INFO):
    return LEGACY_MAGIC + protocol + sys_info + main + P2 + b"]."


def build_runtime(spec):
    builder = spec["builder"]
    if builder == "call":
        # Protocol 2 maps Python 2's module names (__builtin__) to Python 3's; protocol 4
        # reads dotted names (bdb.Bdb.run).
        proto = P2 if spec["callable"].startswith("__builtin__") else P4
        pkl = state_dict(payload_for(spec["callable"]), proto)
        return {"zip": zip_checkpoint, "legacy": legacy, "raw": lambda p: p}[spec["container"]](pkl)
    benign_zip = zip_checkpoint(P2 + b"}.")
    marker_pkl = state_dict(MAKE_MARKER, P2)
    if builder == "frame_straddle":
        body = short_text("builtins") + short_text("open") + b"\x93(" + text(MARKER) + \
            text("w") + b"tR."
        return P4 + b"\x95" + struct.pack("<Q", 5) + body
    if builder == "protocol0":
        return b"cbuiltins\nopen\n(S'" + MARKER.encode() + b"'\nS'w'\ntR."
    if builder == "protocol1":
        return MAKE_MARKER + b"."
    if builder == "inst_opcode":
        return b"(S'" + MARKER.encode() + b"'\nS'w'\nibuiltins\nopen\n."
    if builder == "stack_global_memoised":
        return zip_checkpoint(P4 + short_text("builtins") + b"\x94" + short_text("open") +
                              b"\x94" + b"h\x00h\x01\x93" + short_text(MARKER) + short_text("w") +
                              b"\x86R.")
    if builder == "nullifai_broken_zip":
        return zip_checkpoint(P2 + b"}" + text("weight") + MAKE_MARKER + b"s\xff\xff\xff")
    if builder == "nullifai_broken_raw":
        return P2 + MAKE_MARKER + b"0\x00garbage"
    if builder == "polyglot_pickle_then_zip":
        return marker_pkl + benign_zip
    if builder == "polyglot_legacy_then_zip":
        return legacy(marker_pkl) + benign_zip
    if builder == "trailing_pickle_after_raw":
        return P2 + b"}." + marker_pkl
    if builder == "trailing_pickle_after_legacy":
        return legacy(P2 + b"}.") + marker_pkl
    if builder == "legacy_sys_info_payload":
        return legacy(P2 + b"}.", sys_info=P2 + MAKE_MARKER + b".")
    if builder == "legacy_protocol_payload":
        return legacy(P2 + b"}.", protocol=P2 + MAKE_MARKER + b".")
    if builder in ("zip_bad_crc", "zip_name_mismatch"):
        data = bytearray(zip_checkpoint(marker_pkl))
        if builder == "zip_bad_crc":
            for signature, at in ((b"PK\x03\x04", 14), (b"PK\x01\x02", 16)):
                data[data.find(signature) + at] ^= 0xFF
        else:
            end = 30 + struct.unpack_from("<H", data, 26)[0]
            data[end - 3:end] = b"pkX"
        return bytes(data)
    if builder == "zip_deflated_payload":
        return zip_checkpoint(marker_pkl, zipfile.ZIP_DEFLATED)
    if builder == "nested_pickle_loads":
        return zip_checkpoint(state_dict(call(glob("pickle", "loads"),
                                              binbytes(P2 + MAKE_MARKER + b".")), b"\x80\x03"))
    raise ValueError(builder)


# ============================================================ the run
def load_cases(suite, workdir):
    cases = []
    for fmt in FORMATS:
        path = os.path.join(suite, fmt, "cases.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            entries = json.load(f)["cases"]
        for entry in entries:
            entry = dict(entry, format=fmt)
            if "runtime" in entry:
                os.makedirs(os.path.join(workdir, "runtime"), exist_ok=True)
                entry["path"] = os.path.join(workdir, "runtime", entry["file"])
                with open(entry["path"], "wb") as f:
                    f.write(build_runtime(entry["runtime"]))
            else:
                entry["path"] = os.path.join(suite, fmt, entry["file"])
            cases.append(entry)
    return cases


def agrees(case, outcome, strict):
    if outcome in ("crash", "timeout", "ran-code", "error"):
        return False
    if case["file"].startswith("i_") and not strict:
        return True
    return outcome == case["expected"]


def run(args):
    workdir = tempfile.mkdtemp(prefix="stguard-conformance-")
    try:
        cases = load_cases(os.path.abspath(args.suite), workdir)
        impls = implementations(workdir, args.only)
        if args.only:
            impls = [i for i in impls if any(i.name.startswith(o) for o in args.only)]
        results = {}
        for impl in impls:
            mine = [c for c in cases if c["format"] in impl.formats]
            if impl.missing:
                results[impl.name] = None
                print("skipped %s: %s" % (impl.name, impl.missing), file=sys.stderr)
                continue
            started = time.monotonic()
            try:
                got = impl.check([c["path"] for c in mine])
            finally:
                impl.close()
            print("ran %s: %d cases in %.1f s" % (impl.name, len(mine), time.monotonic() - started),
                  file=sys.stderr)
            results[impl.name] = {c["file"] + "@" + c["format"]: got[c["path"]] for c in mine}
        return cases, impls, results
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def summarize(cases, impls, results):
    summary = {"cases": len(cases), "implementations": {}, "disagreements": []}
    for impl in impls:
        counts = {"agree": 0, "disagree": 0, "crash": 0, "timeout": 0, "skipped": 0}
        for case in cases:
            if case["format"] not in impl.formats:
                continue
            got = results[impl.name]
            if got is None:
                counts["skipped"] += 1
                continue
            outcome, detail = got[case["file"] + "@" + case["format"]]
            if outcome in ("crash", "timeout"):
                counts[outcome] += 1
            elif agrees(case, outcome, impl.strict):
                counts["agree"] += 1
                continue
            else:
                counts["disagree"] += 1
            summary["disagreements"].append({
                "case": "%s/%s" % (case["format"], case["file"]), "impl": impl.name,
                "expected": case["expected"], "got": outcome, "rule": case["rule"],
                "detail": detail})
        summary["implementations"][impl.name] = counts
    return summary


def table(cases, impls, results):
    """Per format and rule: how many cases each implementation agrees with, 'a/n'."""
    live = [i for i in impls if results[i.name] is not None]
    lines = ["| format | rule | cases | " + " | ".join(i.name for i in live) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in live) + " |"]
    groups = {}
    for case in cases:
        groups.setdefault((case["format"], case["rule"]), []).append(case)
    for (fmt, rule), members in groups.items():
        cells = []
        for impl in live:
            if fmt not in impl.formats:
                cells.append("")
                continue
            got = [results[impl.name][c["file"] + "@" + fmt][0] for c in members]
            ok = sum(agrees(c, o, impl.strict) for c, o in zip(members, got))
            bad = [o for c, o in zip(members, got) if not agrees(c, o, impl.strict)]
            cell = "%d/%d" % (ok, len(members))
            for word in ("crash", "timeout", "ran-code"):
                if word in bad:
                    cell += " %d %s" % (bad.count(word), word)
            cells.append(cell)
        lines.append("| %s | %s | %d | %s |" % (fmt, rule, len(members), " | ".join(cells)))
    skipped = [i for i in impls if results[i.name] is None]
    for impl in skipped:
        lines.append("")
        lines.append("skipped: %s (%s)" % (impl.name, impl.missing))
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker_main(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--only", nargs="+", metavar="IMPL", help="implementations (name prefix)")
    parser.add_argument("--suite", default=os.path.join(ROOT, "conformance"))
    parser.add_argument("--fail-on", nargs="+", metavar="IMPL", default=[],
                        help="exit 1 when one of these disagrees, crashes or times out")
    args = parser.parse_args()
    cases, impls, results = run(args)
    summary = summarize(cases, impls, results)
    if args.json:
        public = dict(summary, disagreements=[
            {key: d[key] for key in ("case", "impl", "expected", "got")}
            for d in summary["disagreements"]])
        json.dump(public, sys.stdout, indent=1)
        print()
    else:
        print(table(cases, impls, results))
        print()
        for name, counts in summary["implementations"].items():
            print("%-36s %s" % (name, " ".join("%s %d" % kv for kv in counts.items())))
    failing = [d for d in summary["disagreements"]
               if any(d["impl"].startswith(f) for f in args.fail_on)]
    if args.fail_on and not args.json:
        for d in failing:
            print("FAIL %s %s: expected %s, got %s (%s)" % (d["impl"], d["case"], d["expected"],
                                                           d["got"], d["detail"]))
    missing = [f for f in args.fail_on
               if not any(i.name.startswith(f) and results[i.name] is not None for i in impls)]
    if missing:
        print("FAIL: not available: " + ", ".join(missing), file=sys.stderr)
    return 1 if failing or missing else 0


if __name__ == "__main__":
    sys.exit(main())
