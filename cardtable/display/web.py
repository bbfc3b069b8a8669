"""The browser display's routes: the static page of ``display/web/`` and the stream of what it
shows, on the project's web server (:mod:`cardtable.webserver`, aiohttp).

``referee display --web`` is the MQTT client (over TCP like every other client, so any broker
works and no broker credentials reach a browser): it follows the table with a
:class:`~cardtable.display.view.TableView` and serves the page its scenes
(:mod:`~cardtable.display.scene`) as server-sent events on ``events``: the whole scene at
once when the page connects, then the newest one after each change (a page that falls behind
skips to the newest, it never gets a backlog). ``scene.json`` is the scene of the moment.
``referee run`` serves the same page of its own table (:mod:`cardtable.operator.site`) with no
broker in between.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from cardtable.display.view import TableView
from cardtable.webserver import SceneStream, StaticFiles, StreamBudget, WebServer, new_app

#: The static files of the browser display (and the hall's page).
WEB_DIR = Path(__file__).with_name("web")

#: The files the display page loads (served beside it).
DISPLAY_FILES = ("display.js", "style.css", "standings.js", "standings.css", "race.js",
                 "race.css")


def dumps(obj: Any) -> bytes:
    """A scene as the stream sends it (compact UTF-8 JSON)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


_FILES: StaticFiles | None = None


def web_files() -> StaticFiles:
    """Every file of :data:`WEB_DIR`, read once."""
    global _FILES
    if _FILES is None:
        _FILES = StaticFiles(WEB_DIR)
    return _FILES


def add_display_routes(app: web.Application, prefix: str,
                       stream: Callable[[web.Request], SceneStream]) -> None:
    """The display page under ``prefix`` (``/``, or ``/table/{table}/``): its page, its files,
    ``events`` and ``scene.json`` of the stream ``stream(request)`` picks (it may raise 404)."""
    files = web_files()

    async def page(request: web.Request) -> web.StreamResponse:
        stream(request)  # 404 for a table that is not there
        return files.response("index.html")

    async def asset(request: web.Request) -> web.StreamResponse:
        stream(request)
        return files.response(request.match_info["name"])

    async def events(request: web.Request) -> web.StreamResponse:
        return await stream(request).serve(request)

    async def scene(request: web.Request) -> web.StreamResponse:
        return web.Response(body=stream(request).body,
                            content_type="application/json", charset="utf-8")

    names = "|".join(n.replace(".", r"\.") for n in DISPLAY_FILES)
    app.router.add_get(prefix, page)
    app.router.add_get(prefix + "index.html", page)
    app.router.add_get(prefix + "{name:(" + names + ")}", asset)
    app.router.add_get(prefix + "events", events)
    app.router.add_get(prefix + "scene.json", scene)


class WebDisplay:
    """The web page of one table: a server (port 0 picks a free one) that streams ``view``'s
    scene; call :meth:`changed` after every change of the view (it is
    :func:`~cardtable.display.follow.follow`'s ``on_change``). ``async with`` serves it."""

    def __init__(self, view: TableView, host: str = "127.0.0.1", port: int = 0, *,
                 max_streams: int | None = None) -> None:
        self.view = view
        self.stream = SceneStream(budget=StreamBudget(max_streams))
        app = new_app()
        add_display_routes(app, "/", lambda request: self.stream)
        self.server = WebServer(app, host, port)
        self.server.on_stop.append(self.stream.close)
        self.changed()

    @property
    def url(self) -> str:
        """``http://host:port/``."""
        return self.server.url

    def changed(self) -> None:
        """Send the view's scene of now to every page."""
        self.stream.publish(dumps(self.view.scene()))

    async def start(self) -> WebDisplay:
        """Listen (an :class:`OSError` when the address cannot be used)."""
        await self.server.start()
        return self

    async def stop(self) -> None:
        """End the streams, stop serving and free the port."""
        await self.server.stop()

    async def __aenter__(self) -> WebDisplay:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class Served(Protocol):
    """A page server of ``referee display``: started, stopped, with its address."""

    @property
    def url(self) -> str:
        """``http://host:port/``."""

    async def start(self) -> Any:
        """Listen (an :class:`OSError` when the address cannot be used)."""

    async def stop(self) -> None:
        """Stop serving."""


async def serve_while(web: Served, what: str, where: str, serving: str,
                      follow: Callable[[], Awaitable[None]]) -> int:
    """``referee display --web`` (and ``--hall --web``): serve ``web`` while ``follow()``
    follows the broker; 1 with the reason (``what`` could not be served on ``where``), else 0.
    ``serving`` says what is served, with ``{url}``."""
    try:
        await web.start()
    except OSError as exc:
        print(f"referee display: cannot serve {what} on {where} ({exc.strerror or exc})",
              file=sys.stderr)
        return 1
    print(f"referee display: {serving.format(url=web.url)} (Ctrl-C to stop)", flush=True)
    try:
        await follow()
    finally:
        await web.stop()
    return 0
