"""Seat LEDs: the verdicts light the winners, else the seat to play."""

from __future__ import annotations

from hardware.config import loads_config
from hardware.leds import SeatLeds
from hardware.mock import VirtualClock, VirtualMockFactory
from referee.model import Verdict


def _mock() -> VirtualMockFactory:
    return VirtualMockFactory(VirtualClock(1_000_000_000))


def test_seat_leds_follow_the_verdicts() -> None:
    factory = _mock()
    leds = SeatLeds([22, None, 13, 25], pin_factory=factory)
    leds.only(2)
    assert leds.lit() == [2] and factory.pin(13).state and not factory.pin(22).state
    leds.on(1)  # a seat without an LED: nothing to do
    leds.show([Verdict(1, "pile_won", {"seat": 3, "reason": "double", "cards": 4}),
               Verdict(1, "slap_lost", {"seat": 0, "to": 3})], {"turn": 3})
    assert leds.lit() == [3]
    leds.show([], {"turn": 0})
    assert leds.lit() == [0]
    leds.update([Verdict(2, "game_over", {"winners": [0, 2]})], {"turn": None})
    assert leds.lit() == [0, 2]
    leds.all_off()
    assert leds.lit() == []
    leds.close()


def test_seat_leds_active_low_from_config() -> None:
    cfg = loads_config("[hardware]\nled_active_high = false\n[[seats]]\nslap=17\nled=22\n")
    factory = _mock()
    leds = SeatLeds(cfg, pin_factory=factory)
    assert factory.pin(22).state  # off = high
    leds.on(0)
    assert not factory.pin(22).state
    leds.close()

