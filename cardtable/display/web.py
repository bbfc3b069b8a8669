"""The browser display's web server: the static page of ``display/web/`` and the stream of
what it shows.

``referee display --web`` is the MQTT client (over TCP like every other client, so any broker
works and no broker credentials reach a browser): it follows the table with a
:class:`~cardtable.display.view.TableView` and serves the page its scenes
(:mod:`~cardtable.display.scene`) as server-sent events on ``/events``: the whole scene at
once when the page connects, then the newest one after each change (a page that falls behind
skips to the newest, it never gets a backlog). ``/scene.json`` is the scene of the moment.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cardtable.display.view import TableView

log = logging.getLogger("cardtable.display")

#: The static files of the browser display.
WEB_DIR = Path(__file__).with_name("web")

#: Pages that may follow the table at once (each holds a thread); more get 503.
MAX_STREAMS = 32

#: Seconds between keep-alive comments on a quiet stream (a page that went away is noticed
#: at the next one).
KEEPALIVE = 15.0

#: How soon (ms) a page reconnects after the stream broke (the browser's EventSource retry).
RETRY_MS = 500


class Broadcast:
    """The newest scene, numbered, for the page streams to pick up (thread-safe)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.version = 0
        self.body = b"{}"
        self.closed = False

    def publish(self, body: bytes) -> None:
        """Make ``body`` the newest scene and wake every stream."""
        with self._cond:
            self.version += 1
            self.body = body
            self._cond.notify_all()

    def next(self, after: int, timeout: float) -> tuple[int, bytes] | None:
        """The newest scene once it is newer than version ``after``; ``None`` after
        ``timeout`` seconds without one; raises :class:`EOFError` once closed."""
        with self._cond:
            self._cond.wait_for(lambda: self.version > after or self.closed, timeout)
            if self.closed:
                raise EOFError
            return (self.version, self.body) if self.version > after else None

    def close(self) -> None:
        """End every stream."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class _WebHandler(SimpleHTTPRequestHandler):
    broadcast: Broadcast
    streams: threading.BoundedSemaphore
    timeout = 30  # a page that stops reading frees its thread after this long

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.path.split("?", 1)[0]
        if path == "/events":
            self._stream()
        elif path == "/scene.json":
            body = self.broadcast.body
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            super().do_GET()

    def _stream(self) -> None:
        if not self.streams.acquire(blocking=False):
            self.send_error(503, "too many pages follow this display")
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.end_headers()
            self.wfile.write(f"retry: {RETRY_MS}\n\n".encode())
            self.wfile.flush()
            version = 0
            while True:
                got = self.broadcast.next(version, KEEPALIVE)
                if got is None:
                    self.wfile.write(b": keep-alive\n\n")
                else:
                    version, body = got
                    self.wfile.write(b"data: " + body + b"\n\n")
                self.wfile.flush()
        except (EOFError, OSError):
            pass  # the display stops, or the page went away
        finally:
            self.streams.release()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("web: " + format, *args)


class WebDisplay:
    """The web page of one table: an HTTP server (port 0 picks a free one, see
    :attr:`port`) that streams ``view``'s scene; call :meth:`changed` after every change of
    the view (it is :func:`~cardtable.display.follow.follow`'s ``on_change``)."""

    def __init__(self, view: TableView, host: str = "127.0.0.1", port: int = 0) -> None:
        self.view = view
        self.broadcast = Broadcast()
        handler = type("WebHandler", (_WebHandler,), {
            "broadcast": self.broadcast,
            "streams": threading.BoundedSemaphore(MAX_STREAMS)})
        self.server = ThreadingHTTPServer((host, port),
                                          functools.partial(handler, directory=str(WEB_DIR)))
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.changed()

    @property
    def host(self) -> str:
        """The address served on."""
        host = self.server.server_address[0]
        return host.decode() if isinstance(host, (bytes, bytearray)) else str(host)

    @property
    def port(self) -> int:
        """The port served on."""
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """``http://host:port/``."""
        return f"http://{self.host}:{self.port}/"

    def changed(self) -> None:
        """Send the view's scene of now to every page."""
        scene = self.view.scene()
        self.broadcast.publish(json.dumps(scene, ensure_ascii=False,
                                          separators=(",", ":")).encode())

    def start(self) -> WebDisplay:
        """Serve on a daemon thread."""
        self._thread = threading.Thread(target=self.server.serve_forever, name="display-web",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """End the streams, stop serving and free the port."""
        self.broadcast.close()
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(5)
        self.server.server_close()

    def __enter__(self) -> WebDisplay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
