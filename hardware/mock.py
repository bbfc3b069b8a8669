"""gpiozero's MockFactory as a first-class backend, with what timing tests need and it lacks.

gpiozero's :class:`~gpiozero.pins.mock.MockFactory` gives mock pins that any gpiozero device can
use, but stamps each change with ``time.monotonic()`` (float seconds) at the moment Python drives
the pin. A slap arbiter is judged on *when the edge happened*, which on the Pi is the kernel's
timestamp, not the moment the callback runs. So this module adds:

- a clock (:class:`VirtualClock`, or :class:`MonotonicClock` for real-time benches) that the
  factory's ``ticks()`` reads, in integer nanoseconds — the same unit and meaning as the ticks of
  :class:`hardware.pins.NsLGPIOFactory` on the Pi, so the pad code cannot tell them apart;
- pins that can be driven *at a given edge time* (:meth:`VirtualMockPin.drive_at`): the edge's
  ``t`` is what the pad sees, whatever the clock says when it is delivered; each pin keeps only
  its last ``state_history`` changes (gpiozero's ``states``, a list that grows for ever: a
  line chattering at 10 000 edges/s cost ~1 MB a second);
- a contact-bounce generator (:class:`BounceGenerator`, seeded: chatter of 0.1–5 ms);
- an edge scheduler (:class:`EdgeScheduler`) that delivers edges in a chosen order and with
  chosen delays on the virtual clock, so a test can make the callbacks of two seats arrive in the
  wrong order and check that the verdict still follows the edge times. Nothing ever sleeps.

Selected by ``pin_factory = "mock"`` in the table configuration or ``GPIOZERO_PIN_FACTORY=mock``
(see :func:`hardware.pins.make_pin_factory`).
"""

from __future__ import annotations

import heapq
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from gpiozero.pins.mock import MockFactory, MockPin, PinState

NS_PER_MS = 1_000_000
#: How many state changes a mock pin remembers (``VirtualMockPin.states``), by default.
STATE_HISTORY = 1000


class Clock(Protocol):
    """A monotonic clock in integer nanoseconds."""

    def now_ns(self) -> int:
        """The current time."""
        ...


class MonotonicClock:
    """The real ``CLOCK_MONOTONIC`` (``time.monotonic_ns``), the clock of lgpio edge stamps."""

    def now_ns(self) -> int:
        """The current time."""
        return time.monotonic_ns()


class VirtualClock:
    """A clock that moves only when told to; it never goes backwards."""

    def __init__(self, start_ns: int = 0) -> None:
        self._now = start_ns

    def now_ns(self) -> int:
        """The current virtual time."""
        return self._now

    def advance_to(self, t_ns: int) -> int:
        """Move to ``t_ns`` (a time in the past leaves the clock where it is); returns now."""
        if t_ns > self._now:
            self._now = t_ns
        return self._now

    def advance(self, dt_ns: int) -> int:
        """Move forward by ``dt_ns``; returns now."""
        if dt_ns < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += dt_ns
        return self._now


class VirtualMockPin(MockPin):  # type: ignore[misc]  # gpiozero is untyped: MockPin is Any
    """A mock pin whose changes are stamped in integer nanoseconds on the factory's clock.

    :meth:`drive_at` drives an input to a level *as of* a given edge time: the pin's
    ``when_changed`` callback receives that time as its ``ticks``, exactly as the lgpio pin
    passes the kernel's timestamp of the edge.

    ``states`` (gpiozero's record of changes, read by ``assert_states``) holds the last
    ``factory.state_history`` changes, oldest first: a bounded ring, not a list that grows with
    every edge.
    """

    # What this class relies on of MockPin's attributes (set by MockPin.__init__):
    factory: VirtualMockFactory
    _state: bool
    _last_change: int  # nanoseconds on the factory's clock (``clear_states`` below)
    states: deque[PinState]

    def __init__(self, factory: VirtualMockFactory, info: object) -> None:
        self._edge_t: int | None = None
        super().__init__(factory, info)

    def _now(self) -> int:
        return self.factory.clock.now_ns()

    def _change_state(self, value: bool) -> bool:
        if self._state != value:
            t = self._edge_t if self._edge_t is not None else self._now()
            self._state = value
            self.states.append(PinState((t - self._last_change) / 1e9, value))
            self._last_change = t
            return True
        return False

    def clear_states(self) -> None:
        """Forget the recorded state history (``states``); times restart at the clock's now."""
        self._last_change = self._now()
        self.states = deque([PinState(0.0, self._state)], maxlen=self.factory.state_history)

    def drive_at(self, level: bool, t_ns: int) -> bool:
        """Drive the input high (``True``) or low as an edge that happened at ``t_ns``.

        Returns whether the level changed (driving a pin to the level it has is no edge). The
        callback runs now; ``t_ns`` may be earlier than the clock (a delivery delay).
        """
        self._edge_t = t_ns
        try:
            before = self._state
            if level:
                self.drive_high()
            else:
                self.drive_low()
            return before != self._state
        finally:
            self._edge_t = None


class VirtualMockFactory(MockFactory):  # type: ignore[misc]  # gpiozero is untyped: Any
    """gpiozero's MockFactory on a clock in integer nanoseconds (virtual by default).

    ``ticks()`` is the clock's ``now_ns()``; ``ticks_diff`` gives seconds, as gpiozero expects.
    Each pin remembers its last ``state_history`` changes (at least 1).
    """

    def __init__(
        self,
        clock: Clock | None = None,
        revision: str | None = None,
        pin_class: type[MockPin] | None = None,
        *,
        state_history: int = STATE_HISTORY,
    ) -> None:
        if state_history < 1:
            raise ValueError("a mock pin remembers at least its current state")
        self.state_history = state_history
        super().__init__(revision=revision, pin_class=pin_class or VirtualMockPin)
        self.clock: Clock = clock if clock is not None else VirtualClock()
        self._queues: list[PendingEdges] = []

    def track(self, queue: PendingEdges) -> None:
        """Let :meth:`delivered_until` see the edges ``queue`` has not delivered yet."""
        self._queues.append(queue)

    def delivered_until(self, now_ns: int) -> int:
        """The time up to which every edge has reached its pin's callback (the mock's answer to
        "a read of the event queue found nothing older"): ``now_ns``, or just before the
        oldest edge a tracked queue (:class:`EdgeScheduler`, :class:`EdgeFeeder`) still holds.
        An edge driven with :meth:`VirtualMockPin.drive_at` is delivered as it is driven."""
        until = now_ns
        for queue in self._queues:
            oldest = queue.oldest_undelivered()
            if oldest is not None and oldest <= until:
                until = oldest - 1
        return until

    def ticks(self) -> int:
        """The clock's current time in nanoseconds."""
        return self.clock.now_ns()

    @staticmethod
    def ticks_diff(later: int, earlier: int) -> float:
        """Seconds from ``earlier`` to ``later``."""
        return (later - earlier) / 1e9


class PendingEdges(Protocol):
    """Something that holds edges not yet delivered (see :meth:`VirtualMockFactory.track`)."""

    def oldest_undelivered(self) -> int | None:
        """The earliest edge time still to be delivered (or being delivered), if any."""


@dataclass(frozen=True, order=True)
class Edge:
    """One level change of one line: ``t`` when it happened, ``level`` the new level."""

    t: int
    level: bool


@dataclass(frozen=True)
class BounceGenerator:
    """Seeded contact bounce: a press or release is a burst of edges, not one.

    A transition starts with a clean edge at its instant ``t`` and then chatters for a random
    time between ``min_chatter_ns`` and ``max_chatter_ns`` (default 0.1–5 ms, what mechanical
    buttons and arcade microswitches show), with ``min_toggles``..``max_toggles`` extra edges
    (an even number, so the line ends at the new level). Edge times strictly increase.
    """

    min_chatter_ns: int = 100_000
    max_chatter_ns: int = 5_000_000
    min_toggles: int = 0
    max_toggles: int = 12

    def transition(self, rng: random.Random, t: int, level: bool) -> list[Edge]:
        """The edges of one press (``level`` = the pressed line level) or release at ``t``."""
        edges = [Edge(t, level)]
        toggles = rng.randint(self.min_toggles, self.max_toggles)
        toggles -= toggles % 2
        if toggles:
            span = rng.randint(self.min_chatter_ns, self.max_chatter_ns)
            times = sorted(rng.sample(range(1, span + 1), toggles))
            times[-1] = span  # the chatter lasts its full span
            cur = level
            for dt in times:
                cur = not cur
                edges.append(Edge(t + dt, cur))
        return edges

    def press(
        self, rng: random.Random, t: int, hold_ns: int, *, active_level: bool = False
    ) -> list[Edge]:
        """A whole press: bouncy make at ``t``, bouncy break ``hold_ns`` later.

        ``active_level`` is the line level while pressed (``False`` for the usual pull-up wiring).
        ``hold_ns`` must exceed the chatter, or the two bursts would overlap.
        """
        if hold_ns <= self.max_chatter_ns:
            raise ValueError("hold_ns must be longer than the longest chatter")
        return self.transition(rng, t, active_level) + self.transition(
            rng, t + hold_ns, not active_level
        )


class EdgeScheduler:
    """Delivers edges to mock pins in a chosen order, on a virtual clock.

    Each edge has the time it happened (``edge.t``, what the pad will see) and the time it is
    delivered (``deliver_at``, when the clock stands when the pin's callback runs). Deliveries
    happen in ``deliver_at`` order, ties in scheduling order. By default the edges of one line
    are delivered in their own order (the kernel queues each line's events in order; only
    different lines race), which a later ``deliver_at`` can only delay, never reorder.
    """

    def __init__(self, clock: VirtualClock, *, keep_line_order: bool = True) -> None:
        self.clock = clock
        self.keep_line_order = keep_line_order
        self._queue: list[tuple[int, int, VirtualMockPin, Edge]] = []
        self._seq = 0
        self._line_last: dict[int, int] = {}
        self.delivered = 0

    def __len__(self) -> int:
        return len(self._queue)

    def schedule(self, pin: VirtualMockPin, edge: Edge, deliver_at: int | None = None) -> int:
        """Queue ``edge`` for ``pin``; returns the delivery time (never before the edge)."""
        at = max(edge.t, edge.t if deliver_at is None else deliver_at)
        if self.keep_line_order:
            at = max(at, self._line_last.get(id(pin), at))
            self._line_last[id(pin)] = at
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, pin, edge))
        return at

    def schedule_all(
        self, pin: VirtualMockPin, edges: Iterable[Edge], delay: Callable[[Edge], int] | int = 0
    ) -> None:
        """Queue several edges of one line; ``delay`` (ns, or a function of the edge) each."""
        for edge in edges:
            d = delay(edge) if callable(delay) else delay
            self.schedule(pin, edge, edge.t + d)

    def oldest_undelivered(self) -> int | None:
        """The earliest edge time still queued, if any (:meth:`VirtualMockFactory.track`)."""
        return min((edge.t for _, _, _, edge in self._queue), default=None)

    def next_at(self) -> int | None:
        """When the next delivery is due, if any."""
        return self._queue[0][0] if self._queue else None

    def step(self) -> int | None:
        """Deliver the next edge (moving the clock to its delivery time); returns that time."""
        if not self._queue:
            return None
        at, _, pin, edge = heapq.heappop(self._queue)
        self.clock.advance_to(at)
        pin.drive_at(edge.level, edge.t)
        self.delivered += 1
        return self.clock.now_ns()

    def run_until(self, t_ns: int, on_step: Callable[[int], object] | None = None) -> None:
        """Deliver everything due up to ``t_ns``, calling ``on_step(now)`` after each delivery;
        then move the clock to ``t_ns``."""
        while self._queue and self._queue[0][0] <= t_ns:
            now = self.step()
            if on_step is not None and now is not None:
                on_step(now)
        self.clock.advance_to(t_ns)

    def run(self, on_step: Callable[[int], object] | None = None) -> None:
        """Deliver everything queued."""
        while self._queue:
            now = self.step()
            if on_step is not None and now is not None:
                on_step(now)


class EdgeFeeder:
    """Delivers edges to mock pins from a thread of its own, each at its own delivery time on the
    real monotonic clock: lgpio's notification thread, with the callback delays a bench chooses.

    The feeder is tracked by its factory (:meth:`VirtualMockFactory.track`), so the pads'
    progress waits for an edge until its callback has returned. :meth:`close` stops the thread
    (edges still queued are dropped).
    """

    def __init__(self, factory: VirtualMockFactory) -> None:
        self._wake = threading.Condition()
        self._queue: list[tuple[int, int, VirtualMockPin, bool, int]] = []
        self._seq = 0
        self._current: int | None = None  # the edge time whose callback is running
        self._stop = False
        self.delivered = 0
        factory.track(self)
        self._thread = threading.Thread(target=self._run, name="edge-feeder", daemon=True)
        self._thread.start()

    def schedule(self, pin: VirtualMockPin, level: bool, t_ns: int, deliver_at_ns: int) -> None:
        """Drive ``pin`` to ``level`` as an edge stamped ``t_ns``, once the monotonic clock
        reaches ``deliver_at_ns`` (at once if it has)."""
        with self._wake:
            self._seq += 1
            heapq.heappush(self._queue, (max(deliver_at_ns, t_ns), self._seq, pin, level, t_ns))
            self._wake.notify()

    def oldest_undelivered(self) -> int | None:
        """The earliest edge time queued or being delivered, if any."""
        with self._wake:
            times = [t for *_, t in self._queue]
            if self._current is not None:
                times.append(self._current)
            return min(times, default=None)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stop:
                    if self._queue:
                        wait = (self._queue[0][0] - time.monotonic_ns()) / 1e9
                        if wait <= 0:
                            break
                        self._wake.wait(wait)
                    else:
                        self._wake.wait()
                if self._stop:
                    return
                _, _, pin, level, t = heapq.heappop(self._queue)
                self._current = t
            try:
                pin.drive_at(level, t)
            finally:
                with self._wake:
                    self._current = None
                    self.delivered += 1

    def close(self) -> None:
        """Stop delivering and end the thread."""
        with self._wake:
            self._stop = True
            self._wake.notify()
        self._thread.join(5)
