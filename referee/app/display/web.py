"""The browser display's web server: the static page of ``display/web/``, and the
``/config.json`` that tells the page which table to show and how to reach the broker."""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Mapping
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from referee.app.feed import BrokerAddress

log = logging.getLogger("referee.app.display")

#: The static files of the browser display.
WEB_DIR = Path(__file__).with_name("web")


def web_config(table_id: str, ws: BrokerAddress | None) -> dict[str, Any]:
    """What ``/config.json`` tells the page: the table, the websockets URL (``None``: the
    page's own host at ``ws_port``) and the display credentials (a read-only account: every
    browser that loads the page sees them)."""
    config: dict[str, Any] = {"table": table_id, "ws": None, "ws_port": 9001,
                              "username": None, "password": None}
    if ws is None:
        return config
    config["username"], config["password"] = ws.username, ws.password
    if ws.host:
        bare = BrokerAddress(ws.host, ws.port, ws.transport, ws.tls, None, None,
                             ws.path or "/mqtt")
        config["ws"] = bare.url()
    else:
        config["ws_port"] = ws.port
    return config


class _WebHandler(SimpleHTTPRequestHandler):
    config_body = b"{}"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.split("?", 1)[0] == "/config.json":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(self.config_body)))
            self.end_headers()
            self.wfile.write(self.config_body)
            return
        super().do_GET()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("web: " + format, *args)


def make_web_server(host: str, port: int, config: Mapping[str, Any]) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) for ``referee/web/`` and ``/config.json``; port 0
    picks a free port (see ``server.server_address``)."""
    body = json.dumps(dict(config)).encode()
    handler = type("WebHandler", (_WebHandler,), {"config_body": body})
    server = ThreadingHTTPServer((host, port), functools.partial(handler,
                                                                 directory=str(WEB_DIR)))
    server.daemon_threads = True
    return server


def start_web_server(host: str, port: int, config: Mapping[str, Any]
                     ) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """:func:`make_web_server`, serving on a daemon thread; stop with ``server.shutdown()``."""
    server = make_web_server(host, port, config)
    thread = threading.Thread(target=server.serve_forever, name="display-web", daemon=True)
    thread.start()
    return server, thread
