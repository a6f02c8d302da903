"""A local HTTP server for tests: 127.0.0.1, ephemeral port, one thread per connection.

Never the network: every HTTP test talks to one of these, started and stopped by the test.

- **Routes**: ``server.route(path, reply)`` where ``reply`` is a ``Reply`` or a function
  ``(RecordedRequest) -> Reply`` (for conditional requests, paging, ...). A path may include the
  query string (matched first) or not.
- **Fault injection by path**: ``server.fault(path, reply1, reply2, ...)`` serves those replies, in
  order and once each, to the next requests for ``path``; then the route answers again. So
  "429 then success" is ``fault(path, Reply(429, headers={"Retry-After": "7"}))`` + a route.
- **Faults a Reply can carry**: ``delay_s`` (sleep before answering: client read timeouts),
  ``content_length`` (declare a length different from what is sent: truncated bodies),
  ``stream_bytes`` (stream a big filler body in chunks, close-delimited unless a length is given),
  ``drop`` (close the connection without answering).
- **Recording**: ``server.requests`` (method, path, query, lower-case headers), ``server.hits(path)``,
  and ``server.bytes_sent(path)`` (to prove a client stopped reading early).

Unknown paths get a 404 (so robots.txt is "allow all" unless routed). Responses are HTTP/1.0
(one connection per request), which keeps close-delimited and truncated bodies simple.
"""

from __future__ import annotations

import collections
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Union
from urllib.parse import urlsplit

AUTO = "auto"


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/html; charset=utf-8"
    delay_s: float = 0.0                  # wait before sending anything
    content_length: int | str | None = AUTO  # AUTO: len(body); None: omit; int: declare this many
    stream_bytes: int | None = None       # send this many filler bytes instead of body
    chunk_bytes: int = 64 * 1024
    drop: bool = False                    # close the socket without a response

    def body_bytes(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


@dataclass
class RecordedRequest:
    method: str
    path: str          # without the query
    query: str
    headers: dict[str, str]
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def target(self) -> str:
        return self.path + (("?" + self.query) if self.query else "")


Responder = Union[Reply, Callable[[RecordedRequest], Reply]]


class LocalHttpServer:
    def __init__(self) -> None:
        self.routes: dict[str, Responder] = {}
        self._faults: dict[str, collections.deque[Reply]] = collections.defaultdict(collections.deque)
        self.requests: list[RecordedRequest] = []
        self._sent: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------ set-up
    def route(self, path: str, reply: Responder) -> "LocalHttpServer":
        self.routes[path] = reply
        return self

    def fault(self, path: str, *replies: Reply) -> "LocalHttpServer":
        with self._lock:
            self._faults[path].extend(replies)
        return self

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    # ------------------------------------------------------------------------ inspection
    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path or r.target == path]

    def hits(self, path: str) -> int:
        return len(self.requests_to(path))

    def bytes_sent(self, path: str) -> int:
        with self._lock:
            return self._sent[path]

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until every request seen so far has been fully handled (bytes_sent is final)."""
        with self._lock:
            pending = list(self.requests)
        for req in pending:
            req.finished.wait(timeout)

    # ------------------------------------------------------------------------ lifecycle
    def start(self) -> "LocalHttpServer":
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                owner._handle(self)

            def do_HEAD(self) -> None:
                owner._handle(self, head=True)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address) -> None:  # client went away: expected
                pass

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "LocalHttpServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------------ serving
    def _pick(self, req: RecordedRequest) -> Reply:
        with self._lock:
            for key in (req.target, req.path):
                queue = self._faults.get(key)
                if queue:
                    return queue.popleft()
        for key in (req.target, req.path):
            responder = self.routes.get(key)
            if responder is not None:
                return responder(req) if callable(responder) else responder
        return Reply(404, "<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>")

    def _handle(self, handler: BaseHTTPRequestHandler, head: bool = False) -> None:
        parts = urlsplit(handler.path)
        req = RecordedRequest(
            method=handler.command, path=parts.path, query=parts.query,
            headers={k.lower(): v for k, v in handler.headers.items()},
        )
        with self._lock:
            self.requests.append(req)
        try:
            reply = self._pick(req)
            if reply.delay_s and self.stopping.wait(reply.delay_s):
                return
            if reply.drop:
                try:
                    handler.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                handler.close_connection = True
                return
            body = reply.body_bytes()
            total = reply.stream_bytes if reply.stream_bytes is not None else len(body)
            handler.send_response(reply.status)
            if reply.content_type and not any(k.lower() == "content-type" for k in reply.headers):
                handler.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            if reply.content_length == AUTO:
                if reply.stream_bytes is None:
                    handler.send_header("Content-Length", str(total))
            elif reply.content_length is not None:
                handler.send_header("Content-Length", str(reply.content_length))
            handler.end_headers()
            if head or reply.status in (204, 304):
                return
            if reply.stream_bytes is None:
                handler.wfile.write(body)
                self._count(req.path, len(body))
            else:
                chunk = (body or b"x") * (reply.chunk_bytes // max(1, len(body or b"x")) + 1)
                chunk = chunk[: reply.chunk_bytes]
                remaining = reply.stream_bytes
                while remaining > 0 and not self.stopping.is_set():
                    piece = chunk[: min(len(chunk), remaining)]
                    handler.wfile.write(piece)
                    remaining -= len(piece)
                    self._count(req.path, len(piece))
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            pass  # the client hung up (timeouts, oversize aborts): that is the point of those tests
        finally:
            req.finished.set()

    def _count(self, path: str, n: int) -> None:
        with self._lock:
            self._sent[path] += n


def conditional_page(body: bytes | str, *, etag: str | None = None, last_modified: str | None = None,
                     content_type: str = "text/html; charset=utf-8") -> Callable[[RecordedRequest], Reply]:
    """A page that answers 304 when the request's validators match (If-None-Match wins, per RFC 9110)."""

    def respond(req: RecordedRequest) -> Reply:
        headers: dict[str, str] = {}
        if etag:
            headers["ETag"] = etag
        if last_modified:
            headers["Last-Modified"] = last_modified
        inm = req.headers.get("if-none-match")
        ims = req.headers.get("if-modified-since")
        if inm is not None and etag is not None:
            if etag in [v.strip() for v in inm.split(",")] or inm.strip() == "*":
                return Reply(304, b"", headers=headers, content_type=None, content_length=None)
        elif ims is not None and last_modified is not None and ims == last_modified:
            return Reply(304, b"", headers=headers, content_type=None, content_length=None)
        return Reply(200, body, headers=headers, content_type=content_type)

    return respond


class RawServer:
    """127.0.0.1 socket server for byte-level faults ``LocalHttpServer`` cannot send (HTTP/1.1 framing,
    a response trickled byte by byte, chunked bodies that also declare a length).

    ``handler(conn, request_bytes)`` writes whatever bytes it likes; the connection is closed after.
    Use as a context manager; ``close()`` also wakes handlers waiting on ``stopping``.
    """

    def __init__(self, handler: Callable[[socket.socket, bytes], None]) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.handler = handler
        self.stopping = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            self.handler(conn, conn.recv(65536))
        except OSError:
            pass  # the client hung up: expected in the timeout tests
        finally:
            conn.close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}{path}"

    def close(self) -> None:
        self.stopping.set()
        self.sock.close()

    def __enter__(self) -> "RawServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
