"""The table journal (JSON Lines, docs/journal.md): header, inputs, reading, writing.

Reading is strict: the first malformed line stops the read with its line number and the
reason, and everything read before it is kept (``JournalError.journal``).

A journal line counts once its newline is on disk: the writer writes each line with its newline
and syncs it, and the table judges an input only after that. So a last line without its newline
was being written when the power went and was never judged, whatever its text: recovery (the
reader with ``tolerate_torn_tail``) and the writer that continues the file both cut it off by
the one rule of :func:`durable_length`, and so agree on which inputs the game holds. (Read
strictly, as ``referee replay`` does, a file written by hand may end without a newline.)

A person's path never receives a second game: :meth:`JournalWriter.create` refuses a file that
exists (unless told to replace it); only recovery continues a journal
(:meth:`JournalWriter.resume`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.deal import Deal, deal_from_json, deal_to_json
from referee.errors import (
    GameError,
    InputError,
    JournalError,
    JournalExistsError,
    JournalWriteError,
    RefereeError,
    shown,
)
from referee.games import game as game_named
from referee.games import games
from referee.model import Input, seats_problem
from referee.options import TableOptions, options_to_json

__all__ = [
    "JOURNAL_VERSION",
    "Journal",
    "JournalError",
    "JournalHeader",
    "JournalWriter",
    "dump_journal",
    "parse_lines",
    "read_before",
    "read_journal",
]

JOURNAL_VERSION = 1
_EMPTY = "the journal is empty: the first line must be the header"
#: The longest journal line read: a header with a whole deal, or an input with a reshuffled
#: stock, is a few kilobytes at most. A longer line is damage (read no further into memory).
MAX_LINE_BYTES = 64 * 1024


class _BadLine(str):
    """A line that cannot be a journal line whatever it holds (too long, not UTF-8): its text
    is only its newline, if it had one (for the torn-tail rule), and ``reason`` says why."""

    reason: str

    def __new__(cls, reason: str, newline: bool) -> _BadLine:
        line = super().__new__(cls, "\n" if newline else "")
        line.reason = reason
        return line


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
            object.__setattr__(self, "options", game_named(self.game).parse_options({}))

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
            deal = game_named(self.game).seeded_deal(self.n_seats, self.dealer, self.seed)
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
        """Read and validate a header; raises a :class:`referee.errors.RefereeError` (an
        :class:`InputError`, or the :class:`GameError`, :class:`OptionError` or
        :class:`DealError` of the part that is wrong) naming the offending key."""
        if not isinstance(obj, dict):
            raise InputError("the header must be a JSON object")
        version = obj.get("journal")
        if type(version) is not int or version != JOURNAL_VERSION:  # not true, nor 1.0
            raise InputError(
                f"this is not a table journal of version {JOURNAL_VERSION} "
                f"(its 'journal' field is {_shown(obj, 'journal')})"
            )
        name = obj.get("game")
        if not isinstance(name, str) or name not in games:
            raise GameError(f"'game' must be one of {', '.join(games)}, got {shown(name)}")
        game = games[name]
        seats = obj.get("seats")
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise InputError("'seats' must be a list of names")
        if (wrong := seats_problem(seats)) is not None:
            raise InputError(f"seat {wrong[0]}'s name {wrong[1]}")
        if len(seats) not in game.seat_range:
            raise GameError(f"{name} takes {game.min_seats} to {game.max_seats} seats, "
                            f"the header has {len(seats)}")
        dealer = obj.get("dealer", 0)
        if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < len(seats):
            raise GameError(f"'dealer' must be a seat number 0..{len(seats) - 1}, "
                            f"got {shown(dealer)}")
        options = game.parse_options(obj.get("options"))
        seed = obj.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InputError(f"'seed' must be an integer or null, got {shown(seed)}")
        deal = None
        if obj.get("deal") is not None:
            deal = deal_from_json(game.deal_kind, len(seats), obj["deal"])
            # the game's own rules for a deal (every seat dealt a card, …) are checked as its
            # engine is made: made here once, so that a header it refuses is refused as read
            game.new_engine(len(seats), dealer, options, deal)
        return cls(name, tuple(seats), dealer, options, seed, deal)


@dataclass
class Journal:
    """A header and its inputs in file order (``lines`` gives each input's line number)."""

    header: JournalHeader
    inputs: list[Input] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    torn_tail: str | None = None


def read_before(exc: JournalError) -> Journal | None:
    """What a journal held before the line that ``exc`` is about, if anything."""
    return exc.journal if isinstance(exc.journal, Journal) else None


def durable_length(data: bytes) -> int:
    """How many bytes of a journal file hold whole lines: up to and including the last newline.
    What follows was cut by a crash in the middle of a write (see the module docstring)."""
    return data.rfind(b"\n") + 1


def parse_lines(lines: Iterable[str], *, tolerate_torn_tail: bool = False) -> Journal:
    """Read journal text lines; raises :class:`JournalError` at the first malformed line.
    With ``tolerate_torn_tail`` a last line without its newline is never an input: it is kept
    in ``Journal.torn_tail`` (see :func:`durable_length`)."""
    it: Iterator[tuple[int, str]] = enumerate(lines, start=1)
    journal: Journal | None = None
    pending: tuple[int, str] | None = None
    seen: dict[str, int] = {}  # each input line's text: the first line that had it
    for number, line in it:
        if pending is not None:
            _take(journal, *pending, seen)
        pending = (number, line)
        if journal is None:
            pending = None
            if isinstance(line, _BadLine):
                raise JournalError(number, line.reason)
            if not line.strip():
                raise JournalError(number, _EMPTY)
            if tolerate_torn_tail and not line.endswith("\n"):
                # the writer cuts the file back to its last newline, here none: the header
                # would go and the game's inputs follow no header (the game was then lost)
                raise JournalError(number, "the header has no newline: it was cut off while "
                                   "it was written")
            try:
                obj = _loads(line)
            except ValueError as exc:
                raise JournalError(number, f"the header is not valid JSON ({exc})") from None
            try:
                journal = Journal(JournalHeader.from_json(obj))
            except RefereeError as exc:
                raise JournalError(number, str(exc)) from exc
    if journal is None:
        raise JournalError(1, _EMPTY)
    if pending is not None:
        number, line = pending
        if tolerate_torn_tail and not line.endswith("\n"):
            journal.torn_tail = line
        else:
            _take(journal, number, line, seen)
    return journal


def _loads(line: str) -> Any:
    """A line's JSON value; ValueError with why it is none. Within the line limit, JSON can
    still ask for more than Python reads: values nested thousands deep (RecursionError) and
    integers of more than 4 300 digits (ValueError, with advice that is not ours to give)."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(exc.msg) from None
    except RecursionError:
        raise ValueError("values nested too deeply") from None
    except ValueError:
        raise ValueError("a number too long to read") from None


def _take(journal: Journal | None, number: int, line: str, seen: dict[str, int]) -> None:
    assert journal is not None
    if isinstance(line, _BadLine):
        raise JournalError(number, line.reason, journal)
    if len(line) > MAX_LINE_BYTES:
        raise JournalError(number, f"is {len(line)} characters long; a journal line is at most "
                           f"{MAX_LINE_BYTES} bytes", journal)
    text = line.strip()
    if not text:
        return
    # An input is stamped to the nanosecond: the very same line twice was written twice.
    first = seen.setdefault(text, number)
    if first != number:
        raise JournalError(number, f"repeats line {first} word for word (a line written "
                           "twice?)", journal)
    try:
        obj = _loads(line)
    except ValueError as exc:
        raise JournalError(number, f"not valid JSON ({exc})", journal) from None
    try:
        inp = Input.from_json(obj, journal.header.n_seats)
    except InputError as exc:
        raise JournalError(number, str(exc), journal) from exc
    journal.inputs.append(inp)
    journal.lines.append(number)


def read_journal(path: str | os.PathLike[str], *, tolerate_torn_tail: bool = False) -> Journal:
    """Read a journal file (see :func:`parse_lines`). A line that is not UTF-8 text, or longer
    than :data:`MAX_LINE_BYTES`, is a malformed line like any other (its number and why),
    read no further than that limit into memory. A path that is not a regular file (a device,
    a pipe: ``/dev/zero`` never ends) is an :class:`OSError` saying so, before it is opened."""
    _regular(Path(path))
    with open(path, "rb") as fh:
        return parse_lines(_file_lines(fh), tolerate_torn_tail=tolerate_torn_tail)


def _regular(path: Path, *, missing_ok: bool = False) -> None:
    """Raise :class:`OSError` (EINVAL, in words) if ``path`` is there and is not a regular file
    or a folder (which open() names itself): a device or a pipe is never a journal."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if missing_ok:
            return
        raise
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise OSError(errno.EINVAL, "not a regular file (a device or a pipe): not a journal",
                      str(path))


def _file_lines(fh: Any) -> Iterator[str]:
    """The lines of a binary file as text, each a :class:`_BadLine` where it cannot be one."""
    while True:
        raw: bytes = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            size = len(raw)
            while not raw.endswith(b"\n"):  # skip the rest of it, a megabyte at a time
                raw = fh.readline(1 << 20)
                if not raw:
                    break
                size += len(raw)
            yield _BadLine(f"is {size} bytes long; a journal line is at most {MAX_LINE_BYTES} "
                           "bytes", raw.endswith(b"\n"))
            continue
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield _BadLine(f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte "
                           f"{exc.start + 1} of the line)", raw.endswith(b"\n"))


def _open(path: Path) -> int:
    """The file descriptor the writer appends to a journal with (``O_APPEND``: every write at
    the end)."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)


def _exists(path: Path) -> JournalExistsError:
    return JournalExistsError(f"{path} already exists: a journal holds one game, so it is not "
                              "written over")


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode()


def _write_whole(fd: int, data: bytes, *, fsync: bool, path: Path) -> None:
    """Write all of ``data`` (and sync it); any failure is a :class:`JournalWriteError`."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        raise JournalWriteError(
            f"cannot write the journal {path}: {exc.strerror or exc}") from exc


def _create(path: Path, header: bytes, *, fsync: bool, replace: bool) -> int:
    """A new journal whose header is on disk before its name is: the header is written to a
    file beside it that is then linked (or, with ``replace``, renamed) to ``path``, so a stop
    or a power cut never leaves a journal without its header. The descriptor appends to it."""
    if replace:  # a journal is written over a journal, never over a device or a pipe
        _regular(path, missing_ok=True)
    spare = path.with_name(f".{path.name}.{os.getpid()}.new")
    fd = os.open(spare, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                 0o644)
    try:
        _write_whole(fd, header, fsync=fsync, path=path)
        if replace:
            os.replace(spare, path)
        else:
            try:
                os.link(spare, path)  # fails, unlike a rename, where a journal is already
            except FileExistsError as exc:
                raise _exists(path) from exc
            except OSError:  # a file system without hard links (FAT): check, then rename
                if path.exists():
                    raise _exists(path) from None
                os.rename(spare, path)
        if fsync:
            _sync_folder(path.parent)
    except BaseException:
        os.close(fd)
        raise
    finally:
        with contextlib.suppress(OSError):
            spare.unlink()
    return fd


def _sync_folder(folder: Path) -> None:
    """Make a new name in ``folder`` durable (where the system lets a folder be synced)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class JournalWriter:
    """Appends inputs to a journal file, each line written whole and (with ``fsync``) synced
    before :meth:`append` returns.

    ``JournalWriter(path, header)`` (or :meth:`create`) starts a new journal and refuses a file
    that exists (:class:`JournalExistsError`) unless ``replace``; ``JournalWriter(path)`` (or
    :meth:`resume`) continues one after moving a torn last line aside to ``<path>.torn``.

    A write that fails (disk full, a read-only or vanished disk) raises
    :class:`JournalWriteError` and leaves the file as it was before that line: whatever part of
    the line reached the file is cut off again, so the next good write starts a whole line. The
    writer stays usable; the caller decides when to try again.
    """

    def __init__(self, path: str | os.PathLike[str], header: JournalHeader | None = None,
                 *, fsync: bool = True, replace: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        if header is None:
            if not self.path.exists() or self.path.stat().st_size == 0:
                raise JournalError(1, f"{self.path}: a new journal needs a header")
            self._cut_torn_tail()
        if header is None:
            self._fd: int | None = _open(self.path)
        else:
            self._fd = _create(self.path, _line(header.to_json()), fsync=fsync, replace=replace)
        self._good = os.fstat(self._fd).st_size

    @classmethod
    def create(cls, path: str | os.PathLike[str], header: JournalHeader, *, fsync: bool = True,
               replace: bool = False) -> JournalWriter:
        """A new journal at ``path`` starting with ``header``."""
        return cls(path, header, fsync=fsync, replace=replace)

    @classmethod
    def resume(cls, path: str | os.PathLike[str], *, fsync: bool = True) -> JournalWriter:
        """Continue the journal at ``path`` (recovery after a crash or a restart)."""
        return cls(path, fsync=fsync)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._fd is None

    def _cut_torn_tail(self) -> None:
        """Move a torn last line (see :func:`durable_length`) aside to ``<path>.torn``."""
        with open(self.path, "rb+") as fh:
            data = fh.read()
            cut = durable_length(data)
            if cut == len(data):
                return
            with open(self.path.with_name(self.path.name + ".torn"), "ab") as side:
                side.write(data[cut:] + b"\n")
            fh.truncate(cut)

    def _write(self, obj: dict[str, Any]) -> None:
        self._write_lines(_line(obj))

    def _write_lines(self, data: bytes) -> None:
        if self._fd is None:
            raise JournalWriteError(f"cannot write the journal {self.path}: it is closed")
        try:
            _write_whole(self._fd, data, fsync=self.fsync, path=self.path)
        except JournalWriteError:
            with contextlib.suppress(OSError):  # cut a partly written line off again
                os.ftruncate(self._fd, self._good)
            raise
        self._good += len(data)

    def append(self, inp: Input) -> None:
        """Write one input and make it durable before returning (:class:`JournalWriteError`
        if it could not be)."""
        self._write(inp.to_json())

    def append_all(self, inputs: Iterable[Input]) -> None:
        """Write inputs and make them durable with one sync before returning: all of them or
        none (a failed write is cut off whole; :class:`JournalWriteError`)."""
        data = b"".join(_line(inp.to_json()) for inp in inputs)
        if data:
            self._write_lines(data)

    def close(self) -> None:
        """Close the file."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _shown(obj: dict[str, Any], key: str) -> str:
    """The ``key`` field of ``obj`` as JSON spells it (``null``, ``true``), or ``missing``."""
    return shown(obj[key]) if key in obj else "missing"


def dump_journal(header: JournalHeader, inputs: Iterable[Input]) -> str:
    """The whole journal as text."""
    lines = [json.dumps(header.to_json(), ensure_ascii=False)]
    lines += [json.dumps(i.to_json(), ensure_ascii=False) for i in inputs]
    return "\n".join(lines) + "\n"
