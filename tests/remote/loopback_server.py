# SPDX-License-Identifier: Apache-2.0
"""A loopback HTTP server that misbehaves on request, for the remote-read tests.

GET /m/MODE/NAME serves the file NAME in MODE (see MODES); GET /ORG/REPO/resolve/REV/NAME
answers as the Hugging Face endpoint (REPO "gated": 401 without "Bearer secret"; then, as
for any repo, a 302 to the CDN host), GET /cdn/NAME as its CDN. The CDN host is the other
spelling of the loopback address (localhost when the endpoint is 127.0.0.1), so the
client sees two hosts. GET /api/models/ORG/REPO/tree/REV?recursive=true lists a repo of
`repos` (REPO -> {path: bytes}; its files are served as REPO/PATH), PAGE entries a page with
a Link header to the next; REPO "gated" answers 401 without the token, "malformed" sends
broken JSON, "offhost" a next page on the CDN host. Every request is recorded with its headers; bytes_sent counts the
body bytes written. Binds 127.0.0.1 on a free port only: nothing leaves the machine.
"""
import http.server
import json
import re
import threading
import time

MODES = ("ok", "ignore", "once", "whole206", "wrongcr", "total", "shorthonest",
         "shortlying", "nocr", "stall", "404", "redir", "xredir", "short200")


class VirtualFile:
    """A large file of zeros after `head`, never held in memory."""

    def __init__(self, head, size):
        self.head = head
        self.size = size

    def chunk(self, begin, end):
        out = bytearray(end - begin)
        if begin < len(self.head):
            part = self.head[begin:min(end, len(self.head))]
            out[:len(part)] = part
        return bytes(out)


class LoopbackServer:
    PAGE = 2

    def __init__(self, files, repos=None):
        self.files = dict(files)  # name -> bytes or VirtualFile
        self.repos = repos or {}  # repo -> {path: bytes}
        for repo, members in self.repos.items():
            for path, data in members.items():
                self.files[repo + "/" + path] = data
        self.requests = []  # (path, {header: value})
        self.bytes_sent = 0
        self.counts = {}
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                with server.lock:
                    server.requests.append((self.path, dict(self.headers.items())))
                try:
                    server.answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, mode, name):
        return "http://127.0.0.1:%d/m/%s/%s" % (self.port, mode, name)

    @property
    def endpoint(self):
        return "http://127.0.0.1:%d" % self.port

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def size_of(self, data):
        return data.size if isinstance(data, VirtualFile) else len(data)

    def bytes_of(self, data, begin, end):
        return data.chunk(begin, end) if isinstance(data, VirtualFile) else data[begin:end]

    def send(self, handler, status, headers, data=None, begin=0, end=0, close_after=None):
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Connection", "close")
        handler.end_headers()
        stop = end if close_after is None else close_after
        at = begin
        while at < stop:
            n = min(65536, stop - at)
            handler.wfile.write(self.bytes_of(data, at, at + n))
            with self.lock:
                self.bytes_sent += n
            at += n
        handler.wfile.flush()

    def listing(self, handler, repo, query):
        if repo == "gated" and handler.headers.get("Authorization") != "Bearer secret":
            return self.send(handler, 401, [("Content-Length", "0")])
        if repo == "malformed":
            body = b'[{"type": "file", "path": "a.bin", "size": 1},'
            return self.send(handler, 200, [("Content-Length", str(len(body)))], body, 0,
                             len(body))
        entries = [{"type": "file", "path": p, "size": self.size_of(d), "oid": "x",
                    "lfs": {"size": self.size_of(d)}}
                   for p, d in sorted(self.repos.get(repo, {}).items())]
        folders = sorted({p.rsplit("/", 1)[0] for p in self.repos.get(repo, {}) if "/" in p})
        entries += [{"type": "directory", "path": f, "size": 0} for f in folders]
        if repo not in self.repos:
            return self.send(handler, 404, [("Content-Length", "0")])
        cursor = int(re.search(r"cursor=(\d+)", query).group(1)) if "cursor=" in query else 0
        page = entries[cursor:cursor + self.PAGE]
        headers = []
        if cursor + self.PAGE < len(entries):
            host = "localhost" if repo == "offhost" else "127.0.0.1"
            headers.append(("Link", '<http://%s:%d/api/models/org/%s/tree/main?recursive=true'
                            '&cursor=%d>; rel="next"' % (host, self.port, repo,
                                                         cursor + self.PAGE)))
        body = json.dumps(page).encode()
        headers.append(("Content-Length", str(len(body))))
        return self.send(handler, 200, headers, body, 0, len(body))

    def answer(self, handler):
        path = handler.path
        api = re.fullmatch(r"/api/models/[^/]+/([^/]+)/tree/[^/?]+\?(.*)", path)
        if api:
            return self.listing(handler, api.group(1), api.group(2))
        hub = re.fullmatch(r"/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)", path)
        if hub:
            repo = hub.group(2)
            if repo == "gated" and handler.headers.get("Authorization") != "Bearer secret":
                return self.send(handler, 401, [("Content-Length", "0")])
            name = hub.group(4)
            if repo + "/" + name in self.files:
                name = repo + "/" + name
            cdn = "http://localhost:%d/cdn/%s" % (self.port, name)
            return self.send(handler, 302, [("Location", cdn), ("Content-Length", "0")])
        match = re.fullmatch(r"/m/([^/]+)/(.+)", path) or re.fullmatch(r"/(cdn)/(.+)", path)
        if not match or match.group(2) not in self.files:
            return self.send(handler, 404, [("Content-Length", "0")])
        mode, name = match.group(1), match.group(2)
        mode = "ok" if mode == "cdn" else mode
        data = self.files[name]
        size = self.size_of(data)
        if mode == "404":
            return self.send(handler, 404, [("Content-Length", "9")], b"not found", 0, 9)
        if mode in ("redir", "xredir"):
            host = "127.0.0.1" if mode == "redir" else "localhost"
            location = "http://%s:%d/m/ok/%s" % (host, self.port, name)
            return self.send(handler, 302, [("Location", location), ("Content-Length", "0")])
        with self.lock:
            self.counts[(mode, name)] = self.counts.get((mode, name), 0) + 1
            count = self.counts[(mode, name)]
        asked = re.fullmatch(r"bytes=(\d+)-(\d+)", handler.headers.get("Range", ""))
        if mode == "stall":
            handler.send_response(206)
            handler.send_header("Content-Length", "1")
            handler.end_headers()
            handler.wfile.flush()
            time.sleep(5)
            return
        if mode == "short200":  # the whole file announced, half of it sent
            return self.send(handler, 200, [("Content-Length", str(size))], data, 0, size,
                             close_after=size // 2)
        if not asked or mode == "ignore" or (mode == "once" and count > 1):
            return self.send(handler, 200, [("Content-Length", str(size))], data, 0, size)
        begin, end = int(asked.group(1)), min(int(asked.group(2)) + 1, size)
        total = size + 1 if mode == "total" and count > 1 else size
        if mode == "whole206":
            begin, end = 0, size
        if mode == "wrongcr":
            begin, end = begin + 1, min(end + 1, size)
        headers = [("Content-Length", str(end - begin))]
        if mode != "nocr":
            headers.append(("Content-Range", "bytes %d-%d/%d" % (begin, end - 1, total)))
        if mode == "shorthonest":
            return self.send(handler, 206, headers, data, begin, end,
                             close_after=begin + (end - begin) // 2)
        if mode == "shortlying":
            half = (end - begin) // 2
            headers[0] = ("Content-Length", str(half))
            return self.send(handler, 206, headers, data, begin, begin + half)
        return self.send(handler, 206, headers, data, begin, end)
