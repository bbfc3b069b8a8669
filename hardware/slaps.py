"""Slap arbitration glue: pad edges from every seat → a :class:`referee.table.Table` → verdicts.

The pads (:mod:`hardware.pads`) call :meth:`SlapDriver.submit` from whatever thread delivers
GPIO callbacks, with inputs stamped at the edge. Those inputs reach Python in delivery order,
which is not edge order: lgpio's notification thread, the serial card reader and the scheduler
each add their own delay. :class:`SlapDriver` is a lock around a table, and the table runs the
one loop every referee runs (the service, ``referee replay``): it journals each input, its
arbiter holds it for the settle window and releases inputs in time order, and its engine judges
them one by one, the slaps of one instant together by the tie rule of docs/rules.md (the engine
holds such slaps until time has moved past their instant, which ``table.release`` does with
``engine.advance``). When input ends, :meth:`SlapDriver.flush` ends it as a replay does
(``table.flush(finish=True)``: a pending collect grace runs out).

The pads are a *source* of the arbiter (``referee.arbiter``): at each :meth:`SlapDriver.poll`
they say how far they have delivered (:meth:`hardware.pads.SeatPads.progress`), and a slap is
judged as soon as the pads are past it, typically well under a millisecond after its edge's
callback (``bench/slaps.py``), and at the latest one settle window (default 20 ms,
docs/wiring.md) after its edge. ``progress=False`` judges by the window alone.

Two ways to use it:

- tests, the bench and a standalone table: :class:`SlapDriver` around a table
  (``SlapDriver(Table(JournalHeader("banka-bever", seats, deal=…), settle_ns=…), leds=…)``), fed
  by :class:`hardware.pads.SeatPads` (``on_input=driver.submit``, ``on_event=driver.notice``),
  with :meth:`SlapDriver.poll` called by a loop (:meth:`SlapDriver.serve` is one, on a thread);
- the referee service (``cardtable.service.RefereeService``), which holds its own table and
  runs its own loop: :class:`GpioEdge` is its edge (pads → ``service.submit``, stuck buttons →
  ``service.notice``), and :class:`hardware.leds.SeatLeds` is one of its outputs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from gpiozero.pins import Factory

from hardware.config import HardwareConfig
from hardware.leds import SeatLeds
from hardware.pads import PadEvent, SeatPads, ticks_to_ns
from referee.model import Input, Verdict
from referee.table import Table

VerdictSink = Callable[[list[Verdict], dict[str, Any]], object]

#: The arbiter's name for the GPIO pads as a source (``referee.arbiter``).
GPIO_SOURCE = "gpio"
#: While inputs are held, how often the loop asks the pads how far they have delivered.
PROGRESS_POLL_NS = 200_000


class SlapDriver:
    """A :class:`referee.table.Table` behind a lock: inputs from any thread in, verdicts out in
    judging order.

    The table does all the judging, as it does in the service and in a replay: :meth:`submit`
    is ``table.push`` (journal, then arbiter), :meth:`poll` is ``table.release`` and
    :meth:`flush` is ``table.flush(finish=True)``, the end of input. The driver makes the table
    safe to feed from the pads' threads, adds the pad notices and wakes :meth:`serve` when
    something arrives.

    ``on_verdicts(verdicts, state)`` (optional) and ``leds`` (optional :class:`SeatLeds`) are
    told about every non-empty batch that :meth:`poll` or :meth:`flush` returns, with
    ``table.state()``, outside the driver's lock, so they may submit inputs (call :meth:`poll`
    from one thread). The table's own ``listeners`` run inside the lock and must not submit.
    Pad notices (``button_stuck`` / ``button_released``, ``button_chatter`` /
    ``button_settled``) come out of the next :meth:`poll` as
    verdicts of their own kind, ahead of that poll's engine verdicts; they never reach the
    table (not judged, not journaled).
    """

    def __init__(
        self,
        table: Table,
        *,
        leds: SeatLeds | None = None,
        on_verdicts: VerdictSink | None = None,
        pads: SeatPads | None = None,
        progress: bool = True,
    ) -> None:
        self.table = table
        self.progress = progress
        self.leds = leds
        self.on_verdicts = on_verdicts
        self.pads = pads
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._notices: list[Verdict] = []

    def new_game(self, table: Table) -> Table:
        """Judge from now on with ``table`` (a new game); returns the table it replaces. An
        input that one still holds stays with it (``old.flush(finish=True)`` ends that game);
        pad notices not yet polled go out with the next poll."""
        with self._wake:
            old, self.table = self.table, table
            self._wake.notify()
        return old

    @property
    def settle_ns(self) -> int:
        """The table's settle window."""
        return self.table.arbiter.settle_ns

    @property
    def judged(self) -> list[Input]:
        """Every input the table took, as it is (or will be) judged — a late one restamped — in
        the order it arrived: what the table's journal holds, and what a replay of this game
        needs (a copy of ``table.inputs``)."""
        with self._lock:
            return list(self.table.inputs)

    def submit(self, inp: Input) -> Input:
        """Hand in an input (from any thread); returns it as it will be judged."""
        with self._wake:
            judged = self.table.push(inp)
            self._wake.notify()
        return judged

    def notice(self, event: PadEvent) -> None:
        """Hand in a pad notice (from any thread); it goes out with the next poll."""
        with self._wake:
            self._notices.append(event.to_verdict())
            self._wake.notify()

    def poll(self, now_ns: int) -> list[Verdict]:
        """Judge everything the settle window lets go at ``now_ns`` and let the game's time
        pass to ``now_ns - settle`` (``table.release``); returns the verdicts (notices first)."""
        gpio = None
        if self.pads is not None:
            self.pads.check(now_ns)
            if self.progress:
                gpio = self.pads.progress(now_ns)
        with self._lock:
            out, self._notices = self._notices, []
            if gpio is not None:
                self.table.progress(GPIO_SOURCE, gpio)
            out += self.table.release(now_ns)
            state = self.table.state() if out and self._listening() else None
        if state is not None:
            self._tell(out, state)
        return out

    def flush(self) -> list[Verdict]:
        """The end of input (shutting down, or the end of a test): judge everything held,
        whatever the time, and let pending graces run out (``table.flush(finish=True)``)."""
        with self._lock:
            out, self._notices = self._notices, []
            out += self.table.flush(finish=True)
            state = self.table.state() if out and self._listening() else None
        if state is not None:
            self._tell(out, state)
        return out

    def next_due(self) -> int | None:
        """When :meth:`poll` next has something to release, if anything is held."""
        with self._lock:
            return self.table.arbiter.next_due()

    def _pads_due(self) -> int | None:
        return None if self.pads is None else self.pads.next_due()

    def _listening(self) -> bool:
        return self.leds is not None or self.on_verdicts is not None

    def _tell(self, out: list[Verdict], state: dict[str, Any]) -> None:
        """Outside the lock: a listener may submit inputs."""
        if self.leds is not None:
            self.leds.show(out, state)
        if self.on_verdicts is not None:
            self.on_verdicts(out, state)

    def serve(
        self,
        stop: threading.Event,
        *,
        clock: Callable[[], int] = time.monotonic_ns,
        idle_s: float = 0.05,
    ) -> None:
        """Poll until ``stop`` is set: wake at the next release time or when an input arrives,
        and at least every ``idle_s`` (stuck-button checks). Run it on its own thread."""
        while not stop.is_set():
            self.poll(clock())
            with self._wake:
                if self._notices:
                    continue
                due = [d for d in (self.table.arbiter.next_due(), self._pads_due())
                       if d is not None]
                if self.progress and self.pads is not None and len(self.table.arbiter):
                    due.append(clock() + PROGRESS_POLL_NS)  # the pads may be past them soon
                wait = min([idle_s, *(max(0, d - clock()) / 1e9 for d in due)])
                if wait > 0:
                    self._wake.wait(wait)


class GpioEdge:
    """The GPIO pads as an edge of ``cardtable.service.RefereeService``.

    ``start(service)`` opens the pads with ``on_input=service.submit`` (inputs stamped on the
    table clock through ``service.clock.from_monotonic``), and reports stuck/released and
    chattering/settled buttons with ``service.notice("button_stuck", seat=…, button=…)`` (a
    chatter with its ``reason``) on the service's loop. A chattering button hands the service
    nothing until it has settled, so none of its edges is journaled. It checks the pads every
    ``check_s`` seconds (stuck buttons, settled lines).
    """

    #: The arbiter's name for this source (``referee.arbiter``).
    source = GPIO_SOURCE

    def __init__(
        self,
        config: HardwareConfig,
        *,
        pin_factory: Factory | None = None,
        check_s: float = 0.1,
    ) -> None:
        self.config = config
        self.pin_factory = pin_factory
        self.check_s = check_s
        self.pads: SeatPads | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, service: Any) -> None:
        """Open the pads and begin delivering inputs to ``service``."""
        loop = asyncio.get_running_loop()

        def on_event(ev: PadEvent) -> None:
            fields: dict[str, Any] = {"seat": ev.seat, "button": ev.button}
            if ev.reason:
                fields["reason"] = ev.reason
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(lambda: service.notice(ev.kind, **fields))

        self.pads = SeatPads(
            self.config,
            service.submit,
            on_event,
            pin_factory=self.pin_factory,
            table_time=service.clock.from_monotonic,
        )
        self._task = asyncio.create_task(self._check())

    async def _check(self) -> None:
        while self.pads is not None:
            self.pads.check()
            wait = self.check_s
            due = self.pads.next_due()
            if due is not None:
                now = ticks_to_ns(self.pads.pin_factory.ticks())
                wait = min(wait, max(0.0, (due - now) / 1e9))
            await asyncio.sleep(wait)

    def progress(self) -> int | None:
        """The table time up to which the pads have handed in every press
        (:meth:`hardware.pads.SeatPads.progress`), None before they are open."""
        return None if self.pads is None else self.pads.progress()

    async def stop(self) -> None:
        """Stop checking and release the pins."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.pads is not None:
            self.pads.close()
            self.pads = None
