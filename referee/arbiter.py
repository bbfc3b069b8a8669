"""The arbiter: the one place that waits, so that inputs are judged in time order.

Edges from different lines (GPIO pins, the serial board, the console) reach Python in whatever
order the threads and buffers deliver them. The arbiter holds each input for a short *settle
window* and then releases everything older than the window in judging order: ``t``, then a slap
after the other acts of the same ``t`` (so a lay is judged before a slap of its instant), then
arrival order (``referee.model.judging_key``).

Replaying a journal uses the same arbiter with the window closed by :meth:`Arbiter.flush`, so the
order live and in replay is the same. The arbiter's *horizon* is the time up to which it has
released (and so up to which the engine may have let time pass). An input that arrives with a
``t`` at or before the horizon cannot be judged in its place any more: it is restamped 1 ns after
the horizon (``late`` counts these) and that restamped input is what the caller journals, so a
replay reproduces exactly what the table judged.

Sources and their progress (watermarks)
    A *source* is one line of inputs whose stamps do not come from the caller's clock at the
    moment of the push: the GPIO pads (kernel edge stamps), the serial board (board ticks mapped
    by the clock sync). A source registered with :meth:`Arbiter.add_source` reports its progress
    with :meth:`Arbiter.progress`: "every input of mine with ``t`` at or before this has been
    pushed". What a source must promise: after it reports progress ``p``, it never pushes an
    input with ``t <= p`` (if it does, that input is late: restamped and counted, as below).
    Sources that stamp their inputs with the caller's own clock at the push (the console, the
    virtual players) need no registration: the caller pushes them before it next releases, and
    a release never passes the caller's own ``now``.

    :meth:`Arbiter.release` lets go of every input with ``t`` at or before the *limit*
    ``max(now - settle, min(progress of every registered source))``: as soon as every source has
    progressed past an input, and never later than one settle window after its ``t``. A source
    that has never reported, or whose progress lags more than a window behind, simply does not
    count: every release falls back to the window while it lags (a board that stops talking
    costs the window, not the game). With no source registered, the limit is the settle window
    alone, as before.

The guarantee, precisely: if every input is pushed less than one settle window after its own
``t`` and no source breaks its promise, and :meth:`Arbiter.release` is called with the current
time, inputs come out in judging order whatever order they were pushed in
(``tests/referee/test_arbiter_order.py`` checks this with and without sources, and
``tests/hardware/test_slaps.py`` end to end with 100 000 slap pairs 1 µs apart). The release
policy only changes *when* an input is judged, never the order: an input that comes after the
horizon passed it is restamped and journaled so, and a replay (:meth:`Arbiter.flush`, no
clock, no sources) judges the journal to the same verdicts whatever policy judged the game live.
The arbiter orders; it does not judge: slaps with exactly the same ``t`` come out in arrival
order and the engine applies docs/rules.md's clockwise tie rule to them. Pushing and releasing cost
O(log n) per input in the number held (a heap); the limit costs O(sources). It is not
thread-safe: the caller that pushes from several threads holds a lock (``RefereeService``,
``hardware.slaps.SlapDriver``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import replace

from referee.model import Input, judging_entries, judging_key

#: Default settle window: 20 ms. USB/serial and GPIO callback delivery on a loaded Pi is well
#: under 10 ms; 20 ms is far below what a player perceives between a slap and its verdict. Every
#: verdict leaves one window after the last input it depends on (``bench/slaps.py`` measures it;
#: docs/wiring.md explains the choice). A table whose ``late`` count grows needs a larger window.
DEFAULT_SETTLE_NS = 20_000_000


class Arbiter:
    """Orders inputs by ``t`` across all sources before they reach the engine."""

    def __init__(self, settle_ns: int = DEFAULT_SETTLE_NS) -> None:
        if settle_ns < 0:
            raise ValueError("the settle window cannot be negative")
        self.settle_ns = settle_ns
        # Each held input after its judging key, (t, priority, arrival, input): one flat tuple,
        # whose comparisons stop at the unique arrival number (never at the input).
        self._held: list[tuple[int, int, int, Input]] = []
        self._arrivals = 0
        self.horizon: int | None = None
        self.late = 0
        self._progress: dict[str, int | None] = {}

    def __len__(self) -> int:
        return len(self._held)

    @property
    def sources(self) -> tuple[str, ...]:
        """The registered sources, in the order they were added."""
        return tuple(self._progress)

    def add_source(self, name: str) -> None:
        """Register a source whose progress the release waits for (at most one window)."""
        self._progress.setdefault(name, None)

    def progress(self, name: str, t: int) -> None:
        """Source ``name`` has pushed every input with ``t`` at or before this (see the module
        notes); a value below one already reported changes nothing. An unknown source is
        registered by its first report."""
        old = self._progress.get(name)
        if old is None or t > old:
            self._progress[name] = t

    def limit(self, now_ns: int) -> int:
        """The time up to which :meth:`release` at ``now_ns`` lets inputs go."""
        window = now_ns - self.settle_ns
        if not self._progress:
            return window
        reported = self._progress.values()
        if any(p is None for p in reported):
            return window
        return max(window, min(p for p in reported if p is not None))

    def stamp(self, inp: Input) -> Input:
        """The input as it would be judged if pushed now: restamped 1 ns after the horizon if
        it comes too late, else itself. Holds nothing."""
        if self.horizon is not None and inp.t <= self.horizon:
            return replace(inp, t=self.horizon + 1)
        return inp

    def push(self, inp: Input) -> Input:
        """Take one input; returns it as it will be judged (restamped if it came too late)."""
        self._arrivals += 1
        stamped = self.stamp(inp)
        if stamped is not inp:
            self.late += 1
        heapq.heappush(self._held, (*judging_key(stamped, self._arrivals), stamped))
        return stamped

    def push_all(self, inputs: Iterable[Input]) -> list[Input]:
        """:meth:`push` each of ``inputs`` in turn; returns them as they will be judged. Before
        the first release (a replay, a resume) no input can be late, so their keys are made in
        one pass and the held inputs sorted once (a sorted list is a heap; a journal mostly
        is in judging order already, which the sort takes in one run)."""
        if self.horizon is not None:
            return [self.push(inp) for inp in inputs]
        pushed = list(inputs)
        first = self._arrivals + 1
        self._arrivals += len(pushed)
        held = self._held
        held += judging_entries(pushed, first)
        held.sort()
        return pushed

    def release(self, now_ns: int) -> list[Input]:
        """Inputs whose ``t`` is at or before :meth:`limit` (every source has progressed past
        them, or one settle window has passed), in judging order."""
        out: list[Input] = []
        limit = self.limit(now_ns) if self._progress else now_ns - self.settle_ns
        held = self._held
        while held and held[0][0] <= limit:  # the t of the first in judging order
            out.append(heapq.heappop(held)[3])
        if self.horizon is None or limit > self.horizon:
            self.horizon = limit
        return out

    def flush(self) -> list[Input]:
        """Everything held, in judging order (end of a replay, or shutting down)."""
        held = self._held
        held.sort()  # what popping the heap to the end gives (no two keys are equal)
        out = [entry[3] for entry in held]
        held.clear()
        if out and (self.horizon is None or out[-1].t > self.horizon):
            self.horizon = out[-1].t
        return out

    def next_due(self) -> int | None:
        """The clock time at which the earliest held input may be released, if any."""
        return self._held[0][0] + self.settle_ns if self._held else None
