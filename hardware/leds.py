"""The seats' LEDs on gpiozero: :class:`SeatLeds`, an output of the referee service that
follows the verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpiozero import LED
from gpiozero.pins import Factory

from hardware.config import HardwareConfig
from hardware.pins import make_pin_factory, raise_gpio_failure
from referee.model import Verdict


class SeatLeds:
    """The seats' LEDs (gpiozero ``LED`` devices); a seat without an LED is skipped silently.

    :meth:`show` follows the verdicts: the winner of a pile (or of the game) lights, otherwise
    the seat whose turn it is.
    """

    def __init__(
        self,
        pins: Sequence[int | None] | HardwareConfig,
        *,
        active_high: bool = True,
        pin_factory: Factory | None = None,
    ) -> None:
        if isinstance(pins, HardwareConfig):
            active_high = pins.led_active_high
            if pin_factory is None:
                pin_factory = make_pin_factory(pins)
            pins = [s.led for s in pins.seats]
        self.leds: dict[int, LED] = {}
        try:
            for seat, pin in enumerate(pins):
                if pin is not None:
                    self.leds[seat] = LED(
                        pin, active_high=active_high, initial_value=False, pin_factory=pin_factory
                    )
        except BaseException as exc:
            self.close()
            raise_gpio_failure(exc)

    def on(self, seat: int) -> None:
        """Light ``seat``'s LED."""
        if seat in self.leds:
            self.leds[seat].on()

    def off(self, seat: int) -> None:
        """Put out ``seat``'s LED."""
        if seat in self.leds:
            self.leds[seat].off()

    def only(self, *seats: int) -> None:
        """Light exactly these seats' LEDs."""
        for seat, led in self.leds.items():
            if seat in seats:
                led.on()
            else:
                led.off()

    def all_off(self) -> None:
        """Put out every LED."""
        self.only()

    def lit(self) -> list[int]:
        """The seats whose LED is lit."""
        return [seat for seat, led in self.leds.items() if led.is_lit]

    def show(self, verdicts: Sequence[Verdict], state: dict[str, Any] | None = None) -> None:
        """Light the game's winners, else the last pile's winner, else the seat to play."""
        for v in reversed(verdicts):
            if v.verdict == "game_over":
                self.only(*(v.get("winners") or []))
                return
        for v in reversed(verdicts):
            if v.verdict == "pile_won":
                self.only(v["seat"])
                return
        if state is not None and state.get("turn") is not None:
            self.only(state["turn"])

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """The referee service's output hook: :meth:`show`."""
        self.show(verdicts, state)

    def close(self) -> None:
        """Put out and release every LED."""
        for led in self.leds.values():
            led.close()
