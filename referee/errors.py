"""The error family: every error the referee raises on purpose is a :class:`RefereeError`.

Each class also inherits the built-in it stands for, so ``except ValueError`` still catches a
bad card or a malformed journal line, and ``except RefereeError`` catches all of them. Nothing is
flattened on the way up: a journal line with a bad card is a :class:`JournalError` whose
``__cause__`` is the :class:`InputError` and, below it, the :class:`CardError`.

The family spans the three floors: the edges' errors (``hardware``: a GPIO chip that cannot be
opened, the camera's; ``firmware_bridge``: a bad payload, a deck file, no clock sync yet) and
the table program's (``cardtable.errors``, the displays' unreadable messages) are defined
where they are raised, each a :class:`RefereeError` and its built-in too
(``tests/test_errors_family.py`` holds every exception class of the project to it). This
module defines the rules library's, and imports no other.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "CardError",
    "ConfigError",
    "DealError",
    "GameError",
    "InputError",
    "JournalError",
    "JournalExistsError",
    "JournalWriteError",
    "OptionError",
    "RefereeError",
    "shown",
    "visible",
]

#: How much of a value an error message shows.
_SHOWN_MAX = 60
#: What no name may hold, nor a message print from a file: C0 and C1 controls, DEL, the line
#: and paragraph separators, and the marks that embed, override or isolate text's direction,
#: or mark it (LRM, RLM, ALM).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                    "\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with every character :data:`UNSAFE` holds shown as U+FFFD: for text from
    outside (a broker, a file, a file's name) that is printed or drawn."""
    return UNSAFE.sub("\ufffd", text)


def shown(value: Any) -> str:
    """``value`` as a journal (JSON) or a configuration (TOML) spells it, for a message a person
    reads: ``true``, ``null``, ``"text"``, ``[1, 2]``, never Python's ``True``, ``None`` or
    ``'text'``; cut short past 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not a JSON value (a TOML date, say): as it prints
        text = str(value)
    return text if len(text) <= _SHOWN_MAX else text[:_SHOWN_MAX - 1] + "…"


class RefereeError(Exception):
    """The root of the family: an error the referee reports in plain words."""


class CardError(RefereeError, ValueError):
    """Text that is not a card (``"QH"``, ``"10♠"`` and ``"Q hearts"`` are cards)."""


class GameError(RefereeError, ValueError):
    """An unknown game, a seat count the game does not take, or a dealer who is not a seat."""


class OptionError(RefereeError, ValueError):
    """An unknown table option or a bad value; ``key`` names the option."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"table option {key!r}: {reason}")
        self.key = key
        self.reason = reason


class DealError(RefereeError, ValueError):
    """A deal that does not fit the game (wrong counts, a card twice, an unreadable card)."""


class InputError(RefereeError, ValueError):
    """A journal input that cannot be read (bad field, unknown act, unreadable card)."""


class JournalError(RefereeError, ValueError):
    """A journal that cannot be read: ``line`` (1-based) and ``reason`` say where and why;
    ``journal`` holds what was read before that line, if anything (a
    :class:`referee.journal.Journal`; :func:`referee.journal.read_before` gives it typed —
    this module imports no other, so the family has no import cycle)."""

    def __init__(self, line: int, reason: str, journal: object | None = None) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason
        self.journal = journal


class JournalExistsError(RefereeError, FileExistsError):
    """A new journal was to be written where a file already is (a journal holds one game)."""


class JournalWriteError(RefereeError, OSError):
    """The journal could not be written (disk full, read-only or gone): no input may be judged
    until it can be."""


class ConfigError(RefereeError, ValueError):
    """A table configuration that cannot be used: ``path`` (if known), ``key`` and ``reason``
    say which file, which setting and why; ``key`` is None for the file as a whole (it cannot
    be read, or it is not TOML)."""

    def __init__(self, path: str | None, key: str | None, reason: str) -> None:
        where = "".join(f"{part}: " for part in (path, key) if part)
        # a key is the file's own, escapes and all (``"\u001b[2J" = 1``): shown, not obeyed
        super().__init__(visible(f"{where}{reason}"))
        self.path = path
        self.key = key
        self.reason = reason
