"""Following a table over MQTT: the subscription loop that keeps a
:class:`~cardtable.display.view.TableView` up to date through broker outages, and the
terminal display built on it (the table once, or live).

The loop's two halves serve the hall too (:func:`~cardtable.display.hall.follow_hall`):
:func:`stay_subscribed` (connect, subscribe, reconnect with a capped backoff, keep a
:class:`Link` up to date) and :func:`read_messages` (each message, until stopped)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import aiomqtt
from aiomqtt.exceptions import MqttConnectError
from rich.console import Console
from rich.live import Live

from cardtable.display.view import TableView
from cardtable.feed import BrokerAddress, Topics

log = logging.getLogger("cardtable.display")


def connection_error(exc: aiomqtt.MqttError) -> str:
    """Why a connection failed or ended, in words: ``refused by the broker: not authorized``,
    ``connection refused``, ``connection lost``."""
    text = re.sub(r"^\[[^]]*\]\s*", "", str(exc)).strip() or "connection lost"
    if "during message iteration" in text or text.lower().startswith("disconnected"):
        text = "connection lost"
    if isinstance(exc, MqttConnectError):
        return "refused by the broker: " + text.lower()
    return text[:1].lower() + text[1:]


class Link(Protocol):
    """A display's connection to the broker, as :func:`stay_subscribed` keeps it: up or not,
    why not, how many times it came up."""

    connected: bool
    error: str | None
    connections: int

    def set_connection(self, connected: bool, error: str | None) -> None: ...


def link_reporter(link: Link, where: str, console: Console) -> Callable[[], None]:
    """What to call after each change when the display is not drawn on a terminal: Rich's
    live picture reaches such an output only at the end, so a broker that cannot be reached
    is said on stderr, once per change of the link (and again when it comes up)."""
    said: list[tuple[bool, str | None]] = []

    def report() -> None:
        if console.is_terminal:
            return
        now = (link.connected, None if link.connected else link.error)
        if (not said and not now[0] and now[1] is None) or (said and said[-1] == now):
            return
        if now[0]:
            if said:  # only after a line that said it could not
                print(f"referee display: connected to {where}", file=sys.stderr, flush=True)
        else:
            print(f"referee display: cannot reach {where} ({now[1] or 'no answer'}); "
                  "trying again", file=sys.stderr, flush=True)
        said.append(now)

    return report


async def stay_subscribed(
    broker: BrokerAddress,
    subscriptions: list[tuple[str, int]],
    link: Link,
    changed: Callable[[], None],
    read: Callable[[aiomqtt.Client], Awaitable[None]],
    *,
    stop: asyncio.Event,
    backoff: tuple[float, float],
    who: str,
) -> None:
    """Connect, subscribe to ``subscriptions`` and ``read`` the messages, keeping ``link`` up
    to date and calling ``changed`` after each change of it; reconnect with a capped backoff
    when the broker goes away (``who`` names the display in the log); return when ``read``
    returns or ``stop`` is set."""
    delay = backoff[0]
    while not stop.is_set():
        try:
            async with aiomqtt.Client(**broker.client_kwargs(), keepalive=10,
                                      timeout=5.0) as client:
                delay = backoff[0]
                await client.subscribe(subscriptions)
                link.connections += 1
                link.set_connection(True, None)
                changed()
                await read(client)
                return
        except aiomqtt.MqttError as exc:
            log.info("%s: broker connection: %s", who, exc)
            error = connection_error(exc)
            if link.connected or error != link.error:
                link.set_connection(False, error)
                changed()
        finally:
            if link.connected:  # stopped, or an error that is not the broker's
                link.set_connection(False, link.error)
                changed()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)
        delay = min(delay * 2, backoff[1])


async def read_messages(
    client: aiomqtt.Client,
    take: Callable[[str, bytes], Awaitable[None]],
    stop: asyncio.Event,
    *,
    beside: asyncio.Task[None] | None = None,
) -> None:
    """Hand each message of ``client`` to ``take`` (its topic, its payload as bytes) until
    ``stop`` is set; ``beside``, a task that runs alongside and ends only by raising, ends
    the reading with its error."""
    stopper = asyncio.create_task(stop.wait())
    waited: set[asyncio.Future[Any]] = {stopper} if beside is None else {stopper, beside}
    try:
        messages = aiter(client.messages)
        while True:
            nxt = asyncio.ensure_future(anext(messages))
            done, _ = await asyncio.wait(waited | {nxt}, return_when=asyncio.FIRST_COMPLETED)
            if beside is not None and beside in done:
                nxt.cancel()
                beside.result()  # the connection's error
            if nxt not in done:
                nxt.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await nxt
                return
            message = nxt.result()
            payload = message.payload if isinstance(message.payload, bytes) else str(
                message.payload or "").encode()
            await take(message.topic.value, payload)
    finally:
        stopper.cancel()


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
    await stay_subscribed(
        broker, [(topics.status, 1), (topics.state, 1), (topics.events, 1),
                 (topics.history, 1)],
        view, on_change, lambda client: _read(client, topics, view, on_change, stop),
        stop=stop, backoff=backoff, who="display")


async def _read(client: aiomqtt.Client, topics: Topics, view: TableView,
                on_change: Callable[[], None], stop: asyncio.Event) -> None:
    async def take(topic: str, payload: bytes) -> None:
        if view.on_message(topic, payload):
            # Missed something: ask for the retained state again.
            view.rereads += 1
            await client.unsubscribe(topics.state)
            await client.subscribe(topics.state, qos=1)
        on_change()

    await read_messages(client, take, stop)


async def show_once(broker: BrokerAddress, view: TableView, timeout: float) -> int:
    """Print the table once, as soon as its state (or an unreadable one) has come, and return
    the exit status: 0 with a state; 1, with a message on stderr saying why, without one (an
    unreadable state, no state of this table on the broker, no broker)."""
    ready = asyncio.Event()
    stop = asyncio.Event()

    def changed() -> None:
        if view.state is not None or view.problem is not None:
            ready.set()

    task = asyncio.create_task(follow(broker, view, changed, stop=stop))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ready.wait(), timeout)
    if ready.is_set():
        await asyncio.sleep(0.05)  # let a retained status that follows the state come in
    # The picture of the moment the state came, drawn while still connected.
    picture = view.render()
    stop.set()
    await task
    if view.state is not None or view.problem is not None:
        Console().print(picture)
    if view.state is not None:
        return 0
    where = f"the broker at {broker.url()}"
    if view.problem is not None:
        why = f"the state of table {view.table_id!r} on {where} is unreadable ({view.problem})"
    elif view.connections == 0:
        why = f"cannot reach {where} ({view.error or 'no answer'}) within {timeout:g} s"
    elif view.status is not None:
        why = (f"table {view.table_id!r} on {where} is {view.status} but has no state "
               f"(none came within {timeout:g} s)")
    else:
        why = (f"no table {view.table_id!r} on {where}: nothing came for it within "
               f"{timeout:g} s (is its referee running with this --table and --broker?)")
    print(f"referee display: {why}", file=sys.stderr)
    return 1


async def show_live(broker: BrokerAddress, view: TableView) -> None:
    console = Console()
    report = link_reporter(view, f"the broker at {broker.url()}", console)
    with Live(view.render(), console=console, refresh_per_second=10,
              screen=console.is_terminal) as live:
        def changed() -> None:
            live.update(view.render())
            report()

        await follow(broker, view, changed)
