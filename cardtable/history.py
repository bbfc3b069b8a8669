"""The games played at a table and the evening's standings, read from its journal folder.

Every game the service played is a journal in ``<journal_dir>``: the game being played is
``current.jsonl``, a finished (or ended) game is archived as ``<YYYYmmdd-HHMMSS>-<game>.jsonl``
(``-2``, ``-3`` … when two share a second; see :mod:`cardtable.service`). :func:`read_history`
reads each of them and judges it again with :func:`referee.replay` — the winner, the cards played
and the round scores are what the rules say of the journal now. An archived journal's record is
kept in :data:`CACHE` beside the journals while the file is unchanged (its size, modification
time and inode) and the rules are the same (a digest of the rules library's source), so a
folder of thousands of games is not judged again at every look; a folder that cannot be
written is judged every time.

A journal that cannot be read or judged is listed with the reason instead (:attr:`GameRecord.
problem`); one damaged in the middle is judged up to the damaged line and listed with it. The
files the service keeps aside (``damaged-*.jsonl``: its game went on in a later journal;
``current.broken-*.jsonl``: a journal it could not resume; ``before-correction-*.jsonl``: a
journal an operator's correction replaced) are listed as :attr:`History.set_aside` and never
counted.

A journal holds no wall-clock time: a game's *end* is its file's modification time (the last
line written), its *duration* the table-clock time from its first input to its last input or
verdict, and its *start* the end minus the duration.

The *evening* is the newest run of games without a pause longer than :data:`EVENING_GAP_S`
between one game's end and the next one's start, up to now (the feed reads only the journals
of the last :data:`EVENING_MAX_S`); its *standings* count the wins of
each player (by name: players may change seats) over its finished games, and give the round
table (every round's hand scores and running totals) of its latest Vändåtta points game.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hardware.threads import background
from referee.describe import seat_name
from referee.games import games
from referee.journal import JournalError, read_before, read_journal
from referee.model import Verdict
from referee.options import options_to_json
from referee.table import replay

log = logging.getLogger("cardtable.history")

#: The game being played (as :data:`cardtable.service.CURRENT`).
CURRENT = "current.jsonl"

#: An archived game: ``20261201-203015-banka-bever.jsonl``, ``…-banka-bever-2.jsonl``.
ARCHIVED = re.compile(r"^(\d{8}-\d{6})-([a-z][a-z-]*?)(?:-(\d+))?\.jsonl$")

#: Files the service keeps aside, and why (matched on the name).
SET_ASIDE = (
    (re.compile(r"^damaged-.*\.jsonl$"),
     "kept aside: a journal damaged in the middle, whose game went on in a later journal"),
    (re.compile(r"^current\.broken-.*\.jsonl$"),
     "kept aside: a journal the referee could not resume"),
    (re.compile(r"^before-correction-.*\.jsonl$"),
     "kept aside: the journal before an operator's correction"),
)

#: Why a ``.jsonl`` file named otherwise is left out (a journal copied in under another name
#: had been left out without a word).
OTHER_NAME = ("left out: not named as the table names its journals "
              "(YYYYmmdd-HHMMSS-GAME.jsonl, or current.jsonl)")

#: The longest pause (seconds) between two games of one evening.
EVENING_GAP_S = 6 * 3600.0

#: How far back (seconds) the feed's history reads the folder: an evening is at most this
#: long, so the journals of earlier days are not judged again after every game.
EVENING_MAX_S = 24 * 3600.0

#: The problem of a journal that went away while the folder was read (archived meanwhile).
VANISHED = "gone while it was read"

#: Games a published summary lists at most (the newest of the evening).
SUMMARY_GAMES = 50
#: The longest a game's inputs may span (seconds, a week); a journal whose times span more
#: is listed with that problem, its start and end its file's time.
LONGEST_GAME_S = 7 * 86400.0


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts))


@dataclass
class RoundResult:
    """One scored round of a Vändåtta game: its winner (None: blocked) and every seat's hand
    score (None: out of the points game, or a hand not seen) and, in the points game, the
    running totals after it."""

    round: int
    winner: int | None
    scores: list[int | None]
    totals: list[int] | None


@dataclass
class GameRecord:
    """One journal of the folder, judged again."""

    file: str
    #: ``finished``, ``ended`` (archived before the game was decided), ``in progress``
    #: (``current.jsonl`` of a game not over) or ``unreadable``.
    status: str
    end: float
    start: float
    duration_s: float
    game: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    seats: list[str] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    cards_played: int = 0
    #: What the state's ``tricks`` counts (piles collected, or rounds played in Vändåtta).
    tricks: int = 0
    tally: str = ""
    inputs: int = 0
    rounds: list[RoundResult] = field(default_factory=list)
    #: Why the journal could not be read or judged (whole or in part), or None.
    problem: str | None = None

    @property
    def title(self) -> str:
        """The game's name for a person."""
        return games[self.game].title if self.game is not None and self.game in games else "?"

    @property
    def points_game(self) -> bool:
        """True for a Vändåtta points game."""
        return bool(self.options.get("points_game"))

    @property
    def winner_names(self) -> list[str]:
        """The winners by name."""
        return [seat_name(self.seats, w) for w in self.winners]

    @property
    def counted(self) -> bool:
        """True when the game counts in the standings: decided, read and judged whole."""
        return self.status == "finished" and self.problem is None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as local ISO text and seconds since the epoch)."""
        out = asdict(self)
        out.update(title=self.title, winner_names=self.winner_names, start_text=_iso(self.start),
                   end_text=_iso(self.end), points_game=self.points_game)
        return out


@dataclass
class History:
    """Every game of a journal folder, oldest first, and the files kept aside."""

    journal_dir: str
    games: list[GameRecord]
    set_aside: list[dict[str, str]]
    #: Journals of the folder left out, written before ``read_history``'s ``since``.
    older: int = 0

    def evening(self, now: float | None = None, gap_s: float = EVENING_GAP_S) -> list[GameRecord]:
        """The games of the evening: the newest run of games with no pause longer than
        ``gap_s`` between them, nor between the last and ``now`` (empty when the last game
        ended longer ago than that)."""
        now = time.time() if now is None else now
        out: list[GameRecord] = []
        later = now
        for record in reversed(self.games):
            if later - record.end > gap_s:
                break
            out.append(record)
            later = record.start
        return out[::-1]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"journal_dir": self.journal_dir, "games": [g.to_json() for g in self.games],
                "set_aside": self.set_aside}


def judge_file(path: Path) -> GameRecord:
    """Read one journal and judge it again; never raises for what the file holds."""
    try:
        end = path.stat().st_mtime
    except FileNotFoundError:
        return GameRecord(path.name, "unreadable", 0.0, 0.0, 0.0, problem=VANISHED)
    except OSError as exc:
        return GameRecord(path.name, "unreadable", 0.0, 0.0, 0.0,
                          problem=f"cannot read it ({exc.strerror or exc})")
    record = GameRecord(path.name, "unreadable", end, end, 0.0)
    try:
        journal = read_journal(path, tolerate_torn_tail=path.name == CURRENT)
    except JournalError as exc:
        before = read_before(exc)
        if before is None:
            record.problem = f"unreadable: line {exc.line}: {exc.reason}"
            return record
        journal = before
        record.problem = (f"damaged at line {exc.line} ({exc.reason}); judged up to the line "
                          "before")
    except FileNotFoundError:
        record.problem = VANISHED
        return record
    except OSError as exc:
        record.problem = f"cannot read it ({exc.strerror or exc})"
        return record
    header = journal.header
    record.game = header.game
    record.seats = list(header.seats)
    record.options = options_to_json(header.options)  # type: ignore[arg-type]
    record.tally = games[header.game].tally
    record.inputs = len(journal.inputs)
    try:
        result = replay(journal)  # as referee replay: a pending collect grace runs out
    except Exception as exc:  # a journal the rules cannot judge must not stop the listing
        record.problem = f"cannot be judged ({type(exc).__name__}: {exc})"
        return record
    state = result.state
    record.winners = list(state.get("winners") or [])
    record.cards_played = int(state.get("cards_played") or 0)
    record.tricks = int(state.get("tricks") or 0)
    if state.get("over"):
        record.status = "finished"
    else:
        record.status = "in progress" if path.name == CURRENT else "ended"
    times = [inp.t for inp in journal.inputs] + [v.t for v in result.verdicts]
    if journal.inputs:
        record.duration_s = max(0, max(times) - journal.inputs[0].t) / 1e9
    if record.duration_s > LONGEST_GAME_S:  # no clock a table keeps runs so long: not a date
        record.problem = (f"its inputs span {record.duration_s / 86400:.3g} days, not one "
                          "game's (a clock that jumped, or a journal edited by hand)")
        record.duration_s = 0.0
    record.start = end - record.duration_s
    for v in result.verdicts:
        if v.verdict == "round_over":
            f = v.data
            record.rounds.append(RoundResult(len(record.rounds) + 1, f.get("winner"),
                                             list(f.get("scores") or []),
                                             f.get("totals")))
    return record


#: The records of a folder's archived journals (:func:`read_history`), beside them.
CACHE = ".history-cache.json"


@functools.cache
def rules_digest() -> str:
    """A digest of the rules library's source: a record judged by other rules is judged again."""
    import referee

    digest = hashlib.sha256(referee.__version__.encode())
    for source in sorted(Path(referee.__file__).parent.rglob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    return digest.hexdigest()


def _stamp(path: Path) -> list[int] | None:
    """What tells a changed journal: size, modification time (ns) and inode."""
    try:
        info = path.stat()
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _load_cache(folder: Path) -> dict[str, Any]:
    """The folder's cached records by file name (empty if none, or of other rules)."""
    try:
        data = json.loads((folder / CACHE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("rules") != rules_digest():
        return {}
    entries = data.get("records")
    return entries if isinstance(entries, dict) else {}


def _save_cache(folder: Path, entries: dict[str, Any]) -> None:
    """Write the cache whole (a new file renamed over the old); a folder that cannot be
    written keeps none."""
    tmp = folder / f"{CACHE}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps({"rules": rules_digest(), "records": entries}),
                       encoding="utf-8")
        os.replace(tmp, folder / CACHE)
    except OSError as exc:
        log.debug("history cache not written in %s: %s", folder, exc)
        with contextlib.suppress(OSError):
            tmp.unlink()


def _record_from(entry: Any) -> GameRecord | None:
    """A cached record, or None when the entry is not one that judging would give (a damaged
    or edited cache is judged again, not trusted)."""
    try:
        fields = dict(entry["record"])
        fields["rounds"] = [RoundResult(**r) for r in fields.get("rounds") or []]
        record = GameRecord(**fields)
    except (KeyError, TypeError, ValueError):
        return None
    return record if _sound(record) else None


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _sound(r: GameRecord) -> bool:
    """Whether a record holds what :func:`judge_file` gives: each field of its type, times a
    file's (0 to 10^11 seconds since 1970), winners seats of the game."""
    def seat(w: Any) -> bool:
        return _whole(w) and 0 <= w < len(r.seats)

    def when(x: Any) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1e11

    return (isinstance(r.file, str) and isinstance(r.status, str) and when(r.end)
            and when(r.start) and when(r.duration_s) and r.duration_s <= LONGEST_GAME_S
            and (r.game is None or r.game in games) and isinstance(r.options, dict)
            and isinstance(r.seats, list) and all(isinstance(n, str) for n in r.seats)
            and isinstance(r.winners, list) and all(seat(w) for w in r.winners)
            and all(_whole(n) and n >= 0 for n in (r.cards_played, r.tricks, r.inputs))
            and isinstance(r.tally, str) and (r.problem is None or isinstance(r.problem, str))
            and all(_whole(x.round) and (x.winner is None or seat(x.winner))
                    and isinstance(x.scores, list)
                    and all(v is None or _whole(v) for v in x.scores)
                    and (x.totals is None or isinstance(x.totals, list)
                         and all(_whole(v) for v in x.totals)) for x in r.rounds))


def _judge_cached(path: Path, cache: dict[str, Any]) -> tuple[GameRecord, bool]:
    """The record of ``path``, from the cache when the file is unchanged; and whether the cache
    changed. The game being played and a file that could not be read are never cached."""
    stamp = _stamp(path)
    entry = cache.get(path.name)
    if path.name != CURRENT and stamp is not None and isinstance(entry, dict) \
            and entry.get("stamp") == stamp:
        record = _record_from(entry)
        if record is not None:
            return record, False
    record = judge_file(path)
    if path.name == CURRENT or stamp is None or record.problem == VANISHED or (
            record.problem or "").startswith("cannot read it"):
        return record, False
    cache[path.name] = {"stamp": stamp, "record": asdict(record)}
    return record, True


def journal_files(journal_dir: Path) -> tuple[list[Path], list[dict[str, str]]]:
    """The game journals of a folder (archived ones and ``current.jsonl``) and the files kept
    aside, each with why."""
    found: list[Path] = []
    aside: list[dict[str, str]] = []
    try:
        names = sorted(os.listdir(journal_dir))
    except FileNotFoundError:
        return [], []
    for name in names:
        path = journal_dir / name
        if name == CURRENT or ARCHIVED.match(name):
            found.append(path)
            continue
        for pattern, why in SET_ASIDE:
            if pattern.match(name):
                aside.append({"file": name, "why": why})
                break
        else:
            if name.endswith(".jsonl") and not name.startswith("."):  # said, not left unsaid
                aside.append({"file": name, "why": OTHER_NAME})
    return found, aside


def _written_since(path: Path, since: float | None) -> bool:
    if since is None or path.name == CURRENT:
        return True
    try:
        return path.stat().st_mtime >= since
    except OSError:
        return True  # judged, and listed with what is wrong


def read_history(journal_dir: str | os.PathLike[str], *, since: float | None = None) -> History:
    """Every game of the folder, judged again, oldest first (by end; the game being played
    last); with ``since`` (seconds since the epoch) only the journals last written since then,
    the others counted in :attr:`History.older`. A folder that does not exist has no games."""
    folder = Path(journal_dir)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder")
    cache = _load_cache(folder)
    changed = False
    for _attempt in range(3):  # a journal archived while it was read: list the folder again
        files, aside = journal_files(folder)
        recent = [p for p in files if _written_since(p, since)]
        records = []
        for path in recent:
            record, new = _judge_cached(path, cache)
            records.append(record)
            changed |= new
        if not any(r.problem == VANISHED for r in records):
            break
    names = {p.name for p in files}
    if changed or any(name not in names for name in cache):
        _save_cache(folder, {k: v for k, v in cache.items() if k in names})
    records.sort(key=lambda r: (r.file == CURRENT, r.end, r.file))
    return History(str(folder), records, aside, older=len(files) - len(recent))


def standings(records: Iterable[GameRecord]) -> dict[str, Any]:
    """Wins per player over the finished games of ``records``, and the round table of the
    latest Vändåtta points game among them (finished or not).

    ``players``: ``name``, ``played``, ``wins`` (outright or shared), ``shared``, most wins
    first; ``points``: ``file``, ``seats``, ``rounds`` (``round``, ``winner``, ``scores``,
    ``totals``), ``over``, ``winners`` — or None."""
    table: dict[str, dict[str, Any]] = {}
    counted = 0
    points: GameRecord | None = None
    for record in records:
        if record.points_game and record.problem is None and record.status != "unreadable":
            points = record
        if not record.counted:
            continue
        counted += 1
        for name in record.seats:
            row = table.setdefault(name, {"name": name, "played": 0, "wins": 0, "shared": 0})
            row["played"] += 1
        for w in record.winners:
            row = table[seat_name(record.seats, w)]
            row["wins"] += 1
            if len(record.winners) > 1:
                row["shared"] += 1
    players = sorted(table.values(), key=lambda r: (-r["wins"], r["shared"], r["name"]))
    out: dict[str, Any] = {"games": counted, "players": players, "points": None}
    if points is not None:
        out["points"] = {
            "file": points.file, "seats": points.seats,
            "rounds": [asdict(r) for r in points.rounds],
            "over": points.status == "finished", "winners": points.winners,
        }
    return out


def summary(history: History, table_id: str | None = None,
            now: float | None = None) -> dict[str, Any]:
    """What the feed publishes on ``cardtable/<table>/history``: the evening's games (the
    newest :data:`SUMMARY_GAMES`), its standings, the journals that could not be read, and
    how many games the folder holds."""
    now = time.time() if now is None else now
    evening = history.evening(now)
    problems = [{"file": g.file, "problem": g.problem} for g in history.games if g.problem]
    return {
        "table": table_id,
        "generated": _iso(now),
        "total_games": len(history.games) + history.older,
        "evening": [_short(g) for g in evening[-SUMMARY_GAMES:]],
        "standings": standings(evening),
        "problems": problems,
    }


def _short(g: GameRecord) -> dict[str, Any]:
    return {"file": g.file, "game": g.game, "title": g.title, "status": g.status,
            "start": _iso(g.start), "duration_s": round(g.duration_s, 1), "seats": g.seats,
            "winners": g.winner_names, "cards_played": g.cards_played, "tricks": g.tricks,
            "tally": g.tally, "rounds": len(g.rounds), "problem": g.problem}


class HistoryPublisher:
    """Reads the table's history again (in a worker thread, off the referee's loop) and hands
    its :func:`summary` to ``publish`` on ``loop``: at :meth:`refresh`, and from
    :meth:`update` after each verdict in :data:`TRIGGERS` (a game decided, a points round
    scored) or :data:`AFTER_NEXT`. Refreshes asked for while one runs make one more. A game
    ended by the operator (:data:`AFTER_NEXT`) is read at the change after its notice: the
    service archives its journal and deals the next game only after the notice went out, and
    a reading in between would find the journal still ``current`` or half renamed."""

    TRIGGERS = frozenset({"game_over", "round_over"})
    #: Verdicts whose refresh waits for the service's next change (the game's archive).
    AFTER_NEXT = frozenset({"ended_by_operator"})

    def __init__(self, journal_dir: str | os.PathLike[str], table_id: str,
                 publish: Callable[[dict[str, Any]], None],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.journal_dir = Path(journal_dir)
        self.table_id = table_id
        self.publish = publish
        self.loop = loop
        self._lock = threading.Lock()
        self._running = False
        self._again = False
        self._after_next = False
        #: Summaries handed over so far.
        self.published = 0

    def update(self, verdicts: Iterable[Verdict]) -> None:
        """Refresh when one of ``verdicts`` ends a game or a round (a game ended by the
        operator: at the next change, its journal archived)."""
        kinds = {v.verdict for v in verdicts}
        due, self._after_next = self._after_next, not kinds.isdisjoint(self.AFTER_NEXT)
        if due or not kinds.isdisjoint(self.TRIGGERS):
            self.refresh()

    def refresh(self) -> None:
        """Read the history again in the background; returns at once."""
        with self._lock:
            if self._running:
                self._again = True
                return
            self._running = True
        threading.Thread(target=self._work, name="history", daemon=True).start()

    async def settle(self, timeout: float = 3.0) -> None:
        """Wait (on the loop) until no reading runs and its summary was handed over, at most
        ``timeout`` seconds: the last game's result goes out before the feed stops."""
        deadline = self.loop.time() + timeout
        while self.loop.time() < deadline:
            with self._lock:
                busy = self._running
            if not busy:
                await asyncio.sleep(0)  # the hand-over scheduled by the worker runs
                return
            await asyncio.sleep(0.01)

    def _work(self) -> None:
        background()  # judging old journals takes its turn with the Pi's other work
        while True:
            try:
                now = time.time()
                history = read_history(self.journal_dir, since=now - EVENING_MAX_S)
                out = summary(history, self.table_id, now=now)
            except Exception:  # the history must never stop the referee
                log.exception("history of %s", self.journal_dir)
            else:
                def hand_over(out: dict[str, Any] = out) -> None:
                    self.publish(out)
                    self.published += 1
                try:
                    self.loop.call_soon_threadsafe(hand_over)
                except RuntimeError:  # the loop is closed: the referee stopped
                    pass
            with self._lock:
                if not self._again:
                    self._running = False
                    return
                self._again = False
