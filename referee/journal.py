"""The table journal (JSON Lines, JOURNAL.md): header, inputs, reading, writing.

Reading is strict: the first malformed line stops the read with its line number and the
reason, and everything read before it is kept (``JournalError.journal``). A torn last line (a
power cut in the middle of a write, so no final newline) may be tolerated on request, which is
how the service resumes after a crash.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.deal import DealError, deal_from_json, deal_to_json, seeded_deal
from referee.engine import SEAT_LIMITS, Deal
from referee.model import GAMES, Input, InputError
from referee.options import OptionError, TableOptions, options_to_json, parse_options

JOURNAL_VERSION = 1
_EMPTY = "the journal is empty: the first line must be the header"


class JournalError(ValueError):
    """A journal that cannot be read: ``line`` (1-based) and ``reason`` say where and why."""

    def __init__(self, line: int, reason: str, journal: Journal | None = None) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason
        self.journal = journal


@dataclass(frozen=True)
class JournalHeader:
    """The first journal line: which game, who sits where, the table options and the deal."""

    game: str
    seats: tuple[str, ...]
    dealer: int = 0
    options: TableOptions | None = None
    seed: int | None = None
    deal: Deal | None = None

    def __post_init__(self) -> None:
        if self.options is None:
            object.__setattr__(self, "options", parse_options(self.game, {}))

    @property
    def n_seats(self) -> int:
        """How many seats the table has."""
        return len(self.seats)

    @property
    def observed(self) -> bool:
        """True when the referee learns the cards only as they are laid."""
        return self.deal is None and self.seed is None

    def resolved(self) -> JournalHeader:
        """The same header with a seeded deal made explicit (what the referee writes)."""
        if self.deal is None and self.seed is not None:
            deal = seeded_deal(self.game, self.n_seats, self.dealer, self.seed)
            return JournalHeader(self.game, self.seats, self.dealer, self.options, self.seed, deal)
        return self

    def to_json(self) -> dict[str, Any]:
        """The header line as a dict."""
        return {
            "journal": JOURNAL_VERSION,
            "game": self.game,
            "seats": list(self.seats),
            "dealer": self.dealer,
            "options": options_to_json(self.options),  # type: ignore[arg-type]
            "seed": self.seed,
            "deal": None if self.deal is None else deal_to_json(self.deal),
        }

    @classmethod
    def from_json(cls, obj: Any) -> JournalHeader:
        """Read and validate a header; raises ValueError naming the offending key."""
        if not isinstance(obj, dict):
            raise ValueError("the header must be a JSON object")
        if obj.get("journal") != JOURNAL_VERSION:
            raise ValueError(
                f"not a table journal of version {JOURNAL_VERSION} "
                f"('journal' is {obj.get('journal')!r})"
            )
        game = obj.get("game")
        if game not in GAMES:
            raise ValueError(f"'game' must be one of {', '.join(GAMES)}, got {game!r}")
        seats = obj.get("seats")
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise ValueError("'seats' must be a list of names")
        lo, hi = SEAT_LIMITS[game]
        if not lo <= len(seats) <= hi:
            raise ValueError(f"{game} takes {lo} to {hi} seats, the header has {len(seats)}")
        dealer = obj.get("dealer", 0)
        if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < len(seats):
            raise ValueError(f"'dealer' must be a seat number 0..{len(seats) - 1}, got {dealer!r}")
        try:
            options = parse_options(game, obj.get("options"))
        except OptionError as exc:
            raise ValueError(str(exc)) from None
        seed = obj.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"'seed' must be an integer or null, got {seed!r}")
        deal = None
        if obj.get("deal") is not None:
            try:
                deal = deal_from_json(game, len(seats), obj["deal"])
            except DealError as exc:
                raise ValueError(str(exc)) from None
        return cls(game, tuple(seats), dealer, options, seed, deal)


@dataclass
class Journal:
    """A header and its inputs in file order (``lines`` gives each input's line number)."""

    header: JournalHeader
    inputs: list[Input] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    torn_tail: str | None = None


def parse_lines(lines: Iterable[str], *, tolerate_torn_tail: bool = False) -> Journal:
    """Read journal text lines; raises :class:`JournalError` at the first malformed line."""
    it: Iterator[tuple[int, str]] = enumerate(lines, start=1)
    journal: Journal | None = None
    pending: tuple[int, str] | None = None
    for number, line in it:
        if pending is not None:
            _take(journal, *pending)
        pending = (number, line)
        if journal is None:
            pending = None
            if not line.strip():
                raise JournalError(number, _EMPTY)
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JournalError(number, f"the header is not valid JSON ({exc.msg})") from None
            try:
                journal = Journal(JournalHeader.from_json(obj))
            except ValueError as exc:
                raise JournalError(number, str(exc)) from None
    if journal is None:
        raise JournalError(1, _EMPTY)
    if pending is not None:
        number, line = pending
        try:
            _take(journal, number, line)
        except JournalError:
            if tolerate_torn_tail and not line.endswith("\n"):
                journal.torn_tail = line
            else:
                raise
    return journal


def _take(journal: Journal | None, number: int, line: str) -> None:
    assert journal is not None
    if not line.strip():
        return
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise JournalError(number, f"not valid JSON ({exc.msg})", journal) from None
    try:
        inp = Input.from_json(obj, journal.header.n_seats)
    except InputError as exc:
        raise JournalError(number, str(exc), journal) from None
    journal.inputs.append(inp)
    journal.lines.append(number)


def read_journal(path: str | os.PathLike[str], *, tolerate_torn_tail: bool = False) -> Journal:
    """Read a journal file (see :func:`parse_lines`)."""
    # Bytes that are not UTF-8 become U+FFFD: such a line is then reported as not valid JSON
    # with its number, like any other damaged line, instead of stopping the whole read.
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return parse_lines(fh, tolerate_torn_tail=tolerate_torn_tail)


class JournalWriter:
    """Appends inputs to a journal file, flushed (and with ``fsync``, synced) line by line."""

    def __init__(self, path: str | os.PathLike[str], header: JournalHeader | None = None,
                 *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        if self.path.exists() and self.path.stat().st_size > 0:
            self._cut_torn_tail()
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and header is None:
            raise ValueError(f"{self.path}: a new journal needs a header")
        self._fh = open(self.path, "a", encoding="utf-8")
        if not exists:
            assert header is not None
            self._write(header.to_json())

    def _cut_torn_tail(self) -> None:
        """Move a torn last line (no newline: the write was cut) aside to ``<path>.torn``."""
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data.endswith(b"\n"):
                return
            cut = data.rfind(b"\n") + 1
            with open(self.path.with_name(self.path.name + ".torn"), "ab") as side:
                side.write(data[cut:] + b"\n")
            fh.truncate(cut)

    def _write(self, obj: dict[str, Any]) -> None:
        self._fh.write(json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n")
        self._fh.flush()
        if self.fsync:
            os.fsync(self._fh.fileno())

    def append(self, inp: Input) -> None:
        """Write one input and make it durable before returning."""
        self._write(inp.to_json())

    def close(self) -> None:
        """Close the file."""
        self._fh.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dump_journal(header: JournalHeader, inputs: Iterable[Input]) -> str:
    """The whole journal as text."""
    lines = [json.dumps(header.to_json(), ensure_ascii=False)]
    lines += [json.dumps(i.to_json(), ensure_ascii=False) for i in inputs]
    return "\n".join(lines) + "\n"
