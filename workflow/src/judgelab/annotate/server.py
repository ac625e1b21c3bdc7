"""The annotation page's web server: the standard library's ``ThreadingHTTPServer``, nothing else.

It binds ``127.0.0.1`` unless told otherwise (:func:`check_host`: another address only with
``allow_remote``, and a warning), and answers only under ``/<token>/``, a random
``secrets.token_urlsafe`` made at start and printed in the page's URL:

* ``GET /<token>/`` the page, ``GET /<token>/static/<file>`` its script and style (only the files
  of :data:`FILES`, shipped in ``static/``: no CDN, nothing from the internet);
* ``GET /<token>/api/state`` the pair to label, the scale with its definitions, the progress;
* ``POST /<token>/api/label`` (``{"qid", "docid", "label", "note"}``), ``/api/skip``
  (``{"qid", "docid", "note"}``), ``/api/undo`` (``{}``): one journal event each
  (:class:`judgelab.annotate.journal.Session`), answered with the new state once it is synced.

Refused, each logged (logger ``judgelab.annotate``, the token never written) and nothing
written: a path with ``..`` (403, before anything else), a request without the token (403), a
path or file it does not serve (404), a body that is not one small JSON object (400, 413), and a
label the session refuses - outside the scale, an unknown pair, not the pair shown - (400, the
message shown on the page)."""

from __future__ import annotations

import ipaddress
import json
import logging
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from judgelab.annotate.journal import Refused, Session
from judgelab.errors import InputError

log = logging.getLogger("judgelab.annotate")

STATIC = Path(__file__).with_name("static")

#: What the server serves, by the path under ``/<token>/``: file of ``static/``, content type.
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "static/app.css": ("app.css", "text/css; charset=utf-8"),
}

#: The largest request body read, in bytes (a label with the longest note is far below).
MAX_BODY = 64 * 1024

HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    """A host other than this machine's loopback only with ``allow_remote`` (then a warning)."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise InputError(
            f"--host {host} is reachable from other machines: pass --allow-remote as well to bind it "
            "(anyone who can reach it and has the URL can label, over plain http)"
        )
    log.warning(
        "binding %s: anyone who can reach this address and has the URL can label; the token travels "
        "over plain http",
        host,
    )


class AnnotationServer(ThreadingHTTPServer):
    """The server of one :class:`Session`: its token, and a lock each event is taken under."""

    daemon_threads = True

    def __init__(self, session: Session, host: str = "127.0.0.1", port: int = 0, token: str | None = None):
        if ":" in host:
            self.address_family = socket.AF_INET6
        self.session = session
        self.token = token or secrets.token_urlsafe(24)
        self.lock = threading.Lock()
        super().__init__((host, port), Handler)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/{self.token}/"

    def state(self) -> dict[str, Any]:
        """What the page shows (taken under the lock)."""
        s = self.session
        pair = s.current()
        return {
            "annotator": s.annotator,
            "scale": [{"label": v, "definition": d} for v, d in zip(s.scale.labels, s.scale.definitions)],
            "progress": s.progress(),
            "can_undo": s.can_undo(),
            "pair": None
            if pair is None
            else {"qid": pair.qid, "docid": pair.docid, "query": pair.query, "passage": pair.passage},
        }


class Handler(BaseHTTPRequestHandler):
    server: AnnotationServer
    server_version = "judgelab-annotate"
    sys_version = ""
    timeout = 30  # seconds a connection may idle before it is closed (a stalled client holds a thread)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), (format % args).replace(self.server.token, "<token>"))

    # -- answers --------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: dict[str, Any]) -> None:
        self._send(status, json.dumps(data).encode(), "application/json; charset=utf-8")

    def _refuse(self, status: int, reason: str, state: bool = False) -> None:
        shown = urlsplit(self.path).path.replace(self.server.token, "<token>")
        log.warning(
            "refused %s %s from %s (%d): %s", self.command, shown, self.client_address[0], status, reason
        )
        data: dict[str, Any] = {"error": reason}
        if state:
            with self.server.lock:
                data["state"] = self.server.state()
        self._json(status, data)

    # -- routing --------------------------------------------------------------------------------

    def _route(self) -> str | None:
        """The path under ``/<token>/``, or None once refused (traversal, no token)."""
        path = unquote(urlsplit(self.path).path)
        parts = path.split("/")
        if any(p in ("..", ".") for p in parts) or "\\" in path or "\x00" in path:
            self._refuse(403, "path traversal refused")
            return None
        if len(parts) < 2 or not secrets.compare_digest(parts[1].encode(), self.server.token.encode()):
            self._refuse(403, "no valid token in the URL")
            return None
        if len(parts) == 2:  # /<token> without its slash: the page's relative URLs need it
            self.send_response(301)
            self.send_header("Location", f"/{self.server.token}/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return "/".join(parts[2:])

    def do_GET(self) -> None:
        rest = self._route()
        if rest is None:
            return
        if rest == "api/state":
            with self.server.lock:
                state = self.server.state()
            self._json(200, state)
        elif rest in FILES:
            name, content_type = FILES[rest]
            self._send(200, (STATIC / name).read_bytes(), content_type)
        else:
            self._refuse(404, "not a file this server serves")

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        rest = self._route()
        if rest is None:
            return
        action = rest.removeprefix("api/") if rest.startswith("api/") else ""
        if action not in ("label", "skip", "undo"):
            self._refuse(404, "not an action this server takes")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._refuse(411, "a request body needs its Content-Length")
            return
        if length > MAX_BODY or length < 0:
            self._refuse(413, f"a request body is at most {MAX_BODY} bytes")
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._refuse(400, "the request body is not JSON")
            return
        if not isinstance(body, dict):
            self._refuse(400, "the request body is not a JSON object")
            return
        session = self.server.session
        with self.server.lock:
            try:
                if action == "label":
                    session.label(body.get("qid"), body.get("docid"), body.get("label"), body.get("note", ""))
                elif action == "skip":
                    session.skip(body.get("qid"), body.get("docid"), body.get("note", ""))
                else:
                    session.undo()
            except Refused as exc:
                reason = str(exc)
            else:
                self._json(200, self.server.state())
                return
        self._refuse(400, reason, state=True)


def serve(
    pairs: str | Path,
    folder: str | Path,
    annotator: str,
    template: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
) -> None:
    """``judgelab annotate serve``: checks the host, replays the annotator's journal, prints the
    page's URL (with its token) on stdout and serves until interrupted; the refusals and warnings
    also go to ``<folder>/<annotator>.log``."""
    from judgelab.annotate.pairs import DEFAULT_TEMPLATE, read_pairs, scale_of

    check_host(host, allow_remote)
    scale = scale_of(template or DEFAULT_TEMPLATE)
    session = Session(read_pairs(pairs), scale, folder, annotator)
    handler = logging.FileHandler(session.folder / f"{annotator}.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    if log.getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.INFO)
    try:
        with AnnotationServer(session, host, port) as server:
            p = session.progress()
            log.info("serving %d pairs to %s (%d labelled) on %s", p["total"], annotator, p["labelled"], host)
            print(
                f"judgelab annotate: {p['total']} pairs, {p['labelled']} labelled by {annotator}; "
                f"journal {session.journal}, qrels {session.qrels}\nopen {server.url}",
                flush=True,
            )
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                print("judgelab annotate: stopped; every acknowledged event is in the journal", flush=True)
    finally:
        log.removeHandler(handler)
        handler.close()
