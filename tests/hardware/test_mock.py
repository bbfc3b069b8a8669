"""The mock backend: a virtual ns clock, edges at injected times, bounce, delivery order."""

from __future__ import annotations

import random

import pytest
from gpiozero import LED, Button

from hardware.config import loads_config
from hardware.mock import (
    BounceGenerator,
    Edge,
    EdgeScheduler,
    MonotonicClock,
    VirtualClock,
    VirtualMockFactory,
)
from hardware.pins import make_pin_factory


def test_virtual_clock_moves_only_forward() -> None:
    clock = VirtualClock(5)
    assert clock.advance_to(3) == 5
    assert clock.advance_to(10) == 10
    assert clock.advance(7) == 17
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_factory_ticks_are_the_clock_in_ns() -> None:
    clock = VirtualClock(1_000)
    factory = VirtualMockFactory(clock)
    assert factory.ticks() == 1_000
    clock.advance(2_500_000_000)
    assert factory.ticks() == 2_500_001_000
    assert factory.ticks_diff(3_000_000_000, 1_000_000_000) == 2.0


def test_when_changed_gets_the_injected_edge_time_not_the_clock() -> None:
    clock = VirtualClock(50_000_000)
    factory = VirtualMockFactory(clock)
    pin = factory.pin(17)
    pin.function = "input"
    seen: list[tuple[int, bool]] = []

    def changed(ticks: int, state: bool) -> None:
        seen.append((ticks, state))

    pin.when_changed = changed
    assert pin.drive_at(True, 12_345_678) is True
    assert pin.drive_at(True, 13_000_000) is False  # no change of level: no edge
    pin.drive_at(False, 49_999_999)
    assert seen == [(12_345_678, True), (49_999_999, False)]
    pin.drive_low()  # no injected time: stamped with the clock
    pin.drive_high()
    assert seen[-1] == (50_000_000, True)


def test_a_pin_remembers_a_bounded_history_of_its_states() -> None:
    """Issue 10.10: every edge went into an unbounded list (``states``): a line chattering at
    10 000 edges/s grew the process by about 1 MB a second. The record is a ring of the last
    ``state_history`` changes, oldest first, and gpiozero's own assertions still read it."""
    factory = VirtualMockFactory(VirtualClock(0))
    pin = factory.pin(17)
    pin.function = "input"
    for k in range(1, 100_001):
        pin.drive_at(k % 2 == 0, k * 1_000)
    assert len(pin.states) == 1000
    assert pin.states[-1].state is True and pin.states[0].state is False  # k = 99 001
    pin.assert_states([s.state for s in pin.states])
    pin.clear_states()
    assert [s.state for s in pin.states] == [True]
    small = VirtualMockFactory(VirtualClock(0), state_history=3).pin(5)
    small.function = "input"
    for k in range(10):
        small.drive_at(k % 2 == 1, (k + 1) * 1_000)
    assert [s.state for s in small.states] == [True, False, True]
    with pytest.raises(ValueError):
        VirtualMockFactory(state_history=0)


def test_gpiozero_devices_work_on_it() -> None:
    clock = VirtualClock()
    factory = VirtualMockFactory(clock)
    led = LED(22, pin_factory=factory)
    led.on()
    assert factory.pin(22).state
    button = Button(4, pin_factory=factory)
    factory.pin(4).drive_at(False, 0)
    assert button.is_pressed
    button.close()
    led.close()


def test_pin_factory_from_configuration_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = loads_config("[hardware]\npin_factory = 'mock'\n[[seats]]\nslap = 17\n")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    factory = make_pin_factory(cfg)
    assert isinstance(factory, VirtualMockFactory)
    assert isinstance(factory.clock, MonotonicClock)
    clock = VirtualClock(7)
    assert make_pin_factory(cfg, clock=clock).ticks() == 7
    lgpio_cfg = loads_config("[[seats]]\nslap = 17\n")
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert isinstance(make_pin_factory(lgpio_cfg), VirtualMockFactory)


def test_bounce_generator_chatters_within_its_span_and_ends_at_the_level() -> None:
    gen = BounceGenerator()
    rng = random.Random(3)
    spans = []
    for _ in range(2000):
        t0 = rng.randrange(10**12)
        edges = gen.transition(rng, t0, False)
        assert edges[0] == Edge(t0, False)
        assert edges[-1].level is False
        assert all(a.t < b.t for a, b in zip(edges, edges[1:], strict=False))
        assert all(a.level != b.level for a, b in zip(edges, edges[1:], strict=False))
        assert len(edges) - 1 <= gen.max_toggles
        if len(edges) > 1:
            spans.append(edges[-1].t - t0)
    assert min(spans) >= 100_000 and max(spans) <= 5_000_000
    assert max(spans) > 4_000_000 and min(spans) < 500_000  # the whole 0.1-5 ms range is used


def test_bounce_generator_is_seeded() -> None:
    gen = BounceGenerator()
    a = gen.press(random.Random(9), 0, 80_000_000)
    b = gen.press(random.Random(9), 0, 80_000_000)
    assert a == b
    assert a != gen.press(random.Random(10), 0, 80_000_000)
    with pytest.raises(ValueError):
        gen.press(random.Random(1), 0, 4_000_000)


def test_scheduler_delivers_in_delivery_order_with_edge_times() -> None:
    clock = VirtualClock()
    factory = VirtualMockFactory(clock)
    seen: list[tuple[str, int, int]] = []
    pins = {}
    for name, number in (("a", 5), ("b", 6)):
        pin = factory.pin(number)
        pin.function = "input"
        pin.pull = "up"

        def changed(ticks: int, state: bool, name: str = name) -> None:
            seen.append((name, ticks, clock.now_ns()))

        pin.when_changed = changed
        pins[name] = (pin, changed)
    sched = EdgeScheduler(clock)
    # b's edge happened later but is delivered first.
    sched.schedule(pins["a"][0], Edge(1_000, False), deliver_at=9_000)
    sched.schedule(pins["b"][0], Edge(2_000, False), deliver_at=4_000)
    steps: list[int] = []
    sched.run_until(20_000, on_step=steps.append)
    assert seen == [("b", 2_000, 4_000), ("a", 1_000, 9_000)]
    assert steps == [4_000, 9_000] and clock.now_ns() == 20_000


def test_scheduler_keeps_one_lines_order() -> None:
    clock = VirtualClock()
    factory = VirtualMockFactory(clock)
    pin = factory.pin(5)
    pin.function = "input"
    pin.pull = "up"
    seen: list[int] = []

    def changed(ticks: int, state: bool) -> None:
        seen.append(ticks)

    pin.when_changed = changed
    sched = EdgeScheduler(clock)
    sched.schedule(pin, Edge(1_000, False), deliver_at=9_000)
    at = sched.schedule(pin, Edge(2_000, True), deliver_at=3_000)
    assert at == 9_000  # cannot overtake the line's earlier edge
    sched.run()
    assert seen == [1_000, 2_000]


def test_scheduler_never_delivers_before_the_edge() -> None:
    clock = VirtualClock()
    sched = EdgeScheduler(clock)
    pin = VirtualMockFactory(clock).pin(5)
    assert sched.schedule(pin, Edge(5_000, False), deliver_at=1_000) == 5_000
