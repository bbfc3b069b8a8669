"""The lgpio pin factory: the kernel's tick reaches the input unchanged."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from hardware.pads import SlapPad
from referee.model import Input

MS = 1_000_000


class _StubCallback:
    def __init__(self, registry: list[Any], func: Any) -> None:
        self.func = func
        self.registry = registry
        registry.append(self)

    def cancel(self) -> None:
        if self in self.registry:
            self.registry.remove(self)


def _stub_lgpio(levels: dict[int, int], callbacks: list[Any]) -> types.ModuleType:
    m = types.ModuleType("lgpio")
    m.SET_PULL_NONE, m.SET_PULL_UP, m.SET_PULL_DOWN = 128, 32, 64  # type: ignore[attr-defined]
    m.RISING_EDGE, m.FALLING_EDGE, m.BOTH_EDGES = 1, 2, 3  # type: ignore[attr-defined]
    modes: dict[int, int] = {}
    m.error = type("error", (Exception,), {})  # type: ignore[attr-defined]
    m.gpiochip_open = lambda chip: 0  # type: ignore[attr-defined]
    m.gpiochip_close = lambda h: 0  # type: ignore[attr-defined]

    def claim_input(h: int, gpio: int, flags: int = 0) -> int:
        modes[gpio] = 256 | flags
        return 0

    m.gpio_claim_input = claim_input  # type: ignore[attr-defined]
    m.gpio_claim_output = lambda h, gpio, *a: 0  # type: ignore[attr-defined]
    m.gpio_claim_alert = lambda h, gpio, edges, flags=0: 0  # type: ignore[attr-defined]
    m.gpio_free = lambda h, gpio: 0  # type: ignore[attr-defined]
    m.gpio_get_mode = lambda h, gpio: modes.get(gpio, 256)  # type: ignore[attr-defined]
    m.gpio_read = lambda h, gpio: levels.get(gpio, 1)  # type: ignore[attr-defined]
    m.gpio_set_debounce_micros = lambda h, gpio, us: 0  # type: ignore[attr-defined]
    m.callback = lambda h, gpio, edges, func: _StubCallback(callbacks, func)  # type: ignore
    return m


def test_lgpio_pad_uses_the_kernel_timestamp_to_the_nanosecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """lgpio calls back with (chip, gpio, level, tick): tick, the kernel's CLOCK_MONOTONIC stamp
    in ns, must become the input's t exactly — not tick / 1e9 (gpiozero's LGPIOPin rounds it) and
    not the time the callback ran."""
    import hardware.pins as pins_module

    callbacks: list[Any] = []
    monkeypatch.setitem(sys.modules, "lgpio", _stub_lgpio({17: 1}, callbacks))
    monkeypatch.delitem(sys.modules, "gpiozero.pins.lgpio", raising=False)
    monkeypatch.setattr(pins_module, "_LGPIO_CLASSES", None)
    monkeypatch.delenv("LG_WD", raising=False)
    factory_class, pin_class = pins_module.lgpio_classes()
    monkeypatch.setattr(factory_class, "_get_revision", lambda self: 0xA02082)
    factory = pins_module.lgpio_factory(chip=0, workdir="/run/card-referee")
    import os

    assert os.environ["LG_WD"] == "/run/card-referee"
    try:
        got: list[Input] = []
        pad = SlapPad(17, seat=1, on_input=got.append, pin_factory=factory)
        assert isinstance(pad.pin, pin_class)
        assert pad.pin.bounce is None  # no lgpio debounce on the timing path
        assert len(callbacks) == 1
        tick = 123_456_789_012_345_678  # ~3.9 years of uptime: floats lose the nanoseconds
        assert round(tick / 1e9 * 1e9) != tick
        callbacks[0].func(0, 17, 0, tick)  # lgpio's notification thread: the line fell
        callbacks[0].func(0, 17, 1, tick + 40 * MS)
        callbacks[0].func(0, 17, 2, tick + 90 * MS)  # a watchdog report: not an edge
        assert got == [Input(t=tick, seat=1, act="slap")]
        assert isinstance(factory.ticks(), int)
        assert factory.ticks_diff(3 * 10**9, 10**9) == 2.0
        pad.close()
    finally:
        factory.close()
        monkeypatch.setattr(pins_module, "_LGPIO_CLASSES", None)
