"""A small HTTP server on 127.0.0.1 for the provider tests: routes by method and path, and a
record of every request it received. Nothing leaves the machine.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

Answer = tuple[int, dict[str, str], bytes]
Route = Callable[["Request"], Answer]


@attrs.frozen
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> list[tuple[str, str | None, bytes]]:
        """Return the multipart parts as ``(field name, filename, bytes)``."""
        head = f"Content-Type: {self.headers['content-type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + self.body)
        parts = []
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            assert isinstance(name, str), part
            assert isinstance(payload, bytes), part
            parts.append((name, part.get_filename(), payload))
        return parts


def as_json(data: Any, status: int = 200) -> Answer:
    return status, {"Content-Type": "application/json"}, json.dumps(data).encode()


def as_html(text: str, status: int = 200) -> Answer:
    return status, {"Content-Type": "text/html; charset=utf-8"}, text.encode()


def redirect(location: str, status: int = 302) -> Answer:
    return status, {"Location": location}, b""


class Server:
    """An HTTP server on 127.0.0.1 answering from ``routes`` and recording every request."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command,
                    url.path,
                    urllib.parse.parse_qs(url.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                server.requests.append(request)
                route = server.routes.get((self.command, url.path))
                status, headers, body = route(request) if route else (404, {}, b"no route")
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def route(self, method: str, path: str) -> Callable[[Route], Route]:
        def add(function: Route) -> Route:
            self.routes[(method, path)] = function
            return function

        return add

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]


@contextmanager
def running() -> Iterator[Server]:
    """Start a :class:`Server` on a free port; shut it down afterwards."""
    server = Server()
    thread = threading.Thread(
        target=server.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
