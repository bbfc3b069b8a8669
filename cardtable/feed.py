"""The MQTT table feed: the referee's picture of the table, published for the displays.

Topics under ``cardtable/<table_id>/`` (``docs/journal.md``, "MQTT feed"):

- ``status`` (retained): ``online``, or ``offline`` — the Last Will, and sent on a clean exit.
- ``state`` (retained, QoS 1): the engine's ``state()`` plus ``session`` (new at every start),
  ``seq`` (one more per change), ``table``, ``seats`` (seat names, when known) and ``recent``
  (the last few verdicts, each with its ``seq`` and ``text``), so a display that joins at any
  moment has the whole picture at once.
- ``events`` (QoS 1, not retained): each verdict as its ``referee replay --json`` object, plus
  ``session``, ``seq`` and ``text`` (the verdict in plain words).
- ``seat/<n>`` (retained, QoS 1): :func:`seat_view` — what seat ``n``'s own display shows.

:meth:`TableFeed.publish` never blocks the referee: it hands the change to a bounded queue that
:meth:`TableFeed.run` drains. While the broker is unreachable, ``run`` reconnects with a capped
backoff; events of that time are dropped (a display sees the ``seq`` gap and re-reads
``state``) and only the newest state is kept, which is published at once on return together with
``status`` and every ``seat/<n>`` (a broker without persistence has lost its retained messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import socket
import threading
import uuid
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

import aiomqtt

from cardtable.config import table_id_problem
from referee.describe import describe, seat_name
from referee.errors import shown

log = logging.getLogger("cardtable.feed")

#: Default port of each URL scheme ``parse_broker_url`` knows.
DEFAULT_PORTS = {"mqtt": 1883, "tcp": 1883, "mqtts": 8883, "ws": 9001, "wss": 9443}

#: Environment variable read for the broker password when the URL and the caller give none.
PASSWORD_ENV = "CARDTABLE_MQTT_PASSWORD"


# --------------------------------------------------------------------------- broker addresses


@dataclass(frozen=True)
class BrokerAddress:
    """Where and how to reach the broker, as read from a ``mqtt://`` / ``ws://`` URL."""

    host: str
    port: int
    transport: Literal["tcp", "websockets"] = "tcp"
    tls: bool = False
    username: str | None = None
    password: str | None = None
    path: str | None = None
    #: CA certificate file to check the broker's TLS certificate (None: the system's CAs).
    cafile: str | None = None

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`aiomqtt.Client`: host, port, credentials, transport."""
        kwargs: dict[str, Any] = {
            "hostname": self.host,
            "port": self.port,
            "username": self.username,
            "password": self.password,
            "transport": self.transport,
        }
        if self.transport == "websockets":
            kwargs["websocket_path"] = self.path or "/mqtt"
        else:
            # Small packets at once: without this, Nagle holds an event behind the state
            # published just before it until the broker's (delayed) ACK, up to 40 ms.
            kwargs["socket_options"] = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
        if self.tls:
            kwargs["tls_params"] = aiomqtt.TLSParameters(ca_certs=self.cafile)
        return kwargs

    def url(self, *, with_password: bool = False) -> str:
        """The address as a URL again; the password is left out unless asked for."""
        scheme = {("tcp", False): "mqtt", ("tcp", True): "mqtts",
                  ("websockets", False): "ws", ("websockets", True): "wss"}[(self.transport,
                                                                           self.tls)]
        auth = ""
        if self.username is not None:
            auth = self.username
            if with_password and self.password is not None:
                auth += ":" + self.password
            auth += "@"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{auth}{host}:{self.port}{self.path or ''}"


def parse_broker_url(url: str) -> BrokerAddress:
    """Read ``mqtt://user:pass@host:1883``, ``mqtts://…``, ``ws://host:9001/mqtt`` or ``wss://…``.

    A URL without a scheme is taken as ``mqtt://``. User and password are percent-decoded.
    ``?cafile=/path/ca.crt`` names the CA that signed a TLS broker's certificate.
    Raises :class:`ValueError` naming what is wrong.
    """
    text = url.strip()
    if "://" not in text:
        text = "mqtt://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ValueError(
            f"broker URL {url!r}: unknown scheme {scheme!r} (use mqtt, mqtts, ws or wss)")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"broker URL {url!r}: the port is not a number in 1..65535") from None
    host = parts.hostname
    if not host:
        raise ValueError(f"broker URL {url!r}: no host")
    websockets = scheme in ("ws", "wss")
    if parts.path not in ("", "/") and not websockets:
        raise ValueError(f"broker URL {url!r}: a path only makes sense with ws:// or wss://")
    query = parse_qs(parts.query)
    unknown = set(query) - {"cafile"}
    if unknown:
        raise ValueError(f"broker URL {url!r}: unknown parameter {sorted(unknown)[0]!r} "
                         "(known: cafile)")
    cafile = query["cafile"][-1] if "cafile" in query else None
    if cafile is not None and scheme not in ("mqtts", "wss"):
        raise ValueError(f"broker URL {url!r}: cafile needs mqtts:// or wss://")
    return BrokerAddress(
        cafile=cafile,
        host=host,
        port=port or DEFAULT_PORTS[scheme],
        transport="websockets" if websockets else "tcp",
        tls=scheme in ("mqtts", "wss"),
        username=unquote(parts.username) if parts.username is not None else None,
        password=unquote(parts.password) if parts.password is not None else None,
        path=(parts.path or None) if websockets else None,
    )


def resolve_broker(
    broker_url: str, username: str | None = None, password: str | None = None
) -> BrokerAddress:
    """The broker address with explicit credentials taking precedence over the URL's; the
    password falls back to the ``CARDTABLE_MQTT_PASSWORD`` environment variable."""
    addr = parse_broker_url(broker_url)
    user = username if username is not None else addr.username
    pw = password if password is not None else addr.password
    if pw is None and user is not None:
        pw = os.environ.get(PASSWORD_ENV)
    return dataclasses.replace(addr, username=user, password=pw)


# --------------------------------------------------------------------------- topics


@dataclass(frozen=True)
class Topics:
    """The feed topics of one table."""

    table_id: str

    def __post_init__(self) -> None:
        problem = table_id_problem(self.table_id)
        if problem is not None:
            raise ValueError(f"table id {shown(self.table_id)} {problem}")

    @property
    def base(self) -> str:
        """``cardtable/<id>``."""
        return f"cardtable/{self.table_id}"

    @property
    def status(self) -> str:
        """Retained ``online``/``offline``."""
        return f"{self.base}/status"

    @property
    def state(self) -> str:
        """Retained full state."""
        return f"{self.base}/state"

    @property
    def events(self) -> str:
        """Verdicts, QoS 1."""
        return f"{self.base}/events"

    def seat(self, n: int) -> str:
        """Retained view of seat ``n``."""
        return f"{self.base}/seat/{n}"

    @property
    def history(self) -> str:
        """Retained summary of the games played and the evening's standings."""
        return f"{self.base}/history"


# --------------------------------------------------------------------------- seat view


def seat_view(
    state: Mapping[str, Any], seat: int, names: Sequence[str] | None = None
) -> dict[str, Any]:
    """What seat ``seat``'s own display shows: its name and count, whether it is its turn,
    what it owes (cards to pay in a challenge, or an ace draw in Vändåtta), and whether it is out
    or has won. Pure: a function of the state only."""
    names = names if names is not None else state.get("seats")
    counts = state.get("counts") or []
    challenge = state.get("challenge") or None
    claim = state.get("claim") or None
    winners = state.get("winners") or []
    view: dict[str, Any] = {
        "seat": seat,
        "name": seat_name(names, seat),
        "count": counts[seat] if seat < len(counts) else None,
        "turn": state.get("turn") == seat,
        "owes": 0,
        "owes_to": None,
        "owed": 0,
        "must_draw": state.get("must_draw") == seat,
        "collecting": bool(claim and claim.get("seat") == seat),
        "out": seat in (state.get("out") or []),
        "winner": seat in winners,
        "over": bool(state.get("over")),
    }
    if challenge:
        if challenge.get("seat") == seat:
            view["owes"] = challenge.get("owes", 0)
            view["owes_to"] = challenge.get("by")
        if challenge.get("by") == seat:
            view["owed"] = challenge.get("owes", 0)
    totals = state.get("totals")
    if totals and seat < len(totals):
        view["total"] = totals[seat]
    if "session" in state:
        view["session"] = state["session"]
    return view


# --------------------------------------------------------------------------- the feed


def _verdict_json(v: Any) -> dict[str, Any]:
    if hasattr(v, "to_json"):
        return dict(v.to_json())
    return dict(v)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def number(state: dict[str, Any], verdicts: list[dict[str, Any]], *, session: str, seq: int,
           table_id: str, names: Sequence[str] | None,
           recent: deque[dict[str, Any]]) -> None:
    """Make one change a message of the feed, in place: each verdict gets ``session``, ``seq``
    and ``text`` (its words) and joins ``recent``; the state gets ``seats`` (``names`` unless it
    has them), ``session``, ``seq``, ``table`` and ``recent``. The MQTT feed and the referee's
    own web display (:mod:`cardtable.operator.local`) number the same way."""
    if names is not None:
        state.setdefault("seats", list(names))
    seat_names = state.get("seats") or []
    for v in verdicts:
        v["session"] = session
        v["seq"] = seq
        v["text"] = describe(v, seat_names)
        recent.append(v)
    state["session"] = session
    state["seq"] = seq
    state["table"] = table_id
    state["recent"] = list(recent)


class TableFeed:
    """Publishes one table's state and verdicts to an MQTT broker, never blocking the referee.

    Use as ``async with TableFeed(url, "t1") as feed: … feed.publish(engine.state(), verdicts)``
    (runs :meth:`run` as a task and exits cleanly), or run :meth:`run` yourself and call
    :meth:`stop`. :meth:`publish` and :meth:`stop` may also be called from another thread.
    """

    def __init__(
        self,
        broker_url: str,
        table_id: str,
        *,
        username: str | None = None,
        password: str | None = None,
        queue_size: int = 256,
        seats: Sequence[str] | None = None,
        session: str | None = None,
        client_id: str | None = None,
        backoff: tuple[float, float] = (0.1, 0.5),
        recent: int = 8,
        keepalive: int = 5,
    ) -> None:
        """``seats``: seat names (added to the state as ``seats`` unless it has them);
        ``backoff``: first and longest wait between reconnection attempts, in seconds — the
        longest bounds how late the displays are whole again after the broker returns;
        ``recent``: verdicts kept in the state; ``keepalive``: seconds, so that the broker sends
        the Will within 1.5 × keepalive when the referee's machine vanishes."""
        if queue_size < 1:
            raise ValueError("queue_size must be at least 1")
        self.broker = resolve_broker(broker_url, username, password)
        self.topics = Topics(table_id)
        self.table_id = table_id
        self.names = list(seats) if seats is not None else None
        self.session = session or uuid.uuid4().hex
        self.client_id = client_id or f"referee-{table_id}-{self.session[:8]}"
        self.queue_size = queue_size
        self.backoff_min, self.backoff_max = backoff
        self.keepalive = keepalive
        self.seq = 0
        #: Events dropped: published while offline, or pushed out of a full queue.
        self.dropped_events = 0
        #: Successful connections so far (1 after the first, 2 after a reconnection …).
        self.connections = 0
        self._events: deque[dict[str, Any]] = deque()
        self._recent: deque[dict[str, Any]] = deque(maxlen=recent)
        self._latest: dict[str, Any] | None = None  # newest state payload, as published
        self._state_dirty = False
        self._seats_sent: dict[int, bytes] = {}
        self._history: bytes | None = None  # newest history summary (publish_history)
        self._history_dirty = False
        self._connected = False
        self._lost = False
        self._stopping = False
        self._wake = asyncio.Event()
        self._stop_evt = asyncio.Event()
        self._connected_evt = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._task: asyncio.Task[None] | None = None

    # -- the referee side ---------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """True while the feed holds a connection to the broker."""
        return self._connected

    def publish(self, state: Mapping[str, Any], verdicts: Iterable[Any] = ()) -> None:
        """Hand one change to the feed: the new state and the verdicts it brought (dicts or
        :class:`~referee.model.Verdict`). Returns at once; never blocks, never raises for the
        broker's sake. The state is copied one level deep: pass a fresh snapshot."""
        state = dict(state)
        verdicts = [_verdict_json(v) for v in verdicts]
        if self._other_thread():
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._accept, state, verdicts)
        else:
            self._accept(state, verdicts)

    def publish_history(self, summary: Mapping[str, Any]) -> None:
        """Hand over the table's history summary (:func:`cardtable.history.summary`),
        published retained on ``history`` now and after every reconnection. Call it on the
        feed's loop (or before it runs); returns at once."""
        self._history = _dumps(summary)
        self._history_dirty = True
        self._wake.set()

    def listener(self, verdicts: list[Any], state: Mapping[str, Any]) -> None:
        """:meth:`publish` with the argument order of ``referee.table.Table.listeners``:
        ``table.listeners.append(feed.listener)``."""
        self.publish(state, verdicts)

    def stop(self) -> None:
        """Ask :meth:`run` to publish what is pending, then ``offline``, and return."""
        if self._other_thread():
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._request_stop)
        else:
            self._request_stop()

    def _other_thread(self) -> bool:
        return (self._loop is not None and self._loop_thread is not None
                and threading.get_ident() != self._loop_thread and not self._loop.is_closed())

    def _request_stop(self) -> None:
        self._stopping = True
        self._stop_evt.set()
        self._wake.set()

    def _accept(self, state: dict[str, Any], verdicts: list[dict[str, Any]]) -> None:
        self.seq += 1
        number(state, verdicts, session=self.session, seq=self.seq, table_id=self.table_id,
               names=self.names, recent=self._recent)
        for v in verdicts:
            if not self._connected:
                self.dropped_events += 1
                continue
            if len(self._events) >= self.queue_size:
                self._events.popleft()
                self.dropped_events += 1
            self._events.append(v)
        self._latest = state
        self._state_dirty = True
        self._wake.set()

    # -- the publishing side ------------------------------------------------------------

    async def wait_connected(self, timeout: float | None = None) -> bool:
        """Wait until the feed is connected (True) or ``timeout`` seconds pass (False)."""
        try:
            await asyncio.wait_for(self._connected_evt.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def __aenter__(self) -> TableFeed:
        self._task = asyncio.create_task(self.run(), name=f"feed-{self.table_id}")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 5.0)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

    async def run(self) -> None:
        """Connect, publish, and reconnect with backoff until :meth:`stop`; then publish
        ``offline`` (clean exit) and disconnect. Never raises for a broker problem."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        backoff = self.backoff_min
        warned = False
        topics = self.topics
        will = aiomqtt.Will(topics.status, b"offline", qos=1, retain=True)
        while not self._stopping:
            try:
                client = aiomqtt.Client(
                    **self.broker.client_kwargs(),
                    identifier=self.client_id,
                    will=will,
                    keepalive=self.keepalive,
                    timeout=5.0,
                )
                # The publisher sends up to queue_size messages at once by design.
                client.pending_calls_threshold = 4 * self.queue_size + 64
                async with client:
                    self.connections += 1
                    if warned:  # said where the warning was said: the broker is back
                        log.warning("feed %s: broker %s reachable again; publishing",
                                    self.table_id, self.broker.url())
                    elif self.connections > 1:
                        log.info("feed %s: reconnected to %s", self.table_id, self.broker.url())
                    warned = False
                    backoff = self.backoff_min
                    await self._serve(client)
                    await client.publish(topics.status, b"offline", qos=1, retain=True)
                    return
            except aiomqtt.MqttError as exc:
                # Once per outage (and once at a start without broker), not at every attempt.
                if self._connected or not warned:
                    log.warning("feed %s: broker %s unreachable (%s); retrying",
                                self.table_id, self.broker.url(), exc)
                warned = True
            finally:
                self._set_connected(False)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_evt.wait(), backoff)
            backoff = min(backoff * 2, self.backoff_max)

    def _set_connected(self, value: bool) -> None:
        self._connected = value
        if value:
            self._connected_evt.set()
        else:
            self._connected_evt.clear()
            # Events missed while offline are dropped: displays re-read the state on the gap.
            self.dropped_events += len(self._events)
            self._events.clear()

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Publish the whole picture, then every change, until stop or a lost connection."""
        self._lost = False
        self._seats_sent.clear()
        self._set_connected(True)
        await client.publish(self.topics.status, b"online", qos=1, retain=True)
        self._state_dirty = self._latest is not None
        self._history_dirty = self._history is not None
        watcher = asyncio.create_task(self._watch(client))
        try:
            while True:
                self._wake.clear()
                await self._flush(client)
                if self._stopping:
                    if self._state_dirty or self._events or self._history_dirty:
                        continue  # changes that came during the last flush go out first
                    return
                await self._wake.wait()
                if self._lost:
                    raise aiomqtt.MqttError("connection to the broker lost")
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch(self, client: aiomqtt.Client) -> None:
        """Wake the publisher as soon as the connection drops (the message iterator ends)."""
        with contextlib.suppress(aiomqtt.MqttError):
            async for _ in client.messages:
                pass
        self._lost = True
        self._wake.set()

    async def _flush(self, client: aiomqtt.Client) -> None:
        """Publish the newest state, the queued events and the seat views that changed."""
        sends = []
        if self._state_dirty and self._latest is not None:
            self._state_dirty = False
            latest = self._latest
            sends.append(client.publish(self.topics.state, _dumps(latest), qos=1, retain=True))
            names = latest.get("seats")
            for n in range(len(latest.get("counts") or [])):
                payload = _dumps(seat_view(latest, n, names))
                if self._seats_sent.get(n) != payload:
                    self._seats_sent[n] = payload
                    sends.append(client.publish(self.topics.seat(n), payload, qos=1,
                                                retain=True))
        if self._history_dirty and self._history is not None:
            self._history_dirty = False
            sends.append(client.publish(self.topics.history, self._history, qos=1, retain=True))
        while self._events:
            sends.append(client.publish(self.topics.events, _dumps(self._events.popleft()),
                                        qos=1))
        if sends:
            # Each publish hands its packet to the socket in this order before awaiting acks.
            await asyncio.gather(*sends)


class FeedThread:
    """Runs a :class:`TableFeed` on its own event loop in a daemon thread, for a referee loop
    that is not asyncio: ``with FeedThread(feed): feed.publish(...)``."""

    def __init__(self, feed: TableFeed) -> None:
        self.feed = feed
        self._thread = threading.Thread(target=self._main, name=f"feed-{feed.table_id}",
                                        daemon=True)
        self._started = threading.Event()

    def _main(self) -> None:
        async def go() -> None:
            self.feed._loop = asyncio.get_running_loop()
            self.feed._loop_thread = threading.get_ident()
            self._started.set()
            await self.feed.run()

        asyncio.run(go())

    def start(self) -> TableFeed:
        """Start the thread; returns the feed once its loop runs."""
        self._thread.start()
        self._started.wait(5.0)
        return self.feed

    def close(self, timeout: float = 5.0) -> None:
        """Stop the feed (``offline`` is published) and wait for the thread."""
        self.feed.stop()
        self._thread.join(timeout)

    def __enter__(self) -> TableFeed:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
