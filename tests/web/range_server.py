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

A query "?mode=MODE" on any server makes that answer misbehave as a hostile or broken
server would (the remote-read policy's cases):
  ignore      ignore Range: 200 with the whole file
  once        honour Range on the first request for the path, then 200 with the whole file
  whole206    206 naming the whole file (Content-Range 0-(size-1)) with the whole body
  otherbytes  206 whose Content-Range names other bytes than asked (shifted by one)
  growing     the total of Content-Range grows by one on every request for the path
  short       206 with honest headers for a body shorter than the range asked
              (Content-Length says the half sent, Content-Range the range asked)
  shortlie    headers for the range asked, half the body, then the connection closed

Every server counts the body bytes it sends, in all and per path (with its query), and
the requests it answers. GET /__stats returns them as JSON ({"bytes_sent": N, "by_path": {path: N},
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
        self.seen = {}

    def count_seen(self, path):
        """How many requests for `path` came before this one."""
        with self.lock:
            n = self.seen.get(path, 0)
            self.seen[path] = n + 1
            return n

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
            self.seen = {}


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
            url_path, _, query = self.path.partition("?")
            mode = dict(p.partition("=")[::2] for p in query.split("&") if p).get("mode", "")
            path = self.translate_path(url_path)
            if os.path.isdir(path):
                path = os.path.join(path, "index.html")
            range_header = self.headers.get("Range")
            counters.add_request(self.path, range_header)
            if not os.path.isfile(path):
                # With the CORS headers: the page then sees the status, as from a real host.
                self.send_response(404)
                self.cors_headers()
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            size = os.path.getsize(path)
            earlier = counters.count_seen(self.path)  # per URL: each mode's its own
            ignore = "norange" in flags or mode == "ignore" or (mode == "once" and earlier > 0)
            wanted = None if ignore else parse_range(range_header, size)
            if wanted == "unsatisfiable":
                self.send_response(416)
                self.cors_headers()
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            first, last = wanted if wanted else (0, size - 1)
            named, total, end = (first, last), size, last + 1
            if wanted and mode == "whole206":
                first, last = named = (0, size - 1)
                end = size
            elif wanted and mode == "otherbytes":
                named = (first + 1, min(last + 1, size - 1))
            elif wanted and mode == "growing":
                total = size + earlier
            elif wanted and mode == "short":
                end = first + (last - first + 1) // 2
                last = end - 1
            elif wanted and mode == "shortlie":
                end = first + (last - first + 1) // 2
            self.send_response(206 if wanted else 200)
            self.cors_headers()
            extension = os.path.splitext(path)[1]
            kind = TYPES.get(extension) or mimetypes.guess_type(path)[0]
            self.send_header("Content-Type", kind or "application/octet-stream")
            self.send_header("Cache-Control", "no-store")
            if "norange" not in flags:
                self.send_header("Accept-Ranges", "bytes")
            if wanted:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (*named, total))
            self.send_header("Content-Length", str(last - first + 1))
            self.end_headers()
            if send_body:
                self.send_file(path, first, end)
            if mode == "shortlie":
                self.close_connection = True

        def send_file(self, path, begin, end):
            url_path = self.path  # with its query: each mode's URL counted apart
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
