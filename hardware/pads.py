"""Slap and call pads on gpiozero: button edges in, timestamped :class:`referee.model.Input` out.

Here: the software debounce and the stuck and chattering buttons (:class:`ButtonLogic`), the
pads (:class:`SlapPad`, :class:`CallPad`, a table's :class:`SeatPads`), their notices
(:class:`PadEvent`) and how far they have delivered (:meth:`SeatPads.progress`). The pin
factories are in :mod:`hardware.pins`, the seat LEDs in :mod:`hardware.leds`.

Who slapped first is decided by the time each button edge *happened*, never by the order in
which Python ran the callbacks. How this module gets that time:

The edge time, on the Pi
    gpiozero's lgpio pin factory claims each line for alerts (``lgpio.gpio_claim_alert``). The
    kernel stamps every edge event when the interrupt fires, and lgpio passes that stamp through
    its notification pipe to the Python callback as ``tick`` — integer nanoseconds on
    ``CLOCK_MONOTONIC`` (the kernel GPIO character device stamps events on ``CLOCK_MONOTONIC``
    by default, on the v1 uAPI since Linux 5.7). gpiozero's :class:`~gpiozero.pins.lgpio.LGPIOPin`
    hands it on as ``when_changed(ticks, state)`` but divides it into float seconds first, and
    the public ``Button.when_pressed`` drops it entirely: by the time that runs, all that is left
    is "now", which is exactly the delivery order the arbiter must not trust. So:

    - :func:`hardware.pins.lgpio_factory` builds :class:`~hardware.pins.NsLGPIOFactory`, a
      subclass of gpiozero's ``LGPIOFactory`` whose pins pass lgpio's integer ``tick`` through
      unchanged and whose ``ticks()`` is ``time.monotonic_ns()`` — the same clock, the same
      unit, so the card events (stamped with ``time.monotonic_ns()`` by the firmware bridge's
      clock sync) and the button edges are comparable to the nanosecond, and gpiozero's own
      ``ticks_diff`` still works;
    - :class:`Pad` is an ``InputDevice`` that listens on the pin's documented ``when_changed``
      hook, which receives ``(ticks, state)``, instead of ``when_pressed``.

No library debounce on the timing path
    lgpio's debounce (``gpio_set_debounce_micros``) reports an edge only once the line has been
    stable for the debounce period, and stamps it with *the last edge plus the debounce period*:
    a bouncier button would look later than a clean one, and two close presses could swap. So
    the pins run with ``bounce = None`` and :class:`ButtonLogic` debounces in software: the
    *first* edge of a press is the slap's time, and for ``lockout_ns`` after any accepted press
    or release further edges are contact bounce and change nothing (default 30 ms: buttons
    chatter for 0.1–5 ms, a person cannot slap twice within ~100 ms).

Stuck buttons
    A button held closed longer than ``stuck_ns`` (default 5 s) is flagged: a
    :class:`PadEvent` ``button_stuck`` is reported, and the button is ignored until it is
    released (``button_released``). The service turns these into verdict-stream notices
    (:meth:`PadEvent.to_verdict`: ``{"t": …, "verdict": "button_stuck", "seat": 2,
    "button": "slap"}``). They are not inputs: they are not journalled and no engine sees them.

Chattering buttons
    A person slaps a few times a second at most, and a press with its bounce is a few dozen
    edges. A line that gives more than ``max_presses`` presses or more than ``max_edges`` raw
    edges within ``chatter_window_ns`` (defaults: 8 presses or 500 edges within 1 s) is not a
    person: a broken switch, a loose wire, noise on a long lead. It is flagged
    (``button_chatter``, with the reason) and every edge it gives is ignored: no input, so
    nothing of it reaches the journal or the engine, and the game goes on with the other seats.
    Once the line has been still for ``chatter_quiet_ns`` (default 1 s) the flag clears by
    itself (``button_settled``) and the next press counts again. The counts are kept in
    bounded rings, so a line chattering for hours costs no memory.

On a laptop the same code runs on :class:`hardware.mock.VirtualMockFactory` (``pin_factory =
"mock"`` or ``GPIOZERO_PIN_FACTORY=mock``), whose ticks are integer nanoseconds too.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from gpiozero import InputDevice
from gpiozero.pins import Factory

from hardware.config import (
    DEFAULT_BOUNCE_LOCKOUT_MS,
    DEFAULT_MAX_EDGES_PER_S,
    DEFAULT_MAX_PRESSES_PER_S,
    DEFAULT_STUCK_MS,
    HardwareConfig,
)
from hardware.pins import make_pin_factory, raise_gpio_failure
from referee.model import Act, Input, Verdict

log = logging.getLogger(__name__)

DEFAULT_LOCKOUT_NS = round(DEFAULT_BOUNCE_LOCKOUT_MS * 1_000_000)
DEFAULT_STUCK_NS = round(DEFAULT_STUCK_MS * 1_000_000)
#: A line is chattering when it gives more presses or more raw edges than these within
#: :data:`CHATTER_WINDOW_NS`; it counts again after :data:`CHATTER_QUIET_NS` without an edge.
DEFAULT_MAX_PRESSES = DEFAULT_MAX_PRESSES_PER_S
DEFAULT_MAX_EDGES = DEFAULT_MAX_EDGES_PER_S
CHATTER_WINDOW_NS = 1_000_000_000
CHATTER_QUIET_NS = 1_000_000_000


def ticks_to_ns(ticks: int | float) -> int:
    """A gpiozero ``ticks`` value in integer nanoseconds.

    The factories of this package (:class:`NsLGPIOFactory`, ``VirtualMockFactory``) tick in
    integer nanoseconds, passed through unchanged. Any other gpiozero factory ticks in float
    seconds of ``time.monotonic()``: converted, at whatever precision the float still holds.
    """
    if isinstance(ticks, int):
        return ticks
    return round(ticks * 1e9)


@runtime_checkable
class DeliveryTracker(Protocol):
    """A pin factory that knows which edges it has not delivered to their callbacks yet."""

    def delivered_until(self, now_ns: int) -> int:
        """The time up to which every edge stamped at or before it has been delivered."""


class Change(NamedTuple):
    """What one button did, as :class:`ButtonLogic` decided, at ``t``: ``press``, ``stuck``,
    ``released`` (the end of a stuck hold), ``chatter`` (flagged: too many presses or edges;
    ``reason`` says which) or ``settled`` (a chattering line has been still long enough)."""

    kind: str
    t: int
    reason: str = ""


class ButtonLogic:
    """Software debounce and stuck detection for one button line; pure, no clock of its own.

    Feed it every raw edge (:meth:`edge`) and, now and then, the time (:meth:`check`). It keeps
    the button's logical state:

    - released → pressed on an *active* edge outside the lockout: a ``press`` at that edge's
      own time (the first edge of the bounce burst), and the lockout starts;
    - pressed → released on an *inactive* edge outside the lockout; the lockout starts again;
    - every edge inside the lockout only updates the raw level (counted in ``bounces``). If the
      line has ended up at the other level when the lockout is over, that is a real transition
      that happened inside the lockout (a tap shorter than the lockout, or a re-press right after
      a release): it is taken at the time of the last raw edge, when the contact settled;
    - pressed for ``stuck_ns`` → ``stuck``: nothing from this button counts until it is
      released, which gives ``released``;
    - more than ``max_presses`` presses or more than ``max_edges`` raw edges within
      ``window_ns`` → ``chatter`` (instead of the press or with the edge that crossed the
      line): nothing from this button counts until no edge has come for ``quiet_ns``, which
      gives ``settled``; the button is then at whatever level the line rests (a line resting
      pressed is no press, and may become stuck).

    An edge stamped earlier than one already seen on this line is dropped (``stale``): one
    line's events come in order, so that would be a driver fault, not a press.
    """

    def __init__(
        self,
        lockout_ns: int = DEFAULT_LOCKOUT_NS,
        stuck_ns: int = DEFAULT_STUCK_NS,
        *,
        active: bool = False,
        now: int = 0,
        max_presses: int = DEFAULT_MAX_PRESSES,
        max_edges: int = DEFAULT_MAX_EDGES,
        window_ns: int = CHATTER_WINDOW_NS,
        quiet_ns: int = CHATTER_QUIET_NS,
    ) -> None:
        if lockout_ns <= 0:
            raise ValueError("the bounce lockout must be positive")
        if stuck_ns <= lockout_ns:
            raise ValueError("the stuck time must be longer than the bounce lockout")
        if max_presses < 1 or max_edges < 2 * max_presses:
            raise ValueError("a chatter limit needs max_presses >= 1 and max_edges >= 2 presses")
        if window_ns <= 0 or quiet_ns <= 0:
            raise ValueError("the chatter window and quiet time must be positive")
        self.lockout_ns = lockout_ns
        self.stuck_ns = stuck_ns
        self.max_presses = max_presses
        self.max_edges = max_edges
        self.window_ns = window_ns
        self.quiet_ns = quiet_ns
        # The times of the last max+1 presses and raw edges: bounded, whatever the line does.
        self._press_times: deque[int] = deque(maxlen=max_presses + 1)
        self._edge_times: deque[int] = deque(maxlen=max_edges + 1)
        self.chatter = False
        self.raw = active
        self.raw_t = now
        self.pressed = active
        # A button already closed at start-up counts as pressed since now, but is no slap.
        self.press_t: int | None = now if active else None
        self.lock_until = now
        self.last_t = now
        self.stuck = False
        self.presses = 0
        self.bounces = 0
        self.ignored = 0
        self.stale = 0
        #: How often the line was flagged chattering, and the edges ignored while it was.
        self.chatters = 0
        self.chattered = 0

    def edge(self, t: int, active: bool) -> list[Change]:
        """One raw edge of the line at ``t`` (``active``: the line is now at its pressed level)."""
        if t < self.last_t:
            self.stale += 1
            return []
        self.last_t = t
        out = self.check(t)
        self.raw, self.raw_t = active, t
        if self.chatter:
            self.chattered += 1
            return out
        edges = self._edge_times
        edges.append(t)
        if len(edges) == edges.maxlen and t - edges[0] < self.window_ns:
            span = (edges[-1] - edges[0]) / 1e6
            return out + self._flag_chatter(t, f"{len(edges)} edges within {span:.0f} ms")
        if t < self.lock_until:
            self.bounces += 1
            return out
        if self.stuck:
            if not active:
                out += self._transition(t, False)
            else:
                self.ignored += 1
            return out
        if active != self.pressed:
            out += self._transition(t, active)
        return out

    def check(self, now: int) -> list[Change]:
        """Let time pass to ``now``: settle a transition left inside a finished lockout, flag a
        button held for the stuck time, and clear the flag of a chattering line that has been
        still for the quiet time."""
        out: list[Change] = []
        if self.chatter:
            if now - self.raw_t < self.quiet_ns:
                return out
            out.append(self._settle(self.raw_t + self.quiet_ns))
        if now >= self.lock_until and self.raw != self.pressed:
            out += self._transition(self.raw_t, self.raw)
        if (
            self.pressed
            and not self.stuck
            and self.press_t is not None
            and now - self.press_t >= self.stuck_ns
        ):
            self.stuck = True
            out.append(Change("stuck", self.press_t + self.stuck_ns))
        return out

    def next_due(self) -> int | None:
        """The time at which :meth:`check` next has something to do, if any: the end of a
        lockout that a transition is waiting on, the moment a held button becomes stuck, or
        the moment a chattering line will have been still for the quiet time."""
        if self.chatter:
            return self.raw_t + self.quiet_ns
        due: list[int] = []
        if self.raw != self.pressed:
            due.append(self.lock_until)
        if self.pressed and not self.stuck and self.press_t is not None:
            due.append(self.press_t + self.stuck_ns)
        return min(due) if due else None

    def waiting_since(self) -> int | None:
        """The edge time of a press this line may still report (a press inside a lockout, or
        on a chattering line, reported once the lockout is over or the line settles), if any."""
        return self.raw_t if self.raw and not self.pressed and not self.stuck else None

    def _transition(self, t: int, active: bool) -> list[Change]:
        if active:
            presses = self._press_times
            presses.append(t)
            if len(presses) == presses.maxlen and t - presses[0] < self.window_ns:
                span = (presses[-1] - presses[0]) / 1e6
                return self._flag_chatter(t, f"{len(presses)} presses within {span:.0f} ms")
        self.pressed = active
        self.lock_until = t + self.lockout_ns
        if active:
            self.press_t = t
            self.presses += 1
            return [Change("press", t)]
        self.press_t = None
        if self.stuck:
            self.stuck = False
            return [Change("released", t)]
        return []

    def _flag_chatter(self, t: int, reason: str) -> list[Change]:
        """Flag the line chattering at ``t`` (a stuck flag gives way to it)."""
        out = [Change("released", t)] if self.stuck else []
        self.stuck = False
        self.chatter = True
        self.chatters += 1
        self._press_times.clear()
        self._edge_times.clear()
        out.append(Change("chatter", t, reason))
        return out

    def _settle(self, t: int) -> Change:
        """The line has been still since ``t - quiet_ns``: it counts again from ``t``, at the
        level it rests at (no press: a line resting pressed counts as held since ``t``)."""
        self.chatter = False
        self.pressed = self.raw
        self.press_t = t if self.raw else None
        self.lock_until = t
        return Change("settled", t)


#: The notice each :class:`Change` other than a press gives.
NOTICE_OF_CHANGE = {
    "stuck": "button_stuck", "released": "button_released",
    "chatter": "button_chatter", "settled": "button_settled",
}


@dataclass(frozen=True)
class PadEvent:
    """A notice about a button, not an input: ``button_stuck`` / ``button_released``, or
    ``button_chatter`` (with its ``reason``) / ``button_settled``.

    ``t`` is on the table clock (when the hold passed the stuck time, when the button was let
    go, when the line was found chattering, when it had been still long enough); ``button`` is
    ``"slap"`` or ``"call"``.
    """

    kind: str
    t: int
    seat: int
    button: str
    reason: str = ""

    def to_verdict(self) -> Verdict:
        """The verdict-stream notice: ``{"t", "verdict": kind, "seat", "button"}`` and the
        ``reason`` when there is one."""
        fields: dict[str, Any] = {"seat": self.seat, "button": self.button}
        if self.reason:
            fields["reason"] = self.reason
        return Verdict(self.t, self.kind, fields)


InputSink = Callable[[Input], object]
EventSink = Callable[[PadEvent], object]


class Pad(InputDevice):  # type: ignore[misc]  # gpiozero is untyped: InputDevice is Any
    """One button of one seat on a GPIO line, delivering timestamped inputs to ``on_input``.

    A press becomes ``Input(t, seat, act)`` (``act="slap"``, or ``act="call", call="lappen"``
    for a call button) with ``t`` the first edge's timestamp in nanoseconds on
    ``CLOCK_MONOTONIC``. Callbacks run on the pin factory's thread (lgpio's notification
    thread on the Pi): ``on_input`` must be thread-safe (``SlapDriver.submit`` is).
    Call :meth:`check` every so often, and at :meth:`next_due` (the drivers do), so that a stuck
    button is noticed, a press made inside the lockout is not delivered late and a chattering
    line that went still counts again.

    ``table_time`` maps an edge time (CLOCK_MONOTONIC ns) onto the table clock, for a service
    whose table clock is offset from CLOCK_MONOTONIC (a game resumed after a reboot).
    """

    button = "slap"

    def __init__(
        self,
        pin: int | str,
        *,
        seat: int,
        on_input: InputSink,
        on_event: EventSink | None = None,
        act: Act = "slap",
        call: str | None = None,
        lockout_ns: int = DEFAULT_LOCKOUT_NS,
        stuck_ns: int = DEFAULT_STUCK_NS,
        max_presses: int = DEFAULT_MAX_PRESSES,
        max_edges: int = DEFAULT_MAX_EDGES,
        pull_up: bool | None = True,
        active_state: bool | None = None,
        pin_factory: Factory | None = None,
        table_time: Callable[[int], int] | None = None,
    ) -> None:
        super().__init__(pin, pull_up=pull_up, active_state=active_state, pin_factory=pin_factory)
        self.seat = seat
        self.act = act
        self.call = call
        self.on_input = on_input
        self.on_event = on_event
        self.table_time = table_time
        self._lock = threading.Lock()
        try:
            self.pin.bounce = None  # never the library's debounce: see the module docstring
            self.pin.edges = "both"
            self.logic = ButtonLogic(
                lockout_ns, stuck_ns, active=self.is_active, now=self._now(),
                max_presses=max_presses, max_edges=max_edges,
            )
            self.pin.when_changed = self._pin_changed
        except BaseException:
            self.close()
            raise

    def _now(self) -> int:
        return ticks_to_ns(self.pin_factory.ticks())

    def _pin_changed(self, ticks: int | float, state: Any) -> None:
        if state not in (0, 1, True, False):  # lgpio watchdog reports (level 2): not an edge
            return
        t = ticks_to_ns(ticks)
        with self._lock:
            changes = self.logic.edge(t, bool(self._state_to_value(state)))
        self._deliver(changes)

    def check(self, now_ns: int | None = None) -> None:
        """Let time pass (default: the pin factory's now): reports a button stuck or settled."""
        now = self._now() if now_ns is None else now_ns
        with self._lock:
            changes = self.logic.check(now)
        self._deliver(changes)

    def next_due(self) -> int | None:
        """When :meth:`check` next has something to do (on the pin factory's clock), if ever."""
        with self._lock:
            return self.logic.next_due()

    def waiting_since(self) -> int | None:
        """The edge time (pin factory clock) of a press this pad may still hand in late, if
        any (:meth:`ButtonLogic.waiting_since`)."""
        with self._lock:
            return self.logic.waiting_since()

    def _deliver(self, changes: Iterable[Change]) -> None:
        for change in changes:
            t = change.t if self.table_time is None else self.table_time(change.t)
            if change.kind == "press":
                self.on_input(Input(t=t, seat=self.seat, act=self.act, call=self.call))
                continue
            kind = NOTICE_OF_CHANGE[change.kind]
            if kind == "button_chatter":
                log.warning("seat %d's %s button chatters (%s): ignored until it is still for "
                            "%g s", self.seat, self.button, change.reason,
                            self.logic.quiet_ns / 1e9)
            elif kind == "button_settled":
                log.warning("seat %d's %s button is still again: it counts again", self.seat,
                            self.button)
            if self.on_event is not None:
                self.on_event(PadEvent(kind, t, self.seat, self.button, change.reason))

    @property
    def stuck(self) -> bool:
        """True while the button is flagged stuck."""
        return self.logic.stuck

    @property
    def chatter(self) -> bool:
        """True while the button is flagged chattering."""
        return self.logic.chatter


class SlapPad(Pad):
    """A seat's slap button: each press is ``Input(t, seat, "slap")``."""

    button = "slap"

    def __init__(self, pin: int | str, **kwargs: Any) -> None:
        super().__init__(pin, act="slap", call=None, **kwargs)


class CallPad(Pad):
    """A seat's call button (Vändåtta "lappen"): each press is
    ``Input(t, seat, "call", call="lappen")``."""

    button = "call"

    def __init__(self, pin: int | str, *, call: str = "lappen", **kwargs: Any) -> None:
        super().__init__(pin, act="call", call=call, **kwargs)


class SeatPads:
    """Every seat's slap and call pads of a table, from its :class:`HardwareConfig`."""

    def __init__(
        self,
        config: HardwareConfig,
        on_input: InputSink,
        on_event: EventSink | None = None,
        *,
        pin_factory: Factory | None = None,
        table_time: Callable[[int], int] | None = None,
    ) -> None:
        self.config = config
        self.pin_factory = pin_factory if pin_factory is not None else make_pin_factory(config)
        self.table_time = table_time
        # Asked at every step of the service: the protocol check once, here.
        self._tracker = (self.pin_factory if isinstance(self.pin_factory, DeliveryTracker)
                         else None)
        self.slap: dict[int, SlapPad] = {}
        self.call: dict[int, CallPad] = {}
        common: dict[str, Any] = dict(
            on_input=on_input,
            on_event=on_event,
            lockout_ns=config.lockout_ns,
            stuck_ns=config.stuck_ns,
            max_presses=config.max_presses_per_s,
            max_edges=config.max_edges_per_s,
            pull_up=config.pull_up,
            active_state=config.active_state,
            pin_factory=self.pin_factory,
            table_time=table_time,
        )
        try:
            for seat in config.seats:
                self.slap[seat.seat] = SlapPad(seat.slap, seat=seat.seat, **common)
                if seat.call is not None:
                    self.call[seat.seat] = CallPad(seat.call, seat=seat.seat, **common)
        except BaseException as exc:
            self.close()
            raise_gpio_failure(exc)

    @property
    def pads(self) -> list[Pad]:
        """Every pad, slap pads first."""
        return [*self.slap.values(), *self.call.values()]

    def check(self, now_ns: int | None = None) -> None:
        """Let time pass on every pad (stuck detection); call it from the service loop."""
        for pad in self.pads:
            pad.check(now_ns)

    def progress(self, now_ns: int | None = None) -> int:
        """The time (on the table clock when the pads map onto one) up to which the pads have
        handed in every press: the GPIO source's progress for the arbiter.

        Edges are stamped by the kernel, so what matters is which of them have not reached a
        callback yet. The mock pin factory knows (its delivery queue,
        :meth:`hardware.mock.VirtualMockFactory.delivered_until`); on lgpio the promise is that
        an edge reaches its callback within ``hardware.delivery_bound_ms`` of its stamp. A
        press that a pad still holds back (inside its bounce lockout, on a chattering line)
        holds the progress just before it."""
        now = ticks_to_ns(self.pin_factory.ticks()) if now_ns is None else now_ns
        if self._tracker is not None:
            until = self._tracker.delivered_until(now)
        else:
            until = now - self.config.delivery_bound_ns
        for pad in self.pads:
            since = pad.waiting_since()
            if since is not None and since <= until:
                until = since - 1
        return until if self.table_time is None else self.table_time(until)

    def next_due(self) -> int | None:
        """The earliest :meth:`Pad.next_due` of all pads, if any."""
        due = [d for d in (p.next_due() for p in self.pads) if d is not None]
        return min(due) if due else None

    def stuck(self) -> list[tuple[int, str]]:
        """``(seat, button)`` of every button now flagged stuck."""
        return [(p.seat, p.button) for p in self.pads if p.stuck]

    def chattering(self) -> list[tuple[int, str]]:
        """``(seat, button)`` of every button now flagged chattering."""
        return [(p.seat, p.button) for p in self.pads if p.chatter]

    def close(self) -> None:
        """Release every pin."""
        for pad in self.pads:
            pad.close()

    def __enter__(self) -> SeatPads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
