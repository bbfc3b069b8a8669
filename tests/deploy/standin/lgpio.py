"""A stand-in for lgpio (the Python module of joan2937/lg) on a machine without GPIO: what the
real one does on import, and the failures of the real one on demand.

On import, like lgpio 0.2.2.0 (``lgpio_extra.py`` and ``src/lgUtil.c``, ``lguGetWorkDir``):
the working directory becomes ``LG_WD`` if set (or stays the current one), the notification
FIFO ``.lgd-nfy0`` is made there, and the module opens it by its relative name, so a
directory that cannot be used fails with ``FileNotFoundError: ... '.lgd-nfy-3'``.
``STANDIN_LGPIO`` picks a failure of the real library: ``nochip`` (``gpiochip_open``: "can not
open gpiochip"), ``busy`` (claiming a line: "GPIO busy"). Pins read high (pull-ups, nothing
pressed); ``STANDIN_LGPIO_LOG`` names a file that gets one line per call.
"""

from __future__ import annotations

import os
from typing import Any

SET_ACTIVE_LOW = 4
SET_OPEN_DRAIN = 8
SET_OPEN_SOURCE = 16
SET_PULL_UP = 32
SET_PULL_DOWN = 64
SET_PULL_NONE = 128
SET_BIAS_PULL_UP = SET_PULL_UP
SET_BIAS_PULL_DOWN = SET_PULL_DOWN
SET_BIAS_DISABLE = SET_PULL_NONE
RISING_EDGE = 1
FALLING_EDGE = 2
BOTH_EDGES = 3

_FAIL = os.environ.get("STANDIN_LGPIO", "")
_modes: dict[int, int] = {}


class error(Exception):  # noqa: N801 - lgpio's own name
    """lgpio's exception: its args are the text of the library's error code."""


def _log(*what: Any) -> None:
    path = os.environ.get("STANDIN_LGPIO_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(" ".join(str(w) for w in what) + "\n")


_workdir = os.environ.get("LG_WD")
if _workdir is not None:
    try:
        os.chdir(_workdir)
    except OSError:
        pass
try:
    os.mkfifo(os.path.join(_workdir or os.getcwd(), ".lgd-nfy0"), 0o664)
    _notify = 0
except FileExistsError:
    _notify = 0
except OSError:
    _notify = -3
_log("import", os.getcwd())
_fifo_name = f".lgd-nfy{_notify}"
if not os.path.exists(_fifo_name):
    open(_fifo_name, "rb")  # noqa: SIM115 - fails as the real one does


def gpiochip_open(chip: int) -> int:
    _log("gpiochip_open", chip)
    if _FAIL == "nochip":
        raise error("can not open gpiochip")
    return 1


def gpiochip_close(handle: int) -> None:
    _log("gpiochip_close", handle)


def _claim(gpio: int, mode: int) -> int:
    if _FAIL == "busy":
        raise error("GPIO busy")
    _modes[gpio] = mode
    return 0


def gpio_claim_input(handle: int, gpio: int, flags: int = 0) -> int:
    _log("gpio_claim_input", gpio, flags)
    return _claim(gpio, (1 << 8) | (flags << 3 if flags else 0))


def gpio_claim_output(handle: int, gpio: int, level: int = 0, flags: int = 0) -> int:
    _log("gpio_claim_output", gpio, level)
    return _claim(gpio, (1 << 1) | (1 << 9))


def gpio_claim_alert(handle: int, gpio: int, edges: int, flags: int = 0,
                     notify_handle: Any = None) -> int:
    _log("gpio_claim_alert", gpio, edges, flags)
    return _claim(gpio, (1 << 10) | (flags << 3 if flags else 0))


def gpio_free(handle: int, gpio: int) -> int:
    _modes.pop(gpio, None)
    return 0


def gpio_get_mode(handle: int, gpio: int) -> int:
    return _modes.get(gpio, 0)


def gpio_read(handle: int, gpio: int) -> int:
    return 1


def gpio_write(handle: int, gpio: int, level: int) -> int:
    _log("gpio_write", gpio, level)
    return 0


def gpio_set_debounce_micros(handle: int, gpio: int, micros: int) -> int:
    return 0


def tx_pwm(handle: int, gpio: int, frequency: float, duty: float, *rest: Any) -> int:
    return 0


class _Callback:
    def __init__(self, handle: int, gpio: int, edge: int, func: Any) -> None:
        self.func = func

    def cancel(self) -> None:
        pass


def callback(handle: int, gpio: int, edge: int = BOTH_EDGES, func: Any = None) -> _Callback:
    _log("callback", gpio, edge)
    return _Callback(handle, gpio, edge, func)
