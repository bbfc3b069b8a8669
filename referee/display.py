"""``referee display``: a table display that follows the MQTT feed (``referee/feed.py``).

In a terminal it draws, with rich, what RULES.md "What the referee says" lists: whose turn it
is, the top cards of the pile (and Banka bäver's bottom card), the cards per seat, an open
challenge with who owes how many, the last verdicts in plain words (slaps, illegal plays with
their reasons), players out, round scores and the winner, and a "referee offline" banner from the
``status`` topic. With ``--web`` it serves a static page (``referee/web/``) that shows the same
in large type in a browser, which follows the broker itself over MQTT-over-websockets.

The drawing is a pure function, :func:`render`, of (state, recent events, status); the MQTT side
is :class:`TableView` (what a display knows) and :func:`follow` (the subscription loop, which
re-reads the retained ``state`` on a ``seq`` gap or a new ``session``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import aiomqtt
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from referee.cards import RANK_TEXT, SUIT_SYMBOLS, parse_card
from referee.describe import describe
from referee.feed import BrokerAddress, Topics, resolve_broker, seat_name

log = logging.getLogger("referee.display")

#: The static files of the browser display.
WEB_DIR = Path(__file__).with_name("web")

#: How many verdicts a display keeps and shows.
RECENT = 8

GAME_TITLES = {
    "beggar-my-neighbour": "Beggar My Neighbour",
    "banka-bever": "Banka bäver",
    "vandatta": "Vändåtta",
}


def card_label(text: str | None) -> Text:
    """A card as ``Q♥`` in red or black; ``▒▒`` for a face-down card."""
    if text is None:
        return Text("▒▒", style="dim")
    card = parse_card(text)
    rank = str(card)[:-1]
    style = "bold red" if card.suit in "DH" else "bold"
    return Text(rank + SUIT_SYMBOLS[card.suit], style=style)


# --------------------------------------------------------------------------- what a display knows


def _event_key(v: Mapping[str, Any]) -> tuple[Any, ...]:
    return (v.get("session"), v.get("seq"), v.get("t"), v.get("verdict"), v.get("seat"),
            v.get("code"))


@dataclass
class TableView:
    """A display's knowledge of one table: the newest state, the recent verdicts, the referee's
    status and the display's own connection. Feed it messages with :meth:`on_message`."""

    table_id: str
    state: dict[str, Any] | None = None
    status: str | None = None
    connected: bool = False
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))
    session: str | None = None
    seq: int = 0
    #: Times the display asked for the retained state again (gaps and new sessions).
    rereads: int = 0

    def on_message(self, topic: str, payload: bytes) -> bool:
        """Take one message of the table's topics; True when the state must be re-read."""
        topics = Topics(self.table_id)
        if topic == topics.status:
            self.status = payload.decode(errors="replace").strip() or None
            return False
        try:
            obj = json.loads(payload) if payload else None
        except ValueError:
            log.warning("display: unreadable JSON on %s", topic)
            return False
        if not isinstance(obj, dict):
            return False
        if topic == topics.state:
            self.on_state(obj)
            return False
        if topic == topics.events:
            return self.on_event(obj)
        return False

    def on_state(self, state: dict[str, Any]) -> None:
        """A (retained or fresh) state: a new session starts the verdict list afresh from the
        state's ``recent``; the same session merges ``recent`` in (it fills a gap)."""
        session = state.get("session")
        seq = state.get("seq") if isinstance(state.get("seq"), int) else 0
        if session != self.session:
            self.session = session
            self.seq = seq
            self.events.clear()
        elif seq < self.seq and self.state is not None:
            return  # older than what this display already shows
        self.seq = max(self.seq, seq)
        self.state = state
        known = {_event_key(e) for e in self.events}
        merged = list(self.events) + [dict(e, session=session) if "session" not in e else e
                                      for e in state.get("recent") or []
                                      if _event_key(e) not in known]
        merged.sort(key=lambda e: e.get("seq") or 0)
        self.events.clear()
        self.events.extend(merged[-RECENT:])

    def on_event(self, event: dict[str, Any]) -> bool:
        """One verdict; True when it shows that this display missed something (a ``seq`` gap or
        a new ``session``), so the state must be re-read."""
        session, seq = event.get("session"), event.get("seq")
        if not isinstance(seq, int):
            return False
        if session != self.session or seq > self.seq + 1:
            self.events.append(event)
            return True
        if _event_key(event) not in {_event_key(e) for e in self.events}:
            self.events.append(event)
        self.seq = max(self.seq, seq)
        return False

    def render(self) -> RenderableType:
        """:func:`render` of what this display knows."""
        return render(self.state, list(self.events), self.status, table_id=self.table_id,
                      connected=self.connected)


# --------------------------------------------------------------------------- drawing


def _names(state: Mapping[str, Any]) -> list[str]:
    names = state.get("seats")
    n = len(state.get("counts") or [])
    if isinstance(names, list) and len(names) >= n:
        return [str(x) for x in names]
    return [f"seat {i}" for i in range(n)]


def _cards(pile: Sequence[str | None], last: int) -> Text:
    shown = list(pile)[-last:]
    line = Text()
    for i, card in enumerate(shown):
        label = card_label(card)
        if i == len(shown) - 1:
            label.stylize("reverse")
        line += label + Text("  ")
    return line


def _match_text(current: Mapping[str, Any]) -> str:
    rank, suit = current.get("rank"), current.get("suit")
    rank_text = RANK_TEXT.get(rank, str(rank)) if isinstance(rank, int) else str(rank)
    suit_text = SUIT_SYMBOLS.get(str(suit), str(suit))
    return f"{rank_text} or {suit_text}"


def _latest_round(events: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    for v in reversed(events):
        if v.get("verdict") == "round_over":
            return v
    return None


def table_alerts(state: Mapping[str, Any] | None) -> list[str]:
    """What is wrong at the table right now, in words: paused, board offline, stuck buttons."""
    if not state:
        return []
    names = _names(state)
    alerts = state.get("alerts") or {}
    out = []
    if alerts.get("board") == "offline":
        out.append("TABLE BOARD OFFLINE: the game waits for it")
    if state.get("paused"):
        out.append("PAUSED by the referee")
    for stuck in alerts.get("stuck") or []:
        out.append(f"{seat_name(stuck.get('seat'), names)}'s {stuck.get('button')} button is "
                   "stuck: ignored until released")
    return out


def render(
    state: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    status: str | None,
    *,
    table_id: str | None = None,
    connected: bool = True,
) -> RenderableType:
    """The whole table as one rich renderable, from the retained state, the recent verdicts
    (oldest first) and the ``status`` text. Pure: same input, same picture."""
    parts: list[RenderableType] = []
    if not connected:
        parts.append(Text(" no connection to the broker: reconnecting… ", style="bold black on "
                          "yellow"))
    if status == "offline":
        parts.append(Text(" REFEREE OFFLINE: the last known state is shown ",
                          style="bold white on red"))
    for alert in table_alerts(state):
        parts.append(Text(f" {alert} ", style="bold black on yellow"))
    where = f"table {table_id}" if table_id else "table"
    if state is None:
        parts.append(Text("Waiting for the referee…", style="dim"))
        return Panel(Group(*parts), title=where, subtitle=status or "no status yet")

    names = _names(state)
    game = str(state.get("game") or "")
    title = f"{GAME_TITLES.get(game, game or 'game')} · {where}"
    if state.get("round") is not None:
        title += f" · round {state['round']}"

    winners = state.get("winners") or []
    if winners:
        who = " and ".join(seat_name(w, names) for w in winners)
        parts.append(Text(f"WINNER: {who}" if len(winners) == 1 else f"SHARED WIN: {who}",
                          style="bold green"))
    elif state.get("turn") is not None:
        parts.append(Text.assemble(("Turn: ", "bold"),
                                   (seat_name(state["turn"], names), "bold green")))
    elif state.get("over"):
        parts.append(Text("Game over", style="bold"))

    pile = list(state.get("pile") or [])
    line = Text.assemble(("Pile: ", "bold"))
    line += _cards(pile, 5) if pile else Text("empty  ", style="dim")
    line += Text(f"({len(pile)} card{'s' * (len(pile) != 1)})", style="dim")
    if game == "banka-bever" or state.get("bottom") is not None:
        line += Text("   Bottom card: ", style="bold")
        line += card_label(state.get("bottom")) if state.get("bottom") else Text("none",
                                                                                 style="dim")
    parts.append(line)

    current = state.get("current")
    if isinstance(current, Mapping) and current:
        extra = Text.assemble(("Play on: ", "bold"), _match_text(current))
        if state.get("stock") is not None:
            extra += Text(f"   Stock: {state['stock']} cards")
        parts.append(extra)
    if state.get("must_draw") is not None:
        parts.append(Text(f"{seat_name(state['must_draw'], names)} must draw a card",
                          style="yellow"))

    challenge = state.get("challenge")
    if isinstance(challenge, Mapping) and challenge:
        owes = challenge.get("owes")
        parts.append(Text(
            f"Challenge: {seat_name(challenge.get('seat'), names)} owes {owes} more "
            f"card{'s' * (owes != 1)} to {seat_name(challenge.get('by'), names)}",
            style="bold yellow"))
    claim = state.get("claim")
    if isinstance(claim, Mapping) and claim:
        parts.append(Text(f"{seat_name(claim.get('seat'), names)} is collecting the pile "
                          f"({str(claim.get('reason', '')).replace('_', ' ')}): slap now or "
                          "never", style="yellow"))

    grid = RichTable(show_edge=False, pad_edge=False)
    grid.add_column("Seat")
    grid.add_column("Cards", justify="right")
    totals = state.get("totals")
    if totals:
        grid.add_column("Points", justify="right")
    grid.add_column("")
    counts = list(state.get("counts") or [])
    out = set(state.get("out") or [])
    for i, name in enumerate(names):
        notes: list[str] = []
        if state.get("turn") == i:
            notes.append("◀ to play")
        if isinstance(challenge, Mapping) and challenge and challenge.get("seat") == i:
            notes.append(f"owes {challenge.get('owes')}")
        if state.get("must_draw") == i:
            notes.append("must draw")
        if i in out:
            notes.append("OUT")
        if i in winners:
            notes.append("WINNER")
        row = [name, str(counts[i]) if i < len(counts) else "?"]
        if totals:
            row.append(str(totals[i]) if i < len(totals) else "")
        row.append(" · ".join(notes))
        grid.add_row(*row, style="dim" if i in out else ("bold" if state.get("turn") == i
                                                         else None))
    parts.append(grid)

    if out:
        parts.append(Text("Out: " + ", ".join(seat_name(s, names) for s in sorted(out))))
    last_round = _latest_round(events)
    if last_round is not None:
        scores = last_round.get("scores") or []
        head = ("Round blocked" if last_round.get("winner") is None
                else f"Round won by {seat_name(last_round.get('winner'), names)}")
        parts.append(Text(f"{head}. Scores: " + ", ".join(
            f"{seat_name(i, names)} {s}" for i, s in enumerate(scores)), style="cyan"))

    if events:
        parts.append(Text("Last verdicts:", style="bold"))
        for j, v in enumerate(reversed(list(events)[-6:])):
            words = v.get("text") or describe(dict(v), names)
            parts.append(Text(("» " if j == 0 else "  ") + str(words),
                              style="bold" if j == 0 else "dim"))
    subtitle = {"online": "referee online", "offline": "referee OFFLINE"}.get(
        status or "", "referee status unknown")
    return Panel(Group(*parts), title=title, subtitle=subtitle)


# --------------------------------------------------------------------------- following the feed


async def follow(
    broker: BrokerAddress,
    view: TableView,
    on_change: Callable[[], None] = lambda: None,
    *,
    stop: asyncio.Event | None = None,
    backoff: tuple[float, float] = (0.1, 0.5),
) -> None:
    """Subscribe to the table's ``status``, ``state`` and ``events`` and keep ``view`` up to
    date, calling ``on_change`` after each change; reconnect with a capped backoff when the
    broker goes away; return when ``stop`` is set."""
    topics = Topics(view.table_id)
    stop = stop or asyncio.Event()
    delay = backoff[0]
    while not stop.is_set():
        try:
            async with aiomqtt.Client(**broker.client_kwargs(), keepalive=10,
                                      timeout=5.0) as client:
                delay = backoff[0]
                await client.subscribe([(topics.status, 1), (topics.state, 1),
                                        (topics.events, 1)])
                view.connected = True
                on_change()
                await _read(client, topics, view, on_change, stop)
                return
        except aiomqtt.MqttError as exc:
            log.info("display: broker connection: %s", exc)
        finally:
            if view.connected:
                view.connected = False
                on_change()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)
        delay = min(delay * 2, backoff[1])


async def _read(client: aiomqtt.Client, topics: Topics, view: TableView,
                on_change: Callable[[], None], stop: asyncio.Event) -> None:
    stopper = asyncio.create_task(stop.wait())
    try:
        messages = aiter(client.messages)
        while True:
            nxt = asyncio.ensure_future(anext(messages))
            done, _ = await asyncio.wait({nxt, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if nxt not in done:
                nxt.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await nxt
                return
            message = nxt.result()
            payload = message.payload if isinstance(message.payload, bytes) else str(
                message.payload or "").encode()
            if view.on_message(message.topic.value, payload):
                # Missed something: ask for the retained state again.
                view.rereads += 1
                await client.unsubscribe(topics.state)
                await client.subscribe(topics.state, qos=1)
            on_change()
    finally:
        stopper.cancel()


# --------------------------------------------------------------------------- the web display


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


# --------------------------------------------------------------------------- command line


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``referee display``."""
    p.add_argument("--broker", metavar="URL",
                   help="broker URL: mqtt://user:pass@host:1883, mqtts://…, ws://…, wss://… "
                   "(password also from $CARDTABLE_MQTT_PASSWORD)")
    p.add_argument("--table", required=True, metavar="ID", help="the table id")
    p.add_argument("--username", help="broker user (overrides the URL's)")
    p.add_argument("--password", help="broker password (overrides the URL's)")
    p.add_argument("--once", action="store_true",
                   help="print the table once, as soon as the state arrives, and exit")
    p.add_argument("--timeout", type=float, default=5.0,
                   help="with --once: seconds to wait for the state (default 5)")
    p.add_argument("--web", action="store_true",
                   help="serve the browser display (large type, for a TV or tablet)")
    p.add_argument("--port", type=int, default=8080, help="with --web: HTTP port (default 8080)")
    p.add_argument("--bind", default="127.0.0.1",
                   help="with --web: address to listen on (default 127.0.0.1; 0.0.0.0 for "
                   "screens on the network)")
    p.add_argument("--ws-url", metavar="URL",
                   help="with --web: the broker's websockets URL for the browser, e.g. "
                   "ws://display:pw@192.168.1.10:9001/mqtt (default: the --broker URL if it "
                   "is ws://, else the page's own host, port 9001, with --broker's user)")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``display`` subcommand to ``referee``'s subparsers (``func`` is :func:`run`)."""
    p = subparsers.add_parser(
        "display", help="show a table from the MQTT feed (terminal, or a web page with --web)",
        description="Follow a table over MQTT and show whose turn it is, the pile, counts, "
        "challenges, verdicts, players out, scores and the winner. --web serves a page for "
        "a browser that follows the broker over websockets.",
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def _web_address(args: argparse.Namespace) -> BrokerAddress | None:
    if args.ws_url:
        addr = resolve_broker(args.ws_url, args.username, args.password)
        if addr.transport != "websockets":
            raise ValueError("--ws-url must be a ws:// or wss:// URL")
        return addr
    if args.broker:
        addr = resolve_broker(args.broker, args.username, args.password)
        if addr.transport == "websockets":
            return addr
        if addr.username is not None:
            # The page's own host is filled in by the page (host "" below).
            return BrokerAddress("", 9001, "websockets", False, addr.username, addr.password,
                                 "/mqtt")
    return None


def run(args: argparse.Namespace) -> int:
    """Carry out ``referee display`` with parsed arguments; the exit status."""
    try:
        Topics(args.table)
        if args.web:
            return _run_web(args)
        if not args.broker:
            print("referee display: --broker is required (or --web)", file=sys.stderr)
            return 2
        broker = resolve_broker(args.broker, args.username, args.password)
    except ValueError as exc:
        print(f"referee display: {exc}", file=sys.stderr)
        return 2
    view = TableView(args.table)
    try:
        if args.once:
            return asyncio.run(_once(broker, view, args.timeout))
        asyncio.run(_live(broker, view))
    except KeyboardInterrupt:
        pass
    return 0


def _run_web(args: argparse.Namespace) -> int:
    ws = _web_address(args)
    config = web_config(args.table, ws)
    server = make_web_server(args.bind, args.port, config)
    host, port = server.server_address[:2]
    print(f"referee display: serving table {args.table} on http://{host}:{port}/ "
          "(Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


async def _once(broker: BrokerAddress, view: TableView, timeout: float) -> int:
    ready = asyncio.Event()
    stop = asyncio.Event()

    def changed() -> None:
        if view.state is not None:
            ready.set()

    task = asyncio.create_task(follow(broker, view, changed, stop=stop))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ready.wait(), timeout)
    await asyncio.sleep(0.05)  # let a retained status that follows the state come in
    stop.set()
    await task
    Console().print(view.render())
    return 0 if view.state is not None else 1


async def _live(broker: BrokerAddress, view: TableView) -> None:
    console = Console()
    with Live(view.render(), console=console, refresh_per_second=10,
              screen=console.is_terminal) as live:
        await follow(broker, view, lambda: live.update(view.render()))


def main(argv: Sequence[str] | None = None) -> int:
    """``referee display`` on its own: ``python -m referee.display --broker URL --table ID``."""
    parser = argparse.ArgumentParser(prog="referee display", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
