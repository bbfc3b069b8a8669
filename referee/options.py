"""Table options (*bordsval*) per game, by the exact names of docs/rules.md, validated."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from referee.errors import OptionError, shown

__all__ = [
    "POINTS_OUT_AT",
    "OptionSpec",
    "option_specs",
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


def _option(default: Any, help: str, **more: Any) -> Any:  # noqa: A002 (the field's word)
    """A table option's field: its default and its one-line explanation (``help``, the same
    words as the option's row in docs/rules.md), and what else the registry says of it."""
    return field(default=default, metadata={"help": help, **more})


@dataclass(frozen=True)
class BeggarOptions:
    """Beggar My Neighbour: ``time_limit_s`` (seconds, default none)."""

    time_limit_s: float | None = _option(
        None, "ends the game when the time is up; the most cards win (§1.8)")


#: Field metadata of an option added after journals were first written: it is written into a
#: journal header only when it differs from its default, so a journal of a table that does not
#: use it reads (and is written) byte for byte as before.
LATER = {"omit_default": True}


@dataclass(frozen=True)
class BankaOptions:
    """Banka bäver options (docs/rules.md §2). ``slap_resolution_us`` (this referee's addition,
    default 0: exact): slaps less than this many microseconds after the first slap of a race are
    one instant, judged by the clockwise tie rule (docs/timing.md)."""

    false_slap_penalty: str = _option(
        "none", "`burn`: a false slapper puts its top card face up under the pile")
    collect_grace_ms: int = _option(
        1500, "how long a won challenge's claim stays open to a winning slap")
    slap_back_in: bool = _option(
        False, "a seat with no cards may slap and is brought back in by a valid slap; nobody "
        "is out")
    bottom_match: bool = _option(
        True, "`false` turns the bottom-match slap off; only doubles win")
    slap_resolution_us: int = _option(
        0, "slaps less than this far after the first valid slap of a race count as the same "
        "instant (0: exact stamps)", **LATER)


@dataclass(frozen=True)
class VandattaOptions:
    """Vändåtta options (docs/rules.md §3): variants, reshuffle and the points game."""

    reshuffle_discards: bool = _option(
        True, "an empty stock is refilled from the discard pile under its top card")
    no_special_on_special: bool = _option(
        False, "no eight or ace may be laid on an eight or an ace")
    no_special_finish: bool = _option(
        False, "a seat may not go out on an eight or an ace; it draws up to three cards "
        "instead")
    lappen: bool = _option(
        False, "a seat must call \"lappen\" before it may go out; otherwise three penalty "
        "draws")
    points_game: bool = _option(
        False, "play rounds and score hands; 100 points puts a seat out; the last one under "
        "100 wins")


#: The points game (docs/rules.md §3): a seat whose total reaches this many points is out of the
#: game.
POINTS_OUT_AT = 100

TableOptions = BeggarOptions | BankaOptions | VandattaOptions
_Options = TypeVar("_Options", bound=TableOptions)

_CHOICES = {"false_slap_penalty": ("none", "burn")}
#: The largest value of each number option: far past any table's use, and small enough that
#: every engine's arithmetic on it stays exact (a time limit of 1e400 s was infinity).
_MAXIMA: dict[str, int] = {"collect_grace_ms": 60_000, "slap_resolution_us": 1_000_000,
                           "time_limit_s": 86_400}
#: The least time limit: 1 ns, the table clock's step (a shorter one would be 0 ns, none at all).
_LEAST_LIMIT_S = 1e-9
#: The time limit's allowed values in words (the refusal and the registry say the same).
_LIMIT_WORDS = f"a number of seconds from 0.000000001 (1 ns) to {_MAXIMA['time_limit_s']}, or none"


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
        if (not isinstance(value, int) or isinstance(value, bool) or value < 0
                or value > _MAXIMA[key]):
            raise OptionError(key, f"must be a whole number of {unit} from 0 to "
                              f"{_MAXIMA[key]}, got {shown(value)}")
        return value
    if key == "time_limit_s":
        if value is None or value == "none":
            return None
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not _LEAST_LIMIT_S <= value <= _MAXIMA[key]):  # NaN fails it too
            raise OptionError(key, f"must be {_LIMIT_WORDS}, got {shown(value)}")
        return value
    return value  # pragma: no cover - every option is covered above


@dataclass(frozen=True)
class OptionSpec:
    """What the registry says of one table option, for a form that offers it (the operator
    page builds its fields from these, so a new option appears there without page work).

    ``kind``: ``switch`` (true/false), ``choice`` (one of ``choices``), ``whole`` (a whole
    number of ``unit`` >= ``minimum``) or ``seconds`` (a number of seconds of at least 1 ns,
    or none when ``optional``); ``allowed``: the allowed values in words, as docs/rules.md says
    them."""

    name: str
    kind: str
    default: Any
    help: str  # noqa: A003 (the option's own word)
    allowed: str
    choices: tuple[str, ...] = ()
    unit: str | None = None
    minimum: int | float | None = None
    optional: bool = False
    maximum: int | float | None = None

    def to_json(self) -> dict[str, Any]:
        """The spec as a JSON object (``choices`` a list)."""
        return {"name": self.name, "kind": self.kind, "default": self.default,
                "help": self.help, "allowed": self.allowed, "choices": list(self.choices),
                "unit": self.unit, "minimum": self.minimum, "maximum": self.maximum,
                "optional": self.optional}


def option_specs(cls: type[TableOptions]) -> list[OptionSpec]:
    """Every option of a game's options class, in the order docs/rules.md lists them."""
    specs = []
    for f in fields(cls):
        kind, help_ = str(f.type), str(f.metadata.get("help", ""))
        if f.name in _CHOICES:
            choices = _CHOICES[f.name]
            specs.append(OptionSpec(f.name, "choice", f.default, help_, ", ".join(choices),
                                    choices=choices))
        elif "bool" in kind:
            specs.append(OptionSpec(f.name, "switch", f.default, help_, "true, false"))
        elif f.name in ("collect_grace_ms", "slap_resolution_us"):
            unit = "milliseconds" if f.name.endswith("_ms") else "microseconds"
            specs.append(OptionSpec(f.name, "whole", f.default, help_,
                                    f"a whole number of {unit} from 0 to {_MAXIMA[f.name]}",
                                    unit=unit, minimum=0, maximum=_MAXIMA[f.name]))
        else:  # time_limit_s
            specs.append(OptionSpec(f.name, "seconds", f.default, help_, _LIMIT_WORDS,
                                    unit="seconds", minimum=_LEAST_LIMIT_S, optional=True,
                                    maximum=_MAXIMA[f.name]))
    return specs


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
