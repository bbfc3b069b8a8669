"""Following a table over MQTT: the subscription loop that keeps a
:class:`~referee.app.display.view.TableView` up to date through broker outages, and the
terminal display built on it (the table once, or live)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import aiomqtt
from rich.console import Console
from rich.live import Live

from referee.app.display.view import TableView
from referee.app.feed import BrokerAddress, Topics

log = logging.getLogger("referee.app.display")


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


async def show_once(broker: BrokerAddress, view: TableView, timeout: float) -> int:
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


async def show_live(broker: BrokerAddress, view: TableView) -> None:
    console = Console()
    with Live(view.render(), console=console, refresh_per_second=10,
              screen=console.is_terminal) as live:
        await follow(broker, view, lambda: live.update(view.render()))
