"""Many simulated tables publishing at once to one broker, for the hall's tests and its bench.

Each table plays a seeded game of its own (the three games in turn, 2 to 4 seats) through the
real :class:`~cardtable.feed.TableFeed`, one change every ``interval`` seconds (staggered so
that the tables do not all publish in the same instant), and tells ``on_publish`` the table, the
``seq`` of each change and the ``time.monotonic()`` at which it was handed to the feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from cardtable.feed import TableFeed
from cardtable.simulate import Simulation

GAMES = ("banka-bever", "vandatta", "beggar-my-neighbour")


def table_id(k: int) -> str:
    """The id of simulated table ``k``."""
    return f"t{k:02d}"


def game_changes(k: int, limit: int = 400) -> tuple[list[str], list[tuple[dict[str, Any],
                                                                          list[Any]]]]:
    """The seat names and the first ``limit`` changes (state, verdicts) of table ``k``'s game."""
    game = GAMES[k % len(GAMES)]
    players = 2 + k % 3
    options = {"points_game": True} if game == "vandatta" and k % 2 else None
    sim = Simulation(game, players, seed=k + 1, options=options)
    changes = []
    for step in sim.steps():
        changes.append((step.state, step.verdicts))
        if len(changes) >= limit:
            break
    return list(sim.header.seats), changes


async def run_tables(url: str, n: int, *, interval: float, duration: float,
                     on_publish: Callable[[str, int, float], None] = lambda t, s, m: None,
                     ready: asyncio.Event | None = None, limit: int = 400) -> dict[str, int]:
    """Run ``n`` tables for ``duration`` seconds (after all are connected); returns each
    table's last ``seq``. ``ready`` is set once every feed is connected."""
    prepared = [game_changes(k, limit) for k in range(n)]
    feeds = [TableFeed(url, table_id(k), seats=seats) for k, (seats, _) in enumerate(prepared)]
    tasks = [asyncio.create_task(f.run()) for f in feeds]
    try:
        for f in feeds:
            if not await f.wait_connected(10):
                raise RuntimeError(f"table {f.table_id} could not connect to {url}")
        if ready is not None:
            ready.set()
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def play(k: int) -> None:
            await asyncio.sleep(interval * k / n)  # staggered
            changes = prepared[k][1]
            i = 0
            while loop.time() - start < duration:
                state, verdicts = changes[i % len(changes)]
                feeds[k].publish(state, verdicts)
                on_publish(feeds[k].table_id, feeds[k].seq, time.monotonic())
                i += 1
                await asyncio.sleep(interval)

        await asyncio.gather(*(play(k) for k in range(n)))
        await asyncio.sleep(0.3)  # the last changes go out
        return {f.table_id: f.seq for f in feeds}
    finally:
        for f in feeds:
            f.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)
