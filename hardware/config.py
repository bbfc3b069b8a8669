"""The table's pin map: which GPIO each seat's slap button, call button and LED is wired to.

It is read from the ``[hardware]`` table and the ``[[seats]]`` array of the table's TOML
configuration (other top-level tables in the same file belong to other parts of the referee and
are left alone; the arbiter's settle window is ``[table] settle_ms``, see ``cardtable.config``)::

    [hardware]
    pin_factory = "lgpio"        # or "mock"; GPIOZERO_PIN_FACTORY overrides it
    pull_up = true               # buttons switch to GND, the Pi's internal pull-up holds them high
    bounce_lockout_ms = 30       # after an accepted press or release, edges are contact bounce
    stuck_ms = 5000              # a button held this long is reported stuck and ignored
    max_presses_per_s = 8        # more presses (or raw edges) than these within a second: the
    max_edges_per_s = 500        #   line chatters, and is ignored until still for a second
    delivery_bound_ms = 2        # lgpio: an edge reaches its callback within this of its stamp

    [[seats]]
    name = "Anna"
    slap = 17                    # BCM number, or "GPIO17", "BCM17", "BOARD11"
    call = 27                    # optional: the Vändåtta call ("lappen") button
    led = 22                     # optional: the seat's LED

Every error is a :class:`ConfigError` whose message starts with the key it is about
(``seats[1].call``), so a person can find the line to fix.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import ConfigError, shown

#: The BCM GPIO numbers a 40-pin Raspberry Pi header offers for buttons and LEDs. GPIO 0 and 1
#: (header pins 27 and 28) are reserved for the HAT ID EEPROM.
USABLE_GPIO = range(2, 28)

#: Physical header pin (``BOARDn``) → BCM GPIO number, for the 40-pin header.
BOARD_TO_BCM: dict[int, int] = {
    3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24, 19: 10,
    21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12, 33: 13, 35: 19,
    36: 16, 37: 26, 38: 20, 40: 21,
}
#: Header pins that are power or ground, named in errors.
POWER_PINS = {1: "3V3", 2: "5V", 4: "5V", 17: "3V3"}
GROUND_PINS = {6, 9, 14, 20, 25, 30, 34, 39}

#: GPIO 2 and 3 (I²C) carry fixed 1.8 kΩ pull-ups on the board: they cannot be pulled down.
FIXED_PULL_UP = {2, 3}

PIN_FACTORIES = ("lgpio", "mock")

DEFAULT_BOUNCE_LOCKOUT_MS = 30.0
DEFAULT_STUCK_MS = 5000.0
#: On lgpio, the longest an edge may take from its kernel stamp to its pad's callback: the
#: promise behind the pads' progress (``hardware.pads.SeatPads.progress``). lgpio's thread polls
#: the lines every 0.5 ms and runs the callbacks one after the other (docs/timing.md). An edge
#: later than this is restamped, counted (``arbiter.late``) and judged in its new place.
DEFAULT_DELIVERY_BOUND_MS = 2.0
#: More presses or raw edges than these within one second are no person: the line chatters.
DEFAULT_MAX_PRESSES_PER_S = 8
DEFAULT_MAX_EDGES_PER_S = 500
#: The most ``max_presses_per_s`` may be.
MOST_PRESSES_PER_S = 100
MAX_SEATS = 8

_HARDWARE_KEYS = {
    "pin_factory", "pull_up", "active_state", "bounce_lockout_ms", "stuck_ms", "led_active_high",
    "lgpio_workdir", "gpiochip", "max_presses_per_s", "max_edges_per_s", "delivery_bound_ms",
}
_SEAT_KEYS = {"name", "slap", "call", "led"}


@dataclass(frozen=True)
class SeatPins:
    """One seat's wiring: BCM numbers of its slap button, call button and LED (``None``: none)."""

    seat: int
    name: str
    slap: int
    call: int | None = None
    led: int | None = None


@dataclass(frozen=True)
class HardwareConfig:
    """The validated pin map and the timing parameters of the pads.

    ``pull_up`` is ``True`` (internal pull-up, button to GND, pressed = low), ``False`` (internal
    pull-down, button to 3V3, pressed = high) or ``None`` (external resistors; then
    ``active_state`` says which level means pressed: ``True`` = high). This is exactly
    gpiozero's ``InputDevice(pull_up=…, active_state=…)``.
    """

    seats: tuple[SeatPins, ...]
    pin_factory: str = "lgpio"
    pull_up: bool | None = True
    active_state: bool | None = None
    bounce_lockout_ms: float = DEFAULT_BOUNCE_LOCKOUT_MS
    stuck_ms: float = DEFAULT_STUCK_MS
    led_active_high: bool = True
    max_presses_per_s: int = DEFAULT_MAX_PRESSES_PER_S
    max_edges_per_s: int = DEFAULT_MAX_EDGES_PER_S
    lgpio_workdir: str | None = None
    gpiochip: int | None = None
    delivery_bound_ms: float = DEFAULT_DELIVERY_BOUND_MS

    @property
    def delivery_bound_ns(self) -> int:
        """How late (at most) an lgpio edge reaches its callback, in nanoseconds: the promise
        behind the pads' progress (``hardware.pads.SeatPads.progress``)."""
        return round(self.delivery_bound_ms * 1_000_000)

    @property
    def lockout_ns(self) -> int:
        """The bounce lockout in nanoseconds."""
        return round(self.bounce_lockout_ms * 1_000_000)

    @property
    def stuck_ns(self) -> int:
        """The stuck-button time in nanoseconds."""
        return round(self.stuck_ms * 1_000_000)

    def factory_name(self, environ: dict[str, str] | None = None) -> str:
        """The pin factory to use: ``GPIOZERO_PIN_FACTORY`` if set, else ``pin_factory``."""
        env = os.environ if environ is None else environ
        name = env.get("GPIOZERO_PIN_FACTORY", "").strip().lower()
        if not name:
            return self.pin_factory
        if name not in PIN_FACTORIES:
            raise ConfigError(None,
                "GPIOZERO_PIN_FACTORY",
                f"unsupported pin factory {shown(name)} (known: {', '.join(PIN_FACTORIES)})",
            )
        return name


def parse_pin(value: Any, key: str) -> int:
    """A pin given as a BCM number or a name (``GPIO17``, ``BCM17``, ``BOARD11``) → BCM number."""
    if isinstance(value, bool):
        raise ConfigError(None, key,
                          f"must be a BCM GPIO number 2..27 or a pin name, got {shown(value)}")
    if isinstance(value, int):
        bcm = value
    elif isinstance(value, str):
        text = value.strip().upper()
        for prefix in ("GPIO", "BCM"):
            if text.startswith(prefix) and text[len(prefix):].isdigit():
                bcm = int(text[len(prefix):])
                break
        else:
            if text.startswith("BOARD") and text[5:].isdigit():
                bcm = _board_pin(int(text[5:]), key)
            elif text.startswith("J8:") and text[3:].isdigit():
                bcm = _board_pin(int(text[3:]), key)
            else:
                raise ConfigError(None,
                    key,
                    f"unknown pin name {shown(value)} (use a BCM number 2..27, GPIOn, BCMn or "
                    "BOARDn)",
                )
    else:
        raise ConfigError(None,
            key, f"must be a BCM GPIO number 2..27 or a pin name, got {shown(value)}"
        )
    if bcm in (0, 1):
        raise ConfigError(None, key, f"GPIO{bcm} is reserved for the HAT ID EEPROM; use GPIO 2..27")
    if bcm not in USABLE_GPIO:
        raise ConfigError(None,
            key, f"GPIO{bcm} is not on the Raspberry Pi 40-pin header (usable: GPIO 2..27)"
        )
    return bcm


def _board_pin(n: int, key: str) -> int:
    if n in POWER_PINS:
        raise ConfigError(None, key, f"header pin {n} is {POWER_PINS[n]} power, not a GPIO")
    if n in GROUND_PINS:
        raise ConfigError(None, key, f"header pin {n} is ground, not a GPIO")
    if n not in BOARD_TO_BCM:
        raise ConfigError(None, key, f"there is no header pin {n} on the 40-pin header (1..40)")
    return BOARD_TO_BCM[n]


def _number(raw: dict[str, Any], key: str, default: float, lo: float, hi: float) -> float:
    if key not in raw:
        return default
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(None, f"hardware.{key}",
                          f"must be a number of milliseconds, got {shown(value)}")
    if not lo <= value <= hi:
        raise ConfigError(None, f"hardware.{key}",
                          f"must be between {lo:g} and {hi:g} ms, got {value}")
    return float(value)


def _count(raw: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(None, f"hardware.{key}", f"must be a whole number, got {shown(value)}")
    if not lo <= value <= hi:
        raise ConfigError(None, f"hardware.{key}", f"must be between {lo} and {hi}, got {value}")
    return value


def _bool(raw: dict[str, Any], key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(None, f"hardware.{key}", f"must be true or false, got {shown(value)}")
    return value


def _pull(raw: dict[str, Any]) -> tuple[bool | None, bool | None]:
    pull_up: Any = raw.get("pull_up", True)
    if pull_up == "none":
        pull_up = None
    elif not isinstance(pull_up, bool):
        raise ConfigError(None,
            "hardware.pull_up",
            f'must be true, false or "none" (external resistors), got {shown(pull_up)}',
        )
    active: Any = raw.get("active_state")
    if active is not None:
        if isinstance(active, str) and active.lower() in ("high", "low"):
            active = active.lower() == "high"
        elif not isinstance(active, bool):
            raise ConfigError(None,
                "hardware.active_state",
                f'must be "high", "low", true or false, got {shown(active)}'
            )
    if pull_up is None and active is None:
        raise ConfigError(None,
            "hardware.active_state",
            'is required when pull_up = "none": say which level means pressed ("high" or "low")',
        )
    if pull_up is not None and active is not None:
        raise ConfigError(None,
            "hardware.active_state",
            "only applies with pull_up = \"none\"; with an internal pull the pressed level "
            "follows from it (pull-up: low, pull-down: high)",
        )
    return pull_up, active


def parse_config(doc: dict[str, Any]) -> HardwareConfig:
    """Validate a parsed TOML document (the whole table configuration) into a pin map."""
    if not isinstance(doc, dict):
        raise ConfigError(None, "<config>", "must be a TOML document")
    raw = doc.get("hardware", {})
    if not isinstance(raw, dict):
        raise ConfigError(None, "hardware", "must be a table: [hardware]")
    for key in raw:
        if key not in _HARDWARE_KEYS:
            raise ConfigError(None,
                f"hardware.{key}", f"unknown key (known: {', '.join(sorted(_HARDWARE_KEYS))})"
            )
    factory = raw.get("pin_factory", "lgpio")
    if factory not in PIN_FACTORIES:
        raise ConfigError(None,
            "hardware.pin_factory",
            f"must be one of {', '.join(PIN_FACTORIES)}, got {shown(factory)}"
        )
    pull_up, active = _pull(raw)
    lockout = _number(raw, "bounce_lockout_ms", DEFAULT_BOUNCE_LOCKOUT_MS, 1, 500)
    stuck = _number(raw, "stuck_ms", DEFAULT_STUCK_MS, 100, 600_000)
    if stuck <= lockout:
        raise ConfigError(None,
            "hardware.stuck_ms",
            f"must be longer than bounce_lockout_ms ({lockout:g}), got {stuck:g}",
        )
    max_presses = _count(raw, "max_presses_per_s", DEFAULT_MAX_PRESSES_PER_S, 1,
                         MOST_PRESSES_PER_S)
    max_edges = _count(raw, "max_edges_per_s", DEFAULT_MAX_EDGES_PER_S, 2, 1_000_000)
    if max_edges < 2 * max_presses:
        raise ConfigError(None, "hardware.max_edges_per_s",
                          f"must be at least twice max_presses_per_s ({max_presses}): a press "
                          f"is two edges, got {max_edges}")
    workdir = raw.get("lgpio_workdir")
    if workdir is not None and (not isinstance(workdir, str) or not os.path.isabs(workdir)):
        raise ConfigError(None,
            "hardware.lgpio_workdir", f"must be an absolute directory path, got {shown(workdir)}"
        )
    chip = raw.get("gpiochip")
    if chip is not None and (isinstance(chip, bool) or not isinstance(chip, int) or chip < 0):
        raise ConfigError(None, "hardware.gpiochip",
                          f"must be a gpiochip number >= 0, got {shown(chip)}")

    seats_raw = doc.get("seats")
    if seats_raw is None:
        raise ConfigError(None, "seats",
                          "missing: add one [[seats]] entry per seat with its slap pin")
    if not isinstance(seats_raw, list) or not all(isinstance(s, dict) for s in seats_raw):
        raise ConfigError(None, "seats", "must be an array of tables: [[seats]]")
    if not 1 <= len(seats_raw) <= MAX_SEATS:
        raise ConfigError(None, "seats", f"must list 1..{MAX_SEATS} seats, got {len(seats_raw)}")

    table = doc.get("table")
    table_seats = table.get("seats") if isinstance(table, dict) else None
    # More pads than players: the players take the first pads (a game of fewer seats started
    # from the operator page at a table built for more).
    if isinstance(table_seats, list) and len(table_seats) > len(seats_raw):
        raise ConfigError(None,
            "seats",
            f"{len(seats_raw)} [[seats]] entries for the {len(table_seats)} seats of table.seats",
        )

    used: dict[int, str] = {}
    seats: list[SeatPins] = []
    for i, entry in enumerate(seats_raw):
        for key in entry:
            if key not in _SEAT_KEYS:
                raise ConfigError(None,
                    f"seats[{i}].{key}", f"unknown key (known: {', '.join(sorted(_SEAT_KEYS))})"
                )
        default = f"Seat {i}"
        if (isinstance(table_seats, list) and i < len(table_seats)
                and isinstance(table_seats[i], str)):
            default = table_seats[i]
        name = entry.get("name", default)
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(None, f"seats[{i}].name",
                              f"must be a non-empty text, got {shown(name)}")
        if "slap" not in entry:
            raise ConfigError(None, f"seats[{i}].slap",
                              "missing: every seat needs a slap button pin")
        pins: dict[str, int | None] = {}
        for role in ("slap", "call", "led"):
            key = f"seats[{i}].{role}"
            if role not in entry:
                pins[role] = None
                continue
            bcm = parse_pin(entry[role], key)
            if bcm in used:
                raise ConfigError(None, key, f"GPIO{bcm} is already used by {used[bcm]}")
            if role != "led" and pull_up is False and bcm in FIXED_PULL_UP:
                raise ConfigError(None,
                    key, f"GPIO{bcm} has a fixed pull-up on the board and cannot be pulled down"
                )
            used[bcm] = key
            pins[role] = bcm
        slap = pins["slap"]
        assert slap is not None
        seats.append(SeatPins(i, name.strip(), slap, pins["call"], pins["led"]))

    return HardwareConfig(
        seats=tuple(seats),
        pin_factory=factory,
        pull_up=pull_up,
        active_state=active,
        bounce_lockout_ms=lockout,
        stuck_ms=stuck,
        led_active_high=_bool(raw, "led_active_high", True),
        max_presses_per_s=max_presses,
        max_edges_per_s=max_edges,
        lgpio_workdir=workdir,
        gpiochip=chip,
        delivery_bound_ms=_number(raw, "delivery_bound_ms", DEFAULT_DELIVERY_BOUND_MS, 0.05, 100),
    )


def loads_config(text: str) -> HardwareConfig:
    """Read a pin map from TOML text; a TOML syntax error becomes a :class:`ConfigError`."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(None, "<toml>", str(exc)) from None
    return parse_config(doc)


def load_config(path: str | os.PathLike[str]) -> HardwareConfig:
    """Read the pin map from the table's TOML configuration file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(None, str(p), f"cannot read: {exc.strerror or exc}") from None
    try:
        return loads_config(text)
    except ConfigError as exc:
        raise ConfigError(None, exc.key, f"{exc.reason} (in {p})") from None
