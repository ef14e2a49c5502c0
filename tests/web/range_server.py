#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A loopback HTTP server for the browser tests: static files with range requests.

Each --origin NAME=FLAGS starts one server on its own port (a port is an origin, so two
servers are two sites to the browser), all serving --root. By default a server answers
Range requests (206 with Content-Range) and sends no CORS headers; FLAGS, separated by
commas, change that:
  plain          nothing changed
  cors           Access-Control-Allow-Origin: * and Access-Control-Expose-Headers:
                 Content-Range (preflights answered)
  cors-noexpose  Access-Control-Allow-Origin only: the page cannot see Content-Range
  norange        ignore Range: every GET is a 200 with the whole file (sending stops
                 when the client goes away)
  stall          never answer a GET (the request is counted, then held until the
                 server stops): a server that hangs

Every server counts the body bytes it sends, in all and per path, and the requests it
answers. GET /__stats returns them as JSON ({"bytes_sent": N, "by_path": {path: N},
"requests": [[path, range header], ...]}) and GET /__reset sets them to zero; neither is
counted.

Once listening, one JSON line goes to stdout: {"NAME": port, ...}. The servers stop when
stdin closes (the test that started them exited) or on SIGTERM.
"""

import argparse
import http.server
import json
import mimetypes
import os
import re
import signal
import socketserver
import sys
import threading

CHUNK = 64 * 1024
FLAGS = ("plain", "cors", "cors-noexpose", "norange", "stall")
TYPES = {".wasm": "application/wasm", ".js": "text/javascript", ".html": "text/html",
         ".css": "text/css", ".json": "application/json"}


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.bytes_sent = 0
        self.by_path = {}
        self.requests = []

    def add_request(self, path, range_header):
        with self.lock:
            self.requests.append([path, range_header])

    def add_bytes(self, path, n):
        with self.lock:
            self.bytes_sent += n
            self.by_path[path] = self.by_path.get(path, 0) + n

    def snapshot(self):
        with self.lock:
            return {"bytes_sent": self.bytes_sent, "by_path": dict(self.by_path),
                    "requests": list(self.requests)}

    def reset(self):
        with self.lock:
            self.bytes_sent = 0
            self.by_path = {}
            self.requests = []


def parse_range(header, size):
    """Returns (first, last) for a single "bytes=" range, "unsatisfiable", or None when
    the header is absent or not a single byte range (then the whole file is sent)."""
    if header is None:
        return None
    match = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header)
    if not match or (match.group(1) == "" and match.group(2) == ""):
        return None
    if match.group(1) == "":
        suffix = int(match.group(2))
        if suffix == 0:
            return "unsatisfiable"
        return (max(0, size - suffix), size - 1)
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else size - 1
    if first >= size or last < first:
        return "unsatisfiable"
    return (first, min(last, size - 1))


def make_handler(root, flags, counters):
    class Handler(http.server.SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=root, **kwargs)

        def log_message(self, format, *args):  # quiet: the test prints what matters
            if os.environ.get("STGUARD_WEB_VERBOSE"):
                sys.stderr.write("%s %s\n" % (",".join(sorted(flags)), format % args))

        def allows_cors(self):
            return "cors" in flags or "cors-noexpose" in flags

        def cors_headers(self):
            if self.allows_cors():
                self.send_header("Access-Control-Allow-Origin", "*")
            if "cors" in flags:
                self.send_header("Access-Control-Expose-Headers", "Content-Range")

        def do_OPTIONS(self):
            self.send_response(204)
            if self.allows_cors():
                self.cors_headers()
                self.send_header("Access-Control-Allow-Methods", "GET, HEAD")
                self.send_header("Access-Control-Allow-Headers", "Range")
                self.send_header("Access-Control-Max-Age", "600")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_HEAD(self):
            self.answer(send_body=False)

        def do_GET(self):
            if self.path == "/__stats":
                return self.send_json(counters.snapshot())
            if self.path == "/__reset":
                counters.reset()
                return self.send_json({"ok": True})
            if "stall" in flags:
                counters.add_request(self.path, self.headers.get("Range"))
                threading.Event().wait()  # for ever: the thread is a daemon
                return
            self.answer(send_body=True)

        def send_json(self, value):
            body = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def answer(self, send_body):
            path = self.translate_path(self.path)
            if os.path.isdir(path):
                path = os.path.join(path, "index.html")
            range_header = self.headers.get("Range")
            counters.add_request(self.path, range_header)
            if not os.path.isfile(path):
                self.send_error(404)
                return
            size = os.path.getsize(path)
            wanted = None if "norange" in flags else parse_range(range_header, size)
            if wanted == "unsatisfiable":
                self.send_response(416)
                self.cors_headers()
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            first, last = wanted if wanted else (0, size - 1)
            self.send_response(206 if wanted else 200)
            self.cors_headers()
            extension = os.path.splitext(path)[1]
            kind = TYPES.get(extension) or mimetypes.guess_type(path)[0]
            self.send_header("Content-Type", kind or "application/octet-stream")
            self.send_header("Cache-Control", "no-store")
            if "norange" not in flags:
                self.send_header("Accept-Ranges", "bytes")
            if wanted:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
            self.send_header("Content-Length", str(last - first + 1))
            self.end_headers()
            if send_body:
                self.send_file(path, first, last + 1)

        def send_file(self, path, begin, end):
            url_path = self.path.split("?", 1)[0]
            with open(path, "rb") as f:
                f.seek(begin)
                while begin < end:
                    chunk = f.read(min(CHUNK, end - begin))
                    if not chunk:
                        break
                    try:
                        self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        self.close_connection = True
                        return
                    counters.add_bytes(url_path, len(chunk))
                    begin += len(chunk)

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--origin", action="append", required=True, metavar="NAME=FLAGS")
    args = parser.parse_args()
    ports = {}
    servers = []
    for spec in args.origin:
        name, _, text = spec.partition("=")
        flags = set(text.split(","))
        if not name or not flags <= set(FLAGS):
            parser.error("bad --origin %r: NAME=FLAGS, flags from %s" % (spec, ", ".join(FLAGS)))
        server = Server(("127.0.0.1", 0), make_handler(args.root, flags, Counters()))
        ports[name] = server.server_address[1]
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps(ports), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stdin.read()  # until the parent closes it or exits


if __name__ == "__main__":
    main()
