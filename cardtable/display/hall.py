"""The hall: every table on one broker at a glance (``referee display --hall``).

One MQTT subscription follows every table: ``cardtable/+/status``, ``state``, ``events`` and
``history``. Each table gets its own :class:`~cardtable.display.view.TableView` (the same
rules as a table's own display: checked payloads, ``seq`` gaps, new sessions), so the hall
shows exactly what that table's display would. A table appears with its first message and
stays (offline, when its referee is gone) until the hall stops.

- :class:`HallView`: the tables, and the *hall scene*: one *tile* per table (the game, whose
  turn or who won, the cards per seat, the last verdict, the referee online/offline, alerts);
- :func:`follow_hall`: the subscription loop (reconnects like :func:`~.follow.follow`; on a
  gap it subscribes to ``cardtable/+/state`` again, which makes the broker send every retained
  state, at most every :data:`REREAD_S`);
- :func:`draw_hall`: the terminal's drawing of the hall scene (one row per table);
- :class:`HallWeb`: the web server of the hall: ``/`` the page of tiles (``web/hall.html``,
  ``hall.js``, ``hall.css``), ``/events`` its stream of hall scenes (at most one every
  :data:`HALL_INTERVAL_S`), ``/hall.json``; and every table's own display under
  ``/table/<id>/`` (the page of ``referee display --web``, its ``events`` and ``scene.json``),
  which is where a tile leads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import aiomqtt
from aiohttp import web
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from cardtable.display.follow import link_reporter, read_messages, stay_subscribed
from cardtable.display.scene import headline_words, play_words
from cardtable.display.view import TableView
from cardtable.display.web import (
    LanguageStreams,
    add_display_routes,
    catalog,
    serve_while,
    web_files,
)
from cardtable.feed import BrokerAddress, Topics
from cardtable.i18n import ENGLISH_LANGUAGE, Language, language, languages
from cardtable.webserver import SceneStream, StreamBudget, WebServer, new_app
from referee.cards import SUIT_SYMBOLS
from referee.describe import fill

log = logging.getLogger("cardtable.display")

#: The topics of every table the hall follows.
KINDS = ("status", "state", "events", "history")

#: The shortest time (s) between two re-reads of every retained state after gaps.
REREAD_S = 0.5

#: The shortest time (s) between two hall scenes sent to the pages (the newest is sent).
HALL_INTERVAL_S = 0.2



def table_of(topic: str) -> tuple[str, str] | None:
    """``(table id, kind)`` of a feed topic the hall follows, else None."""
    parts = topic.split("/")
    if len(parts) != 3 or parts[0] != "cardtable" or parts[2] not in KINDS or not parts[1]:
        return None
    return parts[1], parts[2]


def tile(view: TableView, lang: Language = ENGLISH_LANGUAGE) -> dict[str, Any]:
    """One table's tile: ``table``, ``title``, ``round``, ``status`` (``online``, ``offline``
    or None), ``headline`` (words), ``seats`` (``name``, ``count``, ``turn``, ``out``,
    ``winner``), ``pile`` (cards), ``last`` (the last verdict in words, or None), ``alerts``
    (words), ``seq``, ``stale``, ``waiting`` — from the table's scene in ``lang``, so in its
    words."""
    sc = view.scene(lang)
    if sc["waiting"]:
        headline = lang.gettext("Waiting for the referee…")
    else:
        headline = headline_words(sc["headline"], lang)
    return {
        "table": view.table_id, "title": sc["title"], "round": sc["round"],
        "status": view.status, "headline": headline,
        "seats": [{k: s[k] for k in ("name", "count", "turn", "out", "winner")}
                  for s in sc["seats"]],
        "pile": sc["pile"]["count"] if sc["pile"] else None,
        "last": (sc["verdicts"][0] if sc["verdicts"] else sc["round_result"]
                 or _play_text(sc["last_play"], lang)),
        "alerts": [b["text"] for b in sc["banners"] if b["kind"] in ("alert", "unreadable")],
        "seq": sc["seq"], "stale": sc["stale"], "waiting": sc["waiting"],
    }


def _play_text(play: Mapping[str, Any] | None, lang: Language) -> str | None:
    """Who just played what, in words (``Cia played 9♥ 8♣``), for a tile without verdicts."""
    if not play:
        return None

    def shown(card: Any) -> str:
        return str(card)[:-1] + SUIT_SYMBOLS.get(str(card)[-1], str(card)[-1]) if card else "?"

    return fill(play_words(play, lang), cards=" ".join(shown(c) for c in play.get("cards") or []),
                card=shown(play.get("as"))).strip()


class HallView:
    """What the hall knows: a :class:`TableView` per table seen, and the hall's own connection
    to the broker. Feed it messages with :meth:`on_message`; :meth:`scene` is what it shows.
    Tiles are built again only for the tables that changed since the last scene."""

    def __init__(self, lang: str | None = None) -> None:
        #: The hall's language (``--lang``); None: the system locale's.
        self.lang = lang
        self.tables: dict[str, TableView] = {}
        self.connected = False
        self.error: str | None = None
        self.connections = 0
        #: Messages taken, since the start.
        self.messages = 0
        self._tiles: dict[tuple[str, str], dict[str, Any]] = {}
        self._dirty: dict[str, set[str]] = {}  # language -> tables changed since its tiles

    def on_message(self, topic: str, payload: bytes) -> tuple[str | None, bool]:
        """Take one message: ``(the table it changed or None, whether the retained states
        must be read again)``. Never raises for what the message holds."""
        found = table_of(topic)
        if found is None:
            return None, False
        table_id, _kind = found
        view = self.tables.get(table_id)
        if view is None:
            try:
                Topics(table_id)
            except ValueError:
                return None, False
            view = self.tables[table_id] = TableView(table_id, connected=self.connected)
        self.messages += 1
        reread = view.on_message(topic, payload)
        self._changed([table_id])
        return table_id, reread

    def _changed(self, tables: Any) -> None:
        for dirty in self._dirty.values():
            dirty.update(tables)

    def language(self, code: str | None = None) -> Language:
        """The hall's words: ``code`` (a page's ``?lang=``) when there are words in it, else
        the hall's own (``--lang``), else the system locale's."""
        for choice in (code, self.lang):
            if choice in languages():
                return language(choice)
        return language(None)

    def set_connection(self, connected: bool, error: str | None) -> None:
        """The hall's connection to the broker (every table's display shares it)."""
        self.connected, self.error = connected, error
        for view in self.tables.values():
            view.connected, view.error = connected, error
        self._changed(self.tables)

    def tile(self, table_id: str, lang: Language | None = None) -> dict[str, Any]:
        """The tile of one table in ``lang`` (built again if it changed)."""
        lang = lang or self.language()
        dirty = self._dirty.setdefault(lang.code, set())
        key = (table_id, lang.code)
        if table_id in dirty or key not in self._tiles:
            self._tiles[key] = tile(self.tables[table_id], lang)
            dirty.discard(table_id)
        return self._tiles[key]

    def scene(self, lang: Language | None = None) -> dict[str, Any]:
        """The hall scene in ``lang`` (default: :meth:`language`): ``connected``, ``error``,
        ``count`` (tables), ``online`` (tables whose referee is online), ``tables`` (the tiles,
        by table id), ``lang`` and ``words`` (``summary``: how many tables, how many
        online)."""
        lang = lang or self.language()
        tiles = [self.tile(t, lang) for t in sorted(self.tables)]
        online = sum(t["status"] == "online" for t in tiles)
        return {"connected": self.connected, "error": self.error, "count": len(tiles),
                "online": online, "tables": tiles, "lang": lang.code,
                "words": {"summary": lang.gettext("{tables}, {online}").format(
                    tables=lang.ngettext("{n} table", "{n} tables", len(tiles)).format(
                        n=len(tiles)),
                    online=lang.ngettext("{n} online", "{n} online", online).format(
                        n=online))}}


async def follow_hall(
    broker: BrokerAddress,
    hall: HallView,
    on_change: Callable[[str | None], None] = lambda table: None,
    *,
    stop: asyncio.Event | None = None,
    backoff: tuple[float, float] = (0.1, 0.5),
) -> None:
    """Subscribe to every table and keep ``hall`` up to date, calling ``on_change`` with the
    table that changed (None: the hall's connection); reconnect with a capped backoff; return
    when ``stop`` is set."""
    stop = stop or asyncio.Event()
    await stay_subscribed(
        broker, [(f"cardtable/+/{kind}", 1) for kind in KINDS], hall, lambda: on_change(None),
        lambda client: _read(client, hall, on_change, stop), stop=stop, backoff=backoff,
        who="hall")


async def _read(client: aiomqtt.Client, hall: HallView,
                on_change: Callable[[str | None], None], stop: asyncio.Event) -> None:
    reread = asyncio.Event()

    async def rereader() -> None:
        while True:
            await reread.wait()
            reread.clear()
            # Subscribing again makes the broker send every retained state at once.
            await client.subscribe("cardtable/+/state", qos=1)
            await asyncio.sleep(REREAD_S)

    async def take(topic: str, payload: bytes) -> None:
        table, again = hall.on_message(topic, payload)
        if again:
            reread.set()
        if table is not None:
            on_change(table)

    helper = asyncio.create_task(rereader())
    try:
        await read_messages(client, take, stop, beside=helper)
    finally:
        helper.cancel()
        with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
            await helper


# --------------------------------------------------------------------------- the terminal


def draw_hall(sc: Mapping[str, Any], *, where: str = "",
              lang: Language = ENGLISH_LANGUAGE) -> RenderableType:
    """The hall scene as one rich renderable: one row per table (labels in ``lang``, the
    scene's language)."""
    parts: list[RenderableType] = []
    if not sc["connected"]:
        text = (lang.gettext("No connection to the broker ({error}): reconnecting…").format(
            error=sc["error"]) if sc["error"]
            else lang.gettext("No connection to the broker: reconnecting…"))
        parts.append(Text(f" {text} ", style="bold black on yellow"))
    grid = RichTable(show_edge=False, pad_edge=False, expand=True)
    grid.add_column(lang.gettext("Table"), no_wrap=True, overflow="ellipsis", max_width=16)
    grid.add_column(lang.gettext("Game"), no_wrap=True, overflow="ellipsis", max_width=16)
    grid.add_column(lang.gettext("Ref."), no_wrap=True)
    for name in (lang.gettext("Now"), lang.gettext("Cards")):
        grid.add_column(name, no_wrap=True, overflow="ellipsis", max_width=28)
    grid.add_column(lang.gettext("Last verdict"), no_wrap=True, overflow="ellipsis", ratio=1,
                    min_width=16)
    for t in sc["tables"]:
        status = t["status"]
        ref = Text(lang.gettext("on"), style="bold green") if status == "online" else (
            Text(lang.gettext("OFF"), style="bold white on red") if status == "offline"
            else Text("?", style="dim"))
        cards = " ".join(f"{s['name']} {'?' if s['count'] is None else s['count']}"
                         + ("◀" if s["turn"] else "") for s in t["seats"])
        game = (t["title"] or "") + (f" r{t['round']}" if t["round"] is not None else "")
        last = t["last"] or ""
        if t["alerts"]:
            last = "⚠ " + t["alerts"][0] + (f" · {last}" if last else "")
        grid.add_row(t["table"], game, ref, t["headline"], cards, last,
                     style="dim" if t["stale"] else None)
    if sc["tables"]:
        parts.append(grid)
    else:
        parts.append(Text(lang.gettext("No table on the broker yet…"), style="dim"))
    title = lang.gettext("Hall · {summary}").format(summary=sc["words"]["summary"])
    return Panel(Group(*parts), title=title, subtitle=where or None)


async def show_hall_live(broker: BrokerAddress, hall: HallView) -> None:
    """The hall in the terminal, live (10 redraws a second at most)."""
    console = Console()
    where = broker.url()
    lang = hall.language()
    report = link_reporter(hall, f"the broker at {where}", console)
    with Live(draw_hall(hall.scene(lang), where=where, lang=lang), console=console,
              refresh_per_second=10, screen=console.is_terminal) as live:
        def changed(table: str | None) -> None:
            live.update(draw_hall(hall.scene(lang), where=where, lang=lang))
            report()

        await follow_hall(broker, hall, changed)


async def show_hall_once(broker: BrokerAddress, hall: HallView, timeout: float,
                         settle: float = 0.5) -> int:
    """Print the hall once, ``settle`` seconds after the last message of the first burst (the
    retained states) or after ``timeout``; 0, or 1 with the reason when the broker could not
    be reached."""
    stop = asyncio.Event()
    changed = asyncio.Event()
    task = asyncio.create_task(follow_hall(broker, hall, lambda table: changed.set(),
                                           stop=stop))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), min(settle, deadline - loop.time()))
        if not changed.is_set() and hall.connections:
            break
    lang = hall.language()
    picture = draw_hall(hall.scene(lang), where=broker.url(), lang=lang)
    stop.set()
    await task
    if not hall.connections:
        print(f"referee display: cannot reach the broker at {broker.url()} "
              f"({hall.error or 'no answer'}) within {timeout:g} s", file=sys.stderr)
        return 1
    Console().print(picture)
    return 0


# --------------------------------------------------------------------------- the web


def table_path(table_id: str) -> str:
    """Where the hall serves a table's own display: ``/table/<id>/`` (the id URL-quoted)."""
    return f"/table/{quote(table_id, safe='')}/"


class HallWeb:
    """The hall's web server (port 0 picks a free one). Call :meth:`changed` with each table
    that changed (it is :func:`follow_hall`'s ``on_change``) on the loop that serves: the hall
    scene goes to the pages at most every :data:`HALL_INTERVAL_S`, a table's scene to its own
    pages at once. Every stream of the hall shares one budget of pages
    (:data:`~cardtable.webserver.MAX_STREAMS`)."""

    def __init__(self, hall: HallView, host: str = "127.0.0.1", port: int = 0,
                 interval: float = HALL_INTERVAL_S, *, max_streams: int | None = None) -> None:
        self.hall = hall
        self.interval = interval
        self.budget = StreamBudget(max_streams)
        self.hall_streams = LanguageStreams(hall.scene, hall.language, self.budget)
        self._tables: dict[str, LanguageStreams] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: asyncio.TimerHandle | None = None
        self._last = 0.0
        files = web_files()
        app = new_app()

        async def page(request: web.Request) -> web.StreamResponse:
            return files.response("hall.html")

        async def asset(request: web.Request) -> web.StreamResponse:
            return files.response(request.match_info["name"])

        async def events(request: web.Request) -> web.StreamResponse:
            return await self.hall_streams.of(request).serve(request)

        async def scene(request: web.Request) -> web.StreamResponse:
            return web.Response(body=self.hall_streams.of(request).body,
                                content_type="application/json", charset="utf-8")

        async def bare(request: web.Request) -> web.StreamResponse:
            self._stream_of(request)
            raise web.HTTPMovedPermanently(table_path(request.match_info["table"]))

        for path in ("/", "/index.html", "/hall.html"):
            app.router.add_get(path, page)
        app.router.add_get("/{name:(hall\\.js|hall\\.css|i18n\\.js)}", asset)
        app.router.add_get("/catalog.json", catalog)
        app.router.add_get("/events", events)
        app.router.add_get("/hall.json", scene)
        app.router.add_get("/table/{table}", bare)
        add_display_routes(app, "/table/{table}/", self._stream_of)
        self.server = WebServer(app, host, port)
        self.server.on_stop.append(self._close_streams)
        self._send_hall()

    @property
    def url(self) -> str:
        """``http://host:port/``."""
        return self.server.url

    @property
    def hall_stream(self) -> SceneStream:
        """The stream of the hall scenes in the hall's own language."""
        return self.hall_streams.stream

    def _stream_of(self, request: web.Request) -> LanguageStreams:
        table_id = request.match_info["table"]
        if table_id not in self.hall.tables:
            raise web.HTTPNotFound(text="no such table on the broker (yet)")
        return self.table_streams(table_id)

    def table_streams(self, table_id: str) -> LanguageStreams:
        """The streams of one table's scenes (made when a page first asks for it): in the
        table's own language, and each a page asks for."""
        found = self._tables.get(table_id)
        if found is None:
            view = self.hall.tables[table_id]
            found = self._tables[table_id] = LanguageStreams(view.scene, view.language,
                                                             self.budget)
            found.publish()
        return found

    def table_stream(self, table_id: str) -> SceneStream:
        """The stream of one table's scenes in its own language."""
        return self.table_streams(table_id).stream

    def _send_table(self, table_id: str) -> None:
        found = self._tables.get(table_id)
        if table_id in self.hall.tables and found is not None:
            found.publish()

    def _send_hall(self) -> None:
        self._pending = None
        if self._loop is not None:
            self._last = self._loop.time()
        self.hall_streams.publish()

    def changed(self, table_id: str | None = None) -> None:
        """A table (None: the connection) changed: update its pages now and the hall's soon."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if table_id is None:
            for t in list(self._tables):
                self._send_table(t)
        elif table_id in self._tables:
            self._send_table(table_id)
        if self._pending is None:
            wait = max(0.0, self._last + self.interval - self._loop.time())
            self._pending = self._loop.call_later(wait, self._send_hall)

    def _close_streams(self) -> None:
        self.hall_streams.close()
        for streams in self._tables.values():
            streams.close()

    async def start(self) -> HallWeb:
        """Listen (an :class:`OSError` when the address cannot be used)."""
        await self.server.start()
        return self

    async def stop(self) -> None:
        """End the streams, stop serving and free the port."""
        if self._pending is not None:
            self._pending.cancel()
        await self.server.stop()

    async def __aenter__(self) -> HallWeb:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


# --------------------------------------------------------------------------- the command


def run_hall(args: Any, broker: BrokerAddress) -> int:
    """``referee display --hall`` with the parsed (and checked: ``cardtable.commands.display``)
    arguments of ``referee display`` and the broker they name; the exit status."""
    hall = HallView(args.lang)
    try:
        if args.web:
            return asyncio.run(_serve_hall(args, broker, hall))
        if args.once:
            return asyncio.run(show_hall_once(broker, hall, args.timeout))
        asyncio.run(show_hall_live(broker, hall))
    except KeyboardInterrupt:
        pass
    return 0


async def _serve_hall(args: Any, broker: BrokerAddress, hall: HallView) -> int:
    web_ = HallWeb(hall, args.bind, args.port)
    return await serve_while(web_, "the hall", f"{args.bind}:{args.port}",
                             f"serving the hall on {{url}} from {broker.url()}",
                             lambda: follow_hall(broker, hall, web_.changed))
