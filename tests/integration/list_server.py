"""A list server on loopback for the download tests: HTTP or HTTPS (with a CA the test makes),
each path with a body and a behaviour the test switches while dnsmoat runs.

Behaviours: "ok" (200 with ETag and Last-Modified, 304 when the request's validators match),
"no-validators" (200 without ETag/Last-Modified, never 304), "500", "hang" (accepts, sends
nothing until `hang_seconds` pass), "truncate" (announces the full length, sends half, closes),
"redirect:PATH" (302 to another path of this server).
"""

from __future__ import annotations

import hashlib
import http.server
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path


@dataclass
class Served:
    body: bytes
    mode: str = "ok"
    etag: str = ""
    last_modified: str = ""


@dataclass
class Request:
    path: str
    headers: dict
    status: int


@dataclass
class ListServer:
    tls_dir: Path | None = None
    hang_seconds: float = 6.0
    lists: dict[str, Served] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet: the test reads `requests`
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                server._handle(self)

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if self.tls_dir is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls_dir / "server.pem", self.tls_dir / "server.key")
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    # -- control --------------------------------------------------------------------------------
    def url(self, path: str) -> str:
        scheme = "https" if self.tls_dir is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def set(self, path: str, body: bytes | str, mode: str = "ok") -> None:
        data = body.encode() if isinstance(body, str) else body
        with self._lock:
            self.lists[path] = Served(
                data, mode, '"' + hashlib.sha256(data).hexdigest()[:16] + '"',
                formatdate(time.time(), usegmt=True))

    def mode(self, path: str, mode: str) -> None:
        with self._lock:
            self.lists[path].mode = mode

    def requests_for(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- serving --------------------------------------------------------------------------------
    def _record(self, h, status: int) -> None:
        with self._lock:
            self.requests.append(Request(h.path, {k.lower(): v for k, v in h.headers.items()}, status))

    def _handle(self, h) -> None:
        with self._lock:
            served = self.lists.get(h.path)
        if served is None:
            self._record(h, 404)
            h.send_error(404)
            return
        mode = served.mode
        if mode == "500":
            self._record(h, 500)
            h.send_error(500, "list server broken on purpose")
            return
        if mode == "hang":
            self._record(h, 0)
            self._stop.wait(self.hang_seconds)
            h.close_connection = True
            return
        if mode.startswith("redirect:"):
            self._record(h, 302)
            h.send_response(302)
            h.send_header("Location", mode.split(":", 1)[1])
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        validators = mode == "ok"
        # RFC 9110 13.2.2: If-Modified-Since counts only without If-None-Match.
        inm, ims = h.headers.get("If-None-Match"), h.headers.get("If-Modified-Since")
        if validators and (inm == served.etag if inm is not None else ims == served.last_modified):
            self._record(h, 304)
            h.send_response(304)
            h.send_header("ETag", served.etag)
            h.end_headers()
            return
        self._record(h, 200)
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(len(served.body)))
        if validators:
            h.send_header("ETag", served.etag)
            h.send_header("Last-Modified", served.last_modified)
        h.end_headers()
        if mode == "truncate":
            h.wfile.write(served.body[: len(served.body) // 2])
            h.wfile.flush()
            h.close_connection = True
            return
        h.wfile.write(served.body)


def make_test_ca(directory: Path) -> Path:
    """A CA and a certificate for 127.0.0.1 / localhost signed by it, with the openssl CLI.
    Returns the directory (ca.pem, server.pem, server.key)."""
    directory.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True,
                       timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=dnsmoat test CA", "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
            "server.key", "-out", "server.csr")
    (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem")
    return directory
