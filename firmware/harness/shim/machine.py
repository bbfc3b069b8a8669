"""A stand-in for the rp2 port's ``machine``: pins (levels set by the test, irq handlers run at
the edge) and PWM (its settings reported to the test). Only what the firmware uses."""

import board_shim


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        self._level = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self._level = 1 if value else 0
        self._handler = None
        self._trigger = 0

    def value(self, v=None):
        if v is None:
            return self._level
        self._level = 1 if v else 0
        return None

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING, hard=False):
        self._handler = handler
        self._trigger = trigger
        board_shim.pins[self.id] = self

    def _drive(self, level):
        level = 1 if level else 0
        if level == self._level:
            return
        self._level = level
        edge = Pin.IRQ_RISING if level else Pin.IRQ_FALLING
        handled = self._handler is not None and self._trigger & edge
        if handled:
            self._handler(self)
        board_shim.report(edge=self.id, level=level, handled=bool(handled))

    def __repr__(self):
        return f"Pin({self.id})"


class PWM:
    def __init__(self, pin, freq=0, duty_u16=0):
        self.pin = pin
        self._freq = freq
        self._duty = duty_u16

    def freq(self, value=None):
        if value is None:
            return self._freq
        self._freq = value
        return None

    def duty_u16(self, value=None):
        if value is None:
            return self._duty
        self._duty = value
        board_shim.report(pwm=self.pin.id, freq=self._freq, duty=value)
        return None

    def deinit(self):
        self.duty_u16(0)


def freq():
    return 125_000_000


def unique_id():
    return b"harness!"
