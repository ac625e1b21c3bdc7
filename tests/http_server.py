"""A real HTTP server on 127.0.0.1 for the download tests: routes of fixed answers, counted."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

from conftest import free_port


class Server:
    """A real HTTP server on 127.0.0.1 serving ``routes``: path -> (body, bytes to send, status), or
    a list of those answered in turn (the last one repeated). It announces ``len(body)`` in
    Content-Length (none where ``length`` is False) and then sends only the first ``send`` bytes;
    ``content_type``: its Content-Type header. ``hits`` counts the requests of each path."""

    def __init__(self, routes: dict, *, length: bool = True, content_type: str | None = None):
        self.routes = routes
        self.file: Path | None = None  # a file it serves, for the test's own reference
        self.port = free_port()
        self.hits: dict[str, int] = {}
        routes_, hits = routes, self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                answers = routes_.get(self.path, (b"not here", 8, 404))
                n = hits[self.path] = hits.get(self.path, 0) + 1
                if isinstance(answers, list):
                    answers = answers[min(n, len(answers)) - 1]
                body, send, status = answers
                self.send_response(status)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                if content_type:
                    self.send_header("Content-Type", content_type)
                self.end_headers()
                self.wfile.write(body[:send])
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):  # keep the test output clean
                return None

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        # a short poll: shutdown() waits for the loop's next poll (0.5 s by default, per test)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
