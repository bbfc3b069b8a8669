"""Pin factories and GPIO set-up: which gpiozero pin factory a table gets, and lgpio's failures.

:func:`make_pin_factory` gives the factory ``[hardware] pin_factory`` (or
``GPIOZERO_PIN_FACTORY``) asks for: the mock (:class:`hardware.mock.VirtualMockFactory`) or
:func:`lgpio_factory`, whose ``NsLGPIOFactory`` (:func:`lgpio_classes`) ticks in the kernel's
nanosecond edge stamps (why: :mod:`hardware.pads`). Before opening the chip it checks the
gpiozero in use (:func:`check_gpiozero`: one older than :data:`GPIOZERO_FIXED` ignores
``gpiochip``). What fails is said in one line (:func:`gpio_failure`): a
:class:`GpioUnavailable` for what may pass by itself, a :class:`~referee.errors.ConfigError` for
what a person must fix.
"""

from __future__ import annotations

import errno
import glob
import grp
import importlib.metadata
import logging
import os
import re
import stat
import time
from typing import Any, NoReturn

from gpiozero.pins import Factory

from hardware.config import HardwareConfig
from referee.errors import ConfigError, RefereeError

log = logging.getLogger(__name__)

#: The first gpiozero whose ``LGPIOFactory`` honours ``chip=``: 2.0 and 2.0.1 (Raspberry Pi OS's
#: apt package) always take chip 4 on a Pi 5 and 0 elsewhere, and 2.0.1.post1/.post2 fail in its
#: Pi 5 auto-detection (gpiozero issue 1162, pull requests 1181 and 1230).
GPIOZERO_FIXED = "2.0.1.post3"


class GpioUnavailable(RefereeError, OSError):
    """The GPIO cannot be used now: the chip cannot be opened (no such device yet, permission
    denied), a line is busy, lgpio's notification FIFO cannot be made. ``errno`` says which
    (``ENOENT``, ``EACCES``, ``EBUSY``, ``EIO``); the message says it in words. Such a failure
    may pass by itself (udev gives ``/dev/gpiochip*`` to the group ``gpio`` during boot; another
    program lets a line go), so ``referee run`` exits with a temporary failure."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)

    def __str__(self) -> str:
        return str(self.strerror)


#: An edge stamp further than this from ``time.monotonic_ns()`` when it arrives cannot be on
#: CLOCK_MONOTONIC (a kernel before 5.7 stamps the v1 uAPI on CLOCK_REALTIME).
_CLOCK_SANITY_NS = 60 * 1_000_000_000

_LGPIO_CLASSES: tuple[type, type] | None = None


def lgpio_classes() -> tuple[type, type]:
    """``(NsLGPIOFactory, NsLGPIOPin)``, built on first use (importing lgpio needs a Pi).

    ``NsLGPIOPin`` overrides gpiozero's ``LGPIOPin._call_when_changed(chip, gpio, level, tick)``
    to pass lgpio's integer ``tick`` — the kernel's CLOCK_MONOTONIC stamp of the edge, in
    nanoseconds — to ``when_changed`` as it is, instead of ``tick / 1e9``. ``NsLGPIOFactory``
    ticks in ``time.monotonic_ns()`` to match.
    """
    global _LGPIO_CLASSES
    if _LGPIO_CLASSES is None:
        from gpiozero.pins.lgpio import LGPIOFactory, LGPIOPin
        from gpiozero.pins.pi import PiPin

        class NsLGPIOPin(LGPIOPin):  # type: ignore[misc]
            _warned = False

            def _call_when_changed(self, chip: int, gpio: int, level: int, ticks: int) -> None:
                if not NsLGPIOPin._warned and abs(ticks - time.monotonic_ns()) > _CLOCK_SANITY_NS:
                    NsLGPIOPin._warned = True
                    log.error(
                        "GPIO edge stamps are not on CLOCK_MONOTONIC (kernel older than 5.7?): "
                        "slap times cannot be compared with card times"
                    )
                PiPin._call_when_changed(self, ticks, level)

        class NsLGPIOFactory(LGPIOFactory):  # type: ignore[misc]
            def __init__(self, chip: int | None = None) -> None:
                super().__init__(chip=chip)
                self.pin_class = NsLGPIOPin

            @staticmethod
            def ticks() -> int:
                return time.monotonic_ns()

            @staticmethod
            def ticks_diff(later: int, earlier: int) -> float:
                return (later - earlier) / 1e9

        _LGPIO_CLASSES = (NsLGPIOFactory, NsLGPIOPin)
    return _LGPIO_CLASSES


def lgpio_factory(chip: int | None = None, workdir: str | None = None) -> Factory:
    """The lgpio pin factory whose edge ticks are the kernel's nanosecond timestamps.

    ``workdir`` becomes ``LG_WD`` (unless the environment already sets it) *before* lgpio is
    imported: importing lgpio starts its notification thread, which creates a FIFO
    ``.lgd-nfyN`` in ``LG_WD`` or else the current directory, fails if that is not writable,
    and makes that directory the process's working directory (lgpio's ``lguGetWorkDir``;
    docs/wiring.md). What can fail is said in one line: a :class:`GpioUnavailable` for what may
    pass by itself (the chip cannot be opened, permission denied, the FIFO), a
    :class:`~referee.errors.ConfigError` for what a person must fix (lgpio is not installed; a
    gpiozero that ignores ``gpiochip``).
    """
    if workdir is not None:
        os.environ.setdefault("LG_WD", workdir)
    gpiozero_problem = check_gpiozero(chip)
    try:
        factory_class, _ = lgpio_classes()
    except ImportError as exc:
        raise ConfigError(None, "hardware.pin_factory",
                          f"the lgpio pin factory needs the Python module lgpio, which cannot be "
                          f"imported ({exc}): install card-referee[pi], or Raspberry Pi OS's "
                          "python3-lgpio in a venv made with --system-site-packages "
                          "(docs/install.md)") from None
    except OSError as exc:
        where = os.environ.get("LG_WD") or os.getcwd()
        raise GpioUnavailable(
            exc.errno or errno.EIO,
            f"lgpio cannot make its notification FIFO (.lgd-nfyN) in {where}: "
            f"{exc.strerror or exc}; LG_WD (or [hardware] lgpio_workdir) must name a folder "
            "the referee may write, such as the unit's RuntimeDirectory /run/card-referee",
        ) from exc
    try:
        factory = factory_class(chip=chip)
    except Exception as exc:
        failure = gpio_failure(exc, chip=chip)
        if failure is exc:
            raise
        if gpiozero_problem and isinstance(failure, GpioUnavailable):
            failure = GpioUnavailable(failure.errno or errno.EIO,
                                      f"{failure}; and {gpiozero_problem}")
        raise failure from exc
    if chip is not None and getattr(factory, "chip", chip) != chip:
        opened = factory.chip
        factory.close()
        raise ConfigError(None, "hardware.gpiochip",
                          f"gpiochip = {chip} was ignored: gpiozero opened gpiochip{opened}. "
                          f"{gpiozero_problem or 'This gpiozero ignores the chip.'}")
    return factory


def _version_key(text: str) -> tuple[int, int, int, int]:
    """``(major, minor, micro, post)`` of a version such as ``2.0.1.post3`` (post -1: none)."""
    m = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.-]?post(\d+))?", text.strip())
    if m is None:
        return (0, 0, 0, -1)
    major, minor, micro, post = m.groups()
    return (int(major), int(minor or 0), int(micro or 0), -1 if post is None else int(post))


def gpiozero_version() -> tuple[str, str]:
    """The version and the folder of the gpiozero that ``import gpiozero`` loads."""
    import gpiozero

    where = os.path.dirname(os.path.dirname(gpiozero.__file__ or ""))
    try:
        version = importlib.metadata.version("gpiozero")
    except importlib.metadata.PackageNotFoundError:
        version = str(getattr(gpiozero, "__version__", "unknown"))
    return version, where


def check_gpiozero(chip: int | None, version: str | None = None,
                   where: str | None = None) -> str | None:
    """What is wrong with the gpiozero in use for the lgpio factory, or None.

    Older than :data:`GPIOZERO_FIXED` and ``gpiochip`` given: a
    :class:`~referee.errors.ConfigError` (it would open another chip). Older and no
    ``gpiochip``: a warning in the log (a Pi 5 with a recent kernel has its header on gpiochip0,
    which gpiozero 2.0.1 does not look for), and the text is returned to add to an error.
    """
    if version is None or where is None:
        version, where = gpiozero_version()
    if _version_key(version) >= _version_key(GPIOZERO_FIXED):
        return None
    problem = (f"gpiozero {version} (from {where}) is older than {GPIOZERO_FIXED}, whose "
               "LGPIOFactory is the first to honour the gpiochip setting and find a Pi 5's chip; "
               "an older one is apt's python3-gpiozero showing through: install the newer one "
               "in the referee's venv (pip install 'gpiozero>=" + GPIOZERO_FIXED + "', "
               "docs/install.md)")
    if chip is not None:
        raise ConfigError(None, "hardware.gpiochip", f"gpiochip = {chip} would be ignored: "
                          f"{problem}")
    log.warning("%s", problem)
    return problem


def gpio_failure(exc: BaseException, *, chip: int | None = None) -> BaseException:
    """``exc`` in words, if it is lgpio's ``lgpio.error`` (returned unchanged otherwise):
    a :class:`GpioUnavailable` whose ``errno`` says what went wrong. gpiozero's
    ``PinUnknownPi`` (no Raspberry Pi revision in ``/proc``) is a
    :class:`~referee.errors.ConfigError`: this machine has no Pi header."""
    from gpiozero.exc import PinUnknownPi

    if isinstance(exc, PinUnknownPi):
        return ConfigError(None, "hardware.pin_factory",
                           f"the lgpio pin factory needs a Raspberry Pi's GPIO header: {exc}")
    if not (type(exc).__module__ == "lgpio" and type(exc).__name__ == "error"):
        return exc
    text = str(exc.args[0]) if exc.args else str(exc)
    if "busy" in text:
        return GpioUnavailable(errno.EBUSY, f"a GPIO line is busy (lgpio: {text}): another "
                               "program (or another referee) holds it; it is tried again "
                               "at the next start")
    if "permi" in text:
        return GpioUnavailable(errno.EACCES, f"GPIO permission denied (lgpio: {text})")
    if "open gpiochip" in text:
        return _chip_failure(chip, text)
    return GpioUnavailable(errno.EIO, f"the GPIO failed (lgpio: {text})")


def raise_gpio_failure(exc: BaseException) -> NoReturn:
    """Raise ``exc`` again, in words where :func:`gpio_failure` has them (the devices' opening
    code calls it after closing what it had opened)."""
    failure = gpio_failure(exc)
    if failure is exc:
        raise exc
    raise failure from exc


def _chip_failure(chip: int | None, text: str) -> GpioUnavailable:
    """Why ``/dev/gpiochipN`` could not be opened, as far as its file says."""
    chips = sorted(glob.glob("/dev/gpiochip*"))
    if not chips:
        return GpioUnavailable(errno.ENOENT, f"cannot open a GPIO chip (lgpio: {text}): there "
                               "is no /dev/gpiochip* (not a Raspberry Pi, or its GPIO driver "
                               "is not loaded yet)")
    path = f"/dev/gpiochip{chip}" if chip is not None else None
    if path is not None and path not in chips:
        return GpioUnavailable(errno.ENOENT, f"cannot open {path} (lgpio: {text}): it does not "
                               f"exist (there are {', '.join(chips)}): check gpiochip = {chip} "
                               "in [hardware]")
    for candidate in [path] if path else chips:
        if not os.access(candidate, os.R_OK | os.W_OK):
            info = os.stat(candidate)
            try:
                group = grp.getgrgid(info.st_gid).gr_name
            except KeyError:
                group = str(info.st_gid)
            return GpioUnavailable(
                errno.EACCES,
                f"permission denied on {candidate} ({stat.filemode(info.st_mode)}, group "
                f"{group}): the referee's user must be in the group that owns it (gpio on "
                "Raspberry Pi OS, which udev gives it during boot; docs/install.md)")
    return GpioUnavailable(errno.EIO, f"cannot open the GPIO chip "
                           f"{path or 'gpiozero chose'} (lgpio: {text})")


def make_pin_factory(config: HardwareConfig, *, clock: Any = None) -> Factory:
    """The pin factory the configuration (or ``GPIOZERO_PIN_FACTORY``) asks for.

    ``"mock"`` gives a :class:`hardware.mock.VirtualMockFactory` on ``clock`` (default: the real
    monotonic clock, so a simulated table keeps real time; tests pass a ``VirtualClock``).
    """
    name = config.factory_name()
    if name == "mock":
        from hardware.mock import MonotonicClock, VirtualMockFactory

        return VirtualMockFactory(clock if clock is not None else MonotonicClock())
    return lgpio_factory(config.gpiochip, config.lgpio_workdir)
