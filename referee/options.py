"""Table options (*bordsval*) per game, by the exact names of docs/rules.md, validated."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from referee.errors import OptionError, shown

__all__ = [
    "POINTS_OUT_AT",
    "SWITCH_WORDS",
    "BankaOptions",
    "BeggarOptions",
    "OptionError",
    "TableOptions",
    "VandattaOptions",
    "options_from",
    "options_to_json",
    "parse_option_assignment",
]


@dataclass(frozen=True)
class BeggarOptions:
    """Beggar My Neighbour: ``time_limit_s`` (seconds, default none)."""

    time_limit_s: float | None = None


#: Field metadata of an option added after journals were first written: it is written into a
#: journal header only when it differs from its default, so a journal of a table that does not
#: use it reads (and is written) byte for byte as before.
LATER = {"omit_default": True}


@dataclass(frozen=True)
class BankaOptions:
    """Banka bäver options (docs/rules.md §2). ``slap_resolution_us`` (this referee's addition,
    default 0: exact): slaps less than this many microseconds after the first slap of a race are
    one instant, judged by the clockwise tie rule (docs/timing.md)."""

    false_slap_penalty: str = "none"
    collect_grace_ms: int = 1500
    slap_back_in: bool = False
    bottom_match: bool = True
    slap_resolution_us: int = field(default=0, metadata=LATER)


@dataclass(frozen=True)
class VandattaOptions:
    """Vändåtta options (docs/rules.md §3): variants, reshuffle and the points game."""

    reshuffle_discards: bool = True
    no_special_on_special: bool = False
    no_special_finish: bool = False
    lappen: bool = False
    points_game: bool = False


#: The points game (docs/rules.md §3): a seat whose total reaches this many points is out of the
#: game.
POINTS_OUT_AT = 100

TableOptions = BeggarOptions | BankaOptions | VandattaOptions
_Options = TypeVar("_Options", bound=TableOptions)

_CHOICES = {"false_slap_penalty": ("none", "burn")}


def _check(key: str, kind: str, value: Any) -> Any:
    if key in _CHOICES:
        if value not in _CHOICES[key]:
            raise OptionError(key, f"must be one of {', '.join(_CHOICES[key])}, got {shown(value)}")
        return value
    if "bool" in kind:
        if not isinstance(value, bool):
            raise OptionError(key, f"must be true or false, got {shown(value)}")
        return value
    if key in ("collect_grace_ms", "slap_resolution_us"):
        unit = "milliseconds" if key.endswith("_ms") else "microseconds"
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise OptionError(key, f"must be a whole number of {unit} >= 0, "
                              f"got {shown(value)}")
        return value
    if key == "time_limit_s":
        if value is None or value == "none":
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise OptionError(key, f"must be a number of seconds > 0 or none, got {shown(value)}")
        return value
    return value  # pragma: no cover - every option is covered above


def options_from(cls: type[_Options], game: str, raw: Any) -> _Options:
    """Validate ``raw`` as options of class ``cls`` (of ``game``, named in errors): missing keys
    take defaults; unknown keys are errors. :func:`referee.games.parse_options` picks ``cls``."""
    raw = raw or {}
    if not isinstance(raw, dict):
        raise OptionError("options", "must be an object of option names to values")
    known = {f.name: str(f.type) for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise OptionError(
                key, f"unknown for {game} (known: {', '.join(known) or 'none'})"
            )
        values[key] = _check(key, known[key], value)
    return cls(**values)


def options_to_json(options: TableOptions) -> dict[str, Any]:
    """Every option with its value, defaults included (but for an option added later, see
    :data:`LATER`, which is left out at its default)."""
    return {f.name: getattr(options, f.name) for f in fields(options)
            if not (f.metadata.get("omit_default") and getattr(options, f.name) == f.default)}


#: The words a command line takes for a switch (any case).
SWITCH_WORDS = {"true": True, "yes": True, "on": True, "1": True,
                "false": False, "no": False, "off": False, "0": False}


def parse_option_assignment(
    text: str, options: type[TableOptions] | None = None
) -> tuple[str, Any]:
    """Read ``key=value`` from a command line.

    Given the game's ``options`` class, the value is read as the option's type: a switch takes
    ``true``/``false``, ``yes``/``no``, ``on``/``off`` or ``1``/``0`` (any case, see
    :data:`SWITCH_WORDS`), a text option keeps its text (``false_slap_penalty=none``), others
    are read as below. Without it (or for a key the class lacks, which
    :func:`options_from` then names): ``true``/``yes``/``on``, ``false``/``no``/``off``,
    numbers, ``none`` or text."""
    if "=" not in text:
        raise OptionError(text, "expected key=value, e.g. false_slap_penalty=burn")
    key, value = text.split("=", 1)
    key, value = key.strip(), value.strip()
    low = value.lower()
    kind = next((str(f.type) for f in fields(options) if f.name == key), None) if options else None
    if kind == "bool":
        if low not in SWITCH_WORDS:
            raise OptionError(key, "must be true or false (on the command line also yes/no, "
                              f"on/off or 1/0), got {shown(value)}")
        return key, SWITCH_WORDS[low]
    if kind == "str":
        return key, value
    parsed: Any
    if low in ("true", "yes", "on"):
        parsed = True
    elif low in ("false", "no", "off"):
        parsed = False
    elif low in ("none", "null"):
        parsed = None
    else:
        try:
            parsed = int(value)
        except ValueError:
            try:
                parsed = float(value)
            except ValueError:
                parsed = value
    return key, parsed
