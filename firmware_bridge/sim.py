"""The host link and a board wired together in virtual time, for tests and benches.

:class:`SimulatedLink` runs the very same :class:`~firmware_bridge.link.LinkCore` (host) and
:class:`~firmware_bridge.emulator.BoardCore` (board) as the real link and the emulator, with an
in-memory line in between (:class:`~firmware_bridge.emulator.FaultyLine`: faults, and a
latency per write) and a clock that jumps from one timer to the next. An hour of table time
runs in seconds, and the same seed gives the same run.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from typing import Any

from firmware_bridge.emulator import BoardClock, BoardCore, Faults, FaultyLine
from firmware_bridge.events import LinkEvent
from firmware_bridge.link import LinkCore


class SimulatedLink:
    """Host and board on a virtual line; ``t`` is the host (table) clock in ns."""

    def __init__(
        self,
        *,
        faults: Faults | None = None,
        drift_ppm: float = 0.0,
        tick_start: int = 0,
        latency_ns: Callable[[random.Random], int] | None = None,
        seed: int = 0,
        start_ns: int = 10**12,
        link_options: dict[str, Any] | None = None,
        board_options: dict[str, Any] | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.t = start_ns
        self.board_clock = BoardClock(drift_ppm, tick_start, start_ns)
        opts = {"boot_id": self.rng.randrange(1 << 32), **(board_options or {})}
        self.board = BoardCore(self.board_clock, self.now, **opts)
        lopts = {"boot_id": self.rng.randrange(1 << 32), **(link_options or {})}
        self.link = LinkCore(**lopts)
        lat = (lambda: latency_ns(self.rng)) if latency_ns else None
        frng = random.Random(self.rng.randrange(1 << 30))
        self.to_host = FaultyLine(faults, frng, lat)
        self.to_board = FaultyLine(faults, frng, lat)
        self.events: list[LinkEvent] = []
        self._actions: list[tuple[int, int, Callable[[], None]]] = []
        self._n = 0
        self.connected = True
        self.board.boot()
        self.link.start(self.t)

    def now(self) -> int:
        """The virtual host clock."""
        return self.t

    def at(self, t_ns: int, action: Callable[[], None]) -> None:
        """Run ``action()`` at host time ``t_ns``."""
        self._n += 1
        heapq.heappush(self._actions, (t_ns, self._n, action))

    def _step(self) -> None:
        t = self.t
        while self._actions and self._actions[0][0] <= t:
            heapq.heappop(self._actions)[2]()
        data = self.to_board.due(t)
        if data:
            self.board.receive(data)
        data = self.to_host.due(t)
        if data:
            self.link.receive(data, t)
        self.board.poll()
        self.link.poll(t)
        out = self.link.take_output()
        if out and self.connected:
            self.to_board.push(out, t)
        out = self.board.take_output()
        if out and self.connected:
            self.to_host.push(out, t)
        self.events.extend(self.link.take_events())

    def _next_time(self, limit: int) -> int:
        times = [limit, self.board.next_deadline(), self.link.next_deadline(self.t)]
        for line in (self.to_board, self.to_host):
            nr = line.next_release()
            if nr is not None:
                times.append(nr)
        if self._actions:
            times.append(self._actions[0][0])
        return max(min(times), self.t + 1000)

    def run_until(self, t_ns: int, stop: Callable[[], bool] | None = None) -> bool:
        """Advance to ``t_ns`` (or until ``stop()`` is true: returns ``True`` then)."""
        while self.t < t_ns:
            self._step()
            if stop is not None and stop():
                return True
            self.t = min(self._next_time(t_ns), t_ns)
        self._step()
        return stop() if stop is not None else False

    def run_for(self, seconds: float, stop: Callable[[], bool] | None = None) -> bool:
        """Advance ``seconds`` of virtual time (or until ``stop()``)."""
        return self.run_until(self.t + int(seconds * 1e9), stop)
