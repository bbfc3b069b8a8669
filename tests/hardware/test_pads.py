"""Slap/call pads: edge time in, one input per press out, whatever the contact bounce does."""

from __future__ import annotations

import random

import pytest

from hardware.config import loads_config
from hardware.mock import BounceGenerator, Edge, EdgeScheduler, VirtualClock, VirtualMockFactory
from hardware.pads import (
    ButtonLogic,
    CallPad,
    Change,
    PadEvent,
    SeatPads,
    SlapPad,
    ticks_to_ns,
)
from referee.model import Input

MS = 1_000_000
US = 1_000
LOCK = 30 * MS
STUCK = 5_000 * MS


# -- the debounce and stuck logic, edge by edge -----------------------------------------------

def test_press_is_taken_at_its_first_edge_and_bounce_is_ignored() -> None:
    b = ButtonLogic(LOCK, STUCK)
    assert b.edge(100 * MS, True) == [Change("press", 100 * MS)]
    assert b.edge(100 * MS + 300_000, False) == []
    assert b.edge(101 * MS, True) == []
    assert b.bounces == 2 and b.presses == 1


def test_release_bounce_makes_no_second_press() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(0, True)
    assert b.edge(80 * MS, False) == []  # released: the lockout starts again
    assert b.edge(80 * MS + 200_000, True) == []
    assert b.edge(81 * MS, False) == []
    assert b.edge(84 * MS, True) == []
    assert b.edge(84 * MS + 1, False) == []
    assert b.presses == 1 and not b.pressed
    assert b.edge(200 * MS, True) == [Change("press", 200 * MS)]


def test_tap_shorter_than_the_lockout_is_released_and_the_next_press_counts() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(0, True)
    b.edge(12 * MS, False)  # released inside the lockout: only noted
    assert b.pressed
    assert b.next_due() == LOCK
    assert b.check(LOCK) == []  # the lockout is over and the line is still released
    assert not b.pressed and b.lock_until == 12 * MS + LOCK
    assert b.edge(60 * MS, True) == [Change("press", 60 * MS)]


def test_press_inside_the_release_lockout_is_settled_at_its_last_edge() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(0, True)
    b.edge(50 * MS, False)  # release accepted at 50 ms
    b.edge(60 * MS, True)  # a new press 10 ms later: inside the lockout
    b.edge(61 * MS, False)
    b.edge(62 * MS, True)
    assert b.next_due() == 80 * MS
    assert b.check(79 * MS) == []
    assert b.check(80 * MS) == [Change("press", 62 * MS)]


def test_a_stale_edge_is_dropped() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(100 * MS, True)
    assert b.edge(99 * MS, False) == [] and b.stale == 1


def test_stuck_button_is_flagged_ignored_and_released() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(1_000 * MS, True)
    assert b.next_due() == 1_000 * MS + STUCK
    assert b.check(5_999 * MS) == []
    assert b.check(6_000 * MS) == [Change("stuck", 6_000 * MS)]
    assert b.check(7_000 * MS) == []  # flagged once
    assert b.edge(7_000 * MS, True) == [] and b.ignored == 1
    assert b.edge(8_000 * MS, False) == [Change("released", 8_000 * MS)]
    assert not b.stuck
    assert b.edge(9_000 * MS, True) == [Change("press", 9_000 * MS)]


def test_stuck_is_reported_before_the_edge_that_reveals_it() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(0, True)
    assert b.edge(STUCK + 10 * MS, False) == [Change("stuck", STUCK), Change("released",
                                                                             STUCK + 10 * MS)]


def test_button_closed_at_start_is_no_slap_but_can_be_stuck() -> None:
    b = ButtonLogic(LOCK, STUCK, active=True, now=10 * MS)
    assert b.pressed and b.presses == 0
    assert b.check(10 * MS + STUCK) == [Change("stuck", 10 * MS + STUCK)]


def _noise(rng: random.Random, start: int, seconds: float, rate: int) -> list[Edge]:
    """A line chattering at ``rate`` edges a second (random gaps) for ``seconds``."""
    edges, t, level = [], start, True
    end = start + int(seconds * 1e9)
    while True:
        t += int(rng.expovariate(rate) * 1e9) + 1
        if t > end:
            return edges
        level = not level
        edges.append(Edge(t, level))


def test_a_chattering_line_is_flagged_ignored_and_settles_by_itself() -> None:
    """Issue 10.10: chatter of 10 000 edges/s made a slap every 60 ms (one per lockout pair),
    for ever. It is flagged within the first edges, nothing more counts while it lasts, and
    the flag clears once the line has been still for a second."""
    b = ButtonLogic(LOCK, STUCK, active=False, now=0)  # active = False: released (pull-up wiring)
    rng = random.Random(10)
    changes: list[Change] = []
    noise = _noise(rng, 1_000 * MS, 20.0, 10_000)
    for e in noise:
        changes += b.edge(e.t, not e.level)
        if rng.random() < 0.01:
            changes += b.check(e.t + 1)
    presses = [c for c in changes if c.kind == "press"]
    flags = [c for c in changes if c.kind == "chatter"]
    assert len(presses) <= 2 and all(c.t < 1_060 * MS for c in presses)
    assert len(flags) == 1 and flags[0].t < 1_060 * MS and "edges within" in flags[0].reason
    assert b.chatter and b.chattered > 190_000
    last = noise[-1].t
    assert b.next_due() == last + 1_000 * MS
    assert b.check(last + 999 * MS) == []
    assert b.check(last + 1_000 * MS) == [Change("settled", last + 1_000 * MS)]
    assert not b.chatter
    # The pad behaves again: the very next press counts, at its own edge.
    t = last + 1_500 * MS
    assert b.edge(t, True) == [Change("press", t)]
    # Bounded whatever the line did.
    assert len(b._edge_times) <= b.max_edges + 1 and len(b._press_times) <= b.max_presses + 1


def test_presses_faster_than_a_person_can_slap_are_flagged() -> None:
    """Clean presses (no bounce) 12 a second: the ninth within a second is flagged instead."""
    b = ButtonLogic(LOCK, STUCK)
    out: list[Change] = []
    for k in range(30):
        t = 1_000 * MS + k * 83 * MS
        out += b.edge(t, True)
        out += b.edge(t + 40 * MS, False)
    assert [c.kind for c in out] == ["press"] * 8 + ["chatter"]
    assert out[-1].reason.startswith("9 presses within")
    assert b.chatter and b.presses == 8


def test_a_stuck_button_that_starts_chattering_is_released_then_flagged() -> None:
    b = ButtonLogic(LOCK, STUCK)
    b.edge(0, True)
    assert b.check(STUCK) == [Change("stuck", STUCK)]
    out: list[Change] = []
    for e in _noise(random.Random(3), STUCK + 1, 0.2, 10_000):
        out += b.edge(e.t, e.level)
    kinds = [c.kind for c in out]
    assert kinds[0] == "released" and kinds[-1] == "chatter" and kinds.count("press") <= 2
    assert b.chatter and not b.stuck


def test_a_line_that_settles_pressed_is_no_slap_but_may_become_stuck() -> None:
    b = ButtonLogic(LOCK, STUCK)
    noise = _noise(random.Random(4), 0, 0.5, 10_000)
    for e in noise:
        b.edge(e.t, e.level)
    b.edge(noise[-1].t + 1, True)  # the line comes to rest at the pressed level
    rest = noise[-1].t + 1
    assert b.check(rest + 1_000 * MS) == [Change("settled", rest + 1_000 * MS)]
    assert b.pressed and b.presses <= 2
    assert b.check(rest + 1_000 * MS + STUCK) == [Change("stuck", rest + 1_000 * MS + STUCK)]


def test_hard_slapping_and_bouncy_buttons_are_never_taken_for_chatter() -> None:
    """Five slaps a second for a minute, each with up to 12 bounce edges on make and on break
    (0.1-5 ms): every press counts and nothing is flagged."""
    b = ButtonLogic(LOCK, STUCK)
    rng = random.Random(5)
    gen = BounceGenerator()
    t, expected, got = 0, [], []
    for _ in range(300):
        expected.append(t)
        for e in gen.press(rng, t, rng.randrange(60 * MS, 120 * MS), active_level=True):
            got += b.edge(e.t, e.level)
        t += rng.randrange(190 * MS, 210 * MS)
    got += b.check(t)
    assert [c for c in got if c.kind != "press"] == []
    assert [c.t for c in got] == expected


def test_logic_rejects_nonsense_timing() -> None:
    with pytest.raises(ValueError):
        ButtonLogic(0, STUCK)
    with pytest.raises(ValueError):
        ButtonLogic(LOCK, LOCK)


def test_ticks_to_ns() -> None:
    assert ticks_to_ns(123_456_789_012_345_678) == 123_456_789_012_345_678
    assert ticks_to_ns(1.5) == 1_500_000_000


# -- pads on gpiozero mock pins ---------------------------------------------------------------

def _mock(start: int = 1_000 * MS) -> tuple[VirtualClock, VirtualMockFactory]:
    clock = VirtualClock(start)
    return clock, VirtualMockFactory(clock)


def test_slap_pad_stamps_the_edge_not_the_delivery() -> None:
    clock, factory = _mock()
    got: list[Input] = []
    pad = SlapPad(17, seat=3, on_input=got.append, pin_factory=factory)
    sched = EdgeScheduler(clock)
    sched.schedule(factory.pin(17), Edge(1_500 * MS + 7, False), deliver_at=1_512 * MS)
    sched.run()
    assert got == [Input(t=1_500 * MS + 7, seat=3, act="slap")]
    assert clock.now_ns() == 1_512 * MS
    pad.close()


def test_call_pad_makes_a_lappen_call() -> None:
    clock, factory = _mock()
    got: list[Input] = []
    pad = CallPad(27, seat=1, on_input=got.append, pin_factory=factory)
    factory.pin(27).drive_at(False, 2_000 * MS)
    assert got == [Input(t=2_000 * MS, seat=1, act="call", call="lappen")]
    assert Input.from_json(got[0].to_json()) == got[0]
    pad.close()


def test_active_high_wiring() -> None:
    clock, factory = _mock()
    got: list[Input] = []
    pad = SlapPad(17, seat=0, on_input=got.append, pull_up=False, pin_factory=factory)
    factory.pin(17).drive_at(True, 2_000 * MS)
    factory.pin(17).drive_at(False, 2_100 * MS)
    assert [i.t for i in got] == [2_000 * MS]
    pad.close()


def test_table_time_maps_edges_onto_the_table_clock() -> None:
    clock, factory = _mock()
    got: list[Input] = []
    pad = SlapPad(17, seat=0, on_input=got.append, pin_factory=factory,
                  table_time=lambda t: t + 7_000)
    factory.pin(17).drive_at(False, 2_000 * MS)
    assert got[0].t == 2_000 * MS + 7_000
    pad.close()


@pytest.mark.slow
def test_ten_thousand_bouncy_presses_make_exactly_ten_thousand_slaps() -> None:
    """Four seats, 2 500 presses each, bounce of 0.1-5 ms on make and break, taps shorter and
    longer than the lockout, delivery delayed at random: one slap per press, at its first edge."""
    clock, factory = _mock(0)
    got: list[Input] = []
    pins = [5, 6, 13, 19]
    pads = [SlapPad(p, seat=s, on_input=got.append, pin_factory=factory)
            for s, p in enumerate(pins)]
    rng = random.Random(20240611)
    gen = BounceGenerator()
    sched = EdgeScheduler(clock)
    expected: list[tuple[int, int]] = []
    for seat, number in enumerate(pins):
        pin = factory.pin(number)
        t = rng.randrange(10 * MS)
        for _ in range(2_500):
            hold = rng.randrange(6 * MS, 250 * MS)
            edges = gen.press(rng, t, hold, active_level=False)
            expected.append((t, seat))
            for edge in edges:
                sched.schedule(pin, edge, edge.t + rng.randrange(0, 15 * MS))
            # the next press comes at least a lockout plus the longest chatter after the break
            t += hold + rng.randrange(40 * MS, 400 * MS)

    def tick(now: int) -> None:
        if rng.random() < 0.2:
            for pad in pads:
                pad.check(now)

    sched.run(on_step=tick)
    for pad in pads:
        pad.check(clock.now_ns() + LOCK)
    assert len(got) == 10_000
    assert sorted((i.t, i.seat) for i in got) == sorted(expected)
    assert sum(p.logic.bounces for p in pads) > 10_000  # there was bounce to ignore
    for pad in pads:
        pad.close()


def test_stuck_pad_reports_and_is_ignored_until_released() -> None:
    clock, factory = _mock()
    got: list[Input] = []
    events: list[PadEvent] = []
    pad = SlapPad(17, seat=2, on_input=got.append, on_event=events.append,
                  stuck_ns=2_000 * MS, pin_factory=factory)
    pin = factory.pin(17)
    pin.drive_at(False, 1_100 * MS)
    clock.advance_to(3_099 * MS)
    pad.check()
    assert events == [] and not pad.stuck
    clock.advance_to(3_100 * MS)
    pad.check()
    assert pad.stuck
    assert events == [PadEvent("button_stuck", 3_100 * MS, 2, "slap")]
    assert events[0].to_verdict().to_json() == {
        "t": 3_100 * MS, "verdict": "button_stuck", "seat": 2, "button": "slap"}
    pin.drive_at(True, 4_000 * MS)
    assert events[-1] == PadEvent("button_released", 4_000 * MS, 2, "slap")
    assert not pad.stuck
    pin.drive_at(False, 5_000 * MS)
    assert [i.t for i in got] == [1_100 * MS, 5_000 * MS]
    pad.close()


def test_a_chattering_pad_is_flagged_and_the_other_seats_still_judge_exactly() -> None:
    """On mock pins: seat 1's line chatters at 10 000 edges/s for 5 s while seat 0 slaps
    cleanly; seat 1 gives at most two inputs and one chatter notice (with its reason), seat 0
    every slap at its own edge time, and seat 1 counts again after a still second."""
    cfg = loads_config("[hardware]\npin_factory='mock'\n[[seats]]\nslap=17\n[[seats]]\nslap=5\n")
    clock, factory = _mock(0)
    got: list[Input] = []
    events: list[PadEvent] = []
    sched = EdgeScheduler(clock)
    with SeatPads(cfg, got.append, events.append, pin_factory=factory) as pads:
        noise = _noise(random.Random(6), 100 * MS, 5.0, 10_000)
        sched.schedule_all(factory.pin(5), noise, delay=200 * US)
        clean = [200 * MS + k * 400 * MS for k in range(12)]
        for t in clean:
            sched.schedule(factory.pin(17), Edge(t, False), t + 300 * US)
            sched.schedule(factory.pin(17), Edge(t + 80 * MS, True), t + 80 * MS + 300 * US)
        sched.run(on_step=lambda now: pads.check(now) if now % 97 == 0 else None)
        assert [i.t for i in got if i.seat == 0] == clean
        assert len([i for i in got if i.seat == 1]) <= 2
        assert [(e.kind, e.seat) for e in events] == [("button_chatter", 1)]
        assert "edges within" in events[0].reason
        assert events[0].to_verdict().to_json()["reason"] == events[0].reason
        assert pads.chattering() == [(1, "slap")]
        quiet = noise[-1].t + 1_000 * MS
        assert pads.next_due() == quiet
        pads.check(quiet)
        assert events[-1] == PadEvent("button_settled", quiet, 1, "slap")
        assert pads.chattering() == []
        line = factory.pin(5)
        if not line.state:  # the noise left the line low: let go first
            line.drive_at(True, quiet + 10 * MS)
        line.drive_at(False, quiet + 100 * MS)
        assert got[-1] == Input(quiet + 100 * MS, 1, "slap")
        assert len(line.states) <= 1000  # the mock pin's record is bounded


def test_chatter_limits_come_from_the_configuration() -> None:
    cfg = loads_config("[hardware]\nmax_presses_per_s = 3\nmax_edges_per_s = 50\n"
                       "[[seats]]\nslap=17\n")
    assert (cfg.max_presses_per_s, cfg.max_edges_per_s) == (3, 50)
    clock, factory = _mock(0)
    with SeatPads(cfg, lambda i: None, pin_factory=factory) as pads:
        assert (pads.slap[0].logic.max_presses, pads.slap[0].logic.max_edges) == (3, 50)
    for bad, why in (("max_presses_per_s = 0", "between 1 and 100"),
                     ("max_edges_per_s = 1.5", "whole number"),
                     ("max_presses_per_s = 10\nmax_edges_per_s = 12", "at least twice")):
        with pytest.raises(ValueError, match=why):
            loads_config(f"[hardware]\n{bad}\n[[seats]]\nslap=17\n")


def test_seat_pads_from_the_pin_map() -> None:
    cfg = loads_config(
        "[hardware]\npin_factory='mock'\nstuck_ms = 1000\n"
        "[[seats]]\nslap=17\ncall=27\nled=22\n[[seats]]\nslap=5\n"
    )
    clock, factory = _mock()
    got: list[Input] = []
    events: list[PadEvent] = []
    with SeatPads(cfg, got.append, events.append, pin_factory=factory) as pads:
        assert sorted(pads.slap) == [0, 1] and sorted(pads.call) == [0]
        factory.pin(5).drive_at(False, 1_200 * MS)
        factory.pin(27).drive_at(False, 1_300 * MS)
        assert got == [Input(1_200 * MS, 1, "slap"), Input(1_300 * MS, 0, "call", call="lappen")]
        assert pads.next_due() == 2_200 * MS
        pads.check(2_300 * MS)
        assert pads.stuck() == [(1, "slap"), (0, "call")]
        assert [e.kind for e in events] == ["button_stuck", "button_stuck"]
    # closed: the pins can be claimed again
    SeatPads(cfg, got.append, pin_factory=factory).close()


# -- the pads' progress (the GPIO source of the arbiter) ------------------------------------

TWO_SEATS = "[hardware]\npin_factory='mock'\n[[seats]]\nslap=17\n[[seats]]\nslap=5\n"


def test_progress_waits_for_an_edge_still_on_its_way() -> None:
    """A tracked delivery queue holds the progress just before its oldest undelivered edge;
    once delivered, the pads are as far as the clock."""
    clock, factory = _mock(0)
    sched = EdgeScheduler(clock)
    factory.track(sched)
    got: list[Input] = []
    with SeatPads(loads_config(TWO_SEATS), got.append, pin_factory=factory) as pads:
        clock.advance_to(10 * MS)
        assert pads.progress() == 10 * MS
        sched.schedule(factory.pin(5), Edge(11 * MS, False), 13 * MS)
        sched.schedule(factory.pin(17), Edge(12 * MS, False), 12 * MS + 100 * US)
        clock.advance_to(12 * MS + 500 * US)
        sched.step()  # seat 0's edge (stamped 12 ms) first: seat 1's (11 ms) is still queued
        assert [i.seat for i in got] == [0]
        assert pads.progress() == 11 * MS - 1
        sched.step()
        assert pads.progress() == 13 * MS and [i.t for i in got] == [12 * MS, 11 * MS]


def test_progress_stops_before_a_press_held_in_a_lockout() -> None:
    """A press made inside the release lockout is handed in when the lockout ends, stamped with
    its own edge: until then the pads' progress stays before that edge."""
    clock, factory = _mock(0)
    got: list[Input] = []
    with SeatPads(loads_config(TWO_SEATS), got.append, pin_factory=factory) as pads:
        pin = factory.pin(17)
        pin.drive_at(False, 100 * MS)  # press
        pin.drive_at(True, 150 * MS)  # release: a 30 ms lockout until 180 ms
        pin.drive_at(False, 160 * MS)  # pressed again inside it
        clock.advance_to(170 * MS)
        assert pads.progress() == 160 * MS - 1
        pads.check(181 * MS)
        assert [i.t for i in got] == [100 * MS, 160 * MS]
        clock.advance_to(181 * MS)
        assert pads.progress() == 181 * MS


def test_progress_on_a_factory_that_cannot_see_its_queue_is_now_minus_the_bound() -> None:
    """lgpio (here gpiozero's plain MockFactory, which tracks nothing) promises delivery within
    ``hardware.delivery_bound_ms``; the progress is the clock minus that bound, on the table
    clock the pads map onto."""
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    cfg = loads_config(TWO_SEATS.replace("pin_factory='mock'",
                                         "pin_factory='mock'\ndelivery_bound_ms = 1.5"))
    assert cfg.delivery_bound_ns == 1_500_000
    with SeatPads(cfg, lambda i: None, pin_factory=factory,
                  table_time=lambda t: t + 7) as pads:
        assert pads.progress(10 * MS) == 10 * MS - 1_500_000 + 7
