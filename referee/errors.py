"""The error family: every error the referee raises on purpose is a :class:`RefereeError`.

Each class also inherits the built-in it stands for, so ``except ValueError`` still catches a
bad card or a malformed journal line, and ``except RefereeError`` catches all of them. Nothing is
flattened on the way up: a journal line with a bad card is a :class:`JournalError` whose
``__cause__`` is the :class:`InputError` and, below it, the :class:`CardError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.journal import Journal

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
]


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
    ``journal`` holds what was read before that line, if anything."""

    def __init__(self, line: int, reason: str, journal: Journal | None = None) -> None:
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
    say which file, which setting and why."""

    def __init__(self, path: str | None, key: str, reason: str) -> None:
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{key}: {reason}")
        self.path = path
        self.key = key
        self.reason = reason
