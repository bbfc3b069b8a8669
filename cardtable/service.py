"""The referee service: ``referee run`` at a real table, and the same loop in simulation.

One asyncio loop, no hidden threads of ours: edges (GPIO pads, the serial board, the console,
virtual players) call :meth:`RefereeService.submit` — from any thread — with an :class:`Input`
stamped on the table clock; the service journals it (flushed and synced to disk), holds it in the
arbiter's settle window, judges it, and hands the verdicts and state to the outputs (the MQTT
feed, seat LEDs, the terminal). Outputs must not block.

Recovery: the game being played is always ``<journal_dir>/current.jsonl``. On start, a current
journal whose game is not over is replayed through the same code and the game goes on from
there; the table clock is shifted so that time keeps increasing across a reboot. A finished game's
journal is archived under its start time. A journal damaged in the middle is resumed from its
last good line; the whole file is kept aside (``damaged-<time>.jsonl``) and an alert says so.

One referee per journal folder: the service holds the folder's lock (:mod:`cardtable.lock`)
from :meth:`RefereeService.open_game` until it stops.

A journal that cannot be written (disk full, read-only, gone) stops the judging, never the
program: the input that could not be written is not judged, later inputs are ignored with the
reason, the state's ``alerts.journal`` says what is wrong on every display, and the service tries
the folder again every second; once it can write, the alert is cleared and the game goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from cardtable.clock import TableClock
from cardtable.config import TableConfig, parse_config
from cardtable.errors import ConfigError, EdgeError, OtherGameError, Refused
from cardtable.files import write_whole
from cardtable.i18n import Words, os_words
from cardtable.lock import FolderLock
from referee.cards import parse_card
from referee.deal import next_dealer, reshuffled
from referee.describe import N_, seat_name
from referee.errors import CardError, JournalWriteError
from referee.games import game as game_named
from referee.games.vandatta import next_deal
from referee.journal import (
    JournalError,
    JournalHeader,
    JournalWriter,
    dump_journal,
    read_before,
    read_journal,
)
from referee.model import Input, Verdict
from referee.options import options_to_json
from referee.table import Table

log = logging.getLogger("cardtable.service")


def game_banner(game: str, seats: Iterable[str]) -> str:
    """A game in words: ``Banka bäver (Anna, Bo)``."""
    return f"{game_named(game).title} ({', '.join(seats)})"


def journal_differences(header: JournalHeader, config: TableConfig) -> list[str]:
    """How a journal's game is not the configured game, in words (empty when it is the
    configured game): its kind, its seats, its table options, and its seed where the
    configuration names one. The dealer is not compared: it moves on from game to game."""
    if header.game != config.game:
        return [f"configured: {game_banner(config.game, config.seats)}"]
    found = []
    if tuple(header.seats) != tuple(config.seats):
        found.append(f"configured seats: {', '.join(config.seats)}")
    assert header.options is not None  # JournalHeader fills in the game's defaults
    theirs, ours = options_to_json(header.options), options_to_json(config.options)
    found += [f"{k} = {theirs.get(k)} (configured {ours.get(k)})"
              for k in sorted(set(theirs) | set(ours)) if theirs.get(k) != ours.get(k)]
    if config.seed is not None and header.seed != config.seed:
        found.append(f"seed {header.seed} (configured {config.seed})")
    return found


def _by(who: str | None) -> dict[str, str]:
    """The ``by`` field of an operator's notice (none when not known)."""
    return {} if who is None else {"by": who}


CURRENT = "current.jsonl"
#: How often a journal that could not be written is tried again.
JOURNAL_RETRY_S = 1.0
#: The longest the loop sleeps with nothing due: only an input (which wakes it) changes the game.
IDLE_WAIT_S = 1.0


class Output(Protocol):
    """Anything that shows the game: called with each batch of verdicts and the new state."""

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Show the change; must return at once."""


class Edge(Protocol):
    """A source of inputs, started and stopped by the service."""

    async def start(self, service: RefereeService) -> None:
        """Begin delivering inputs with ``service.submit``."""

    async def stop(self) -> None:
        """Stop delivering inputs and release the device."""


@runtime_checkable
class Source(Protocol):
    """An edge that stamps its inputs with times of its own (kernel edge stamps, board ticks)
    and says how far it has handed them in: a source of the arbiter (``referee.arbiter``)."""

    source: str

    def progress(self) -> int | None:
        """The table time up to which every input this edge stamped has been submitted, or
        None while it cannot say (its inputs then wait the settle window)."""


#: While inputs are held and edges report progress, how often the loop asks them again.
PROGRESS_POLL_S = 0.0002


class RefereeService:
    """One table: the journal on disk, the arbiter, the engine and the outputs.

    Edges are of two kinds for the arbiter. A :class:`Source` says how far it has handed in
    its inputs, and a held input is judged once every source is past it. An edge with
    ``own_stamps = False`` stamps what it submits with the service clock as it submits (the
    console) or submits nothing (the feed): nothing of it can come late. Any other edge is a
    source that cannot say, and keeps every release at the settle window. ``[table] release
    = "window"`` judges by the window alone.
    """

    def __init__(self, config: TableConfig, *, clock: TableClock | None = None,
                 outputs: Iterable[Output] = (), edges: Iterable[Edge] = (),
                 fsync: bool = True) -> None:
        self.config = config
        #: The configuration as given: ``config`` takes a resumed journal's other game for as
        #: long as it is played (:meth:`open_game`); the next deal is this one's.
        self.configured = config
        #: Set while the game goes on from a journal of another game than the configured one
        #: (:meth:`open_game`): what differs, in words.
        self.other_game: str | None = None
        self.clock = clock or TableClock()
        self.outputs: list[Output] = list(outputs)
        self.edges: list[Edge] = list(edges)
        self.fsync = fsync
        self.journal_dir = Path(config.journal_dir)
        self.table: Table | None = None
        self.paused = False
        self.resumed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._pending: list[Input] = []
        self._lock = threading.Lock()
        self._stop: asyncio.Event | None = None
        self.alerts: dict[str, Any] = {}
        self._stuck: set[tuple[Any, Any]] = set()
        self._folder_lock = FolderLock(self.journal_dir)
        #: What is wrong with the journal while it cannot be written (None: it can).
        self.journal_fault: str | None = None
        self._fault_checked = 0.0
        self._fault_new_game: tuple[int | None] | None = None
        #: Stop :meth:`run` (instead of waiting) when the journal cannot be written.
        self.stop_on_journal_fault = False
        # Those who wait for an input's judgement (:meth:`judge`), by the id of the input
        # submitted, then by the id of the input as pushed (each entry holds the input itself,
        # so its id is not reused while it waits).
        self._replies: dict[int, tuple[Input, asyncio.Future[tuple[bool, list[Verdict]]]]] = {}
        self._judging: dict[int, tuple[Input, asyncio.Future[tuple[bool, list[Verdict]]]]] = {}
        self._source_key: tuple[int, ...] | None = None
        #: Called with every input handed in, on the edge's thread; must return at once.
        self.watchers: list[Callable[[Input], None]] = []
        self._source_list: list[tuple[str, Source | None]] = []

    # -- games and journals ----------------------------------------------------------------
    @property
    def current_path(self) -> Path:
        """The journal of the game being played."""
        return self.journal_dir / CURRENT

    def open_game(self, *, keep_finished: bool = False, other_game: str = "resume") -> None:
        """Resume the current journal's game if it is not over, else start a new game; with
        ``keep_finished`` a finished game that is the configured one (:func:`journal_differences`
        finds nothing) is kept as it is (to report its result). Takes the journal folder's lock
        first (:class:`TableBusyError` if another referee holds it).

        An unfinished game that is not the configured one (another game, other seats, other
        options or seed) is never played under the configuration's name: with ``other_game =
        "resume"`` it goes on under its own (``config`` takes its game, seats, dealer, options
        and seed until the next deal; :attr:`other_game` says why; :class:`OtherGameError`
        when the table is wired for another number of seats); with ``"new"`` it is archived
        under its own name and the configured game is dealt. A game is archived under the
        name of the game it holds, never the configuration's."""
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        self._folder_lock.acquire()
        if self.current_path.exists():
            try:
                self._resume(keep_finished=keep_finished, other_game=other_game)
                return
            except JournalError as exc:
                if read_before(exc) is not None and exc.line > 1:
                    self._resume_before_damage(exc, keep_finished=keep_finished,
                                               other_game=other_game)
                    return
                broken = self.current_path.with_suffix(f".broken-{int(time.time())}.jsonl")
                self.current_path.rename(broken)
                log.error("cannot resume %s (%s); kept it as %s", self.current_path, exc, broken)
                # Said on every display too: a game was set aside, not dropped unseen.
                self.alerts["journal_damaged"] = (
                    f"the journal could not be read ({exc}); it is kept as {broken.name} and a "
                    "new game was dealt")
        self.start_game()

    def _resume_before_damage(self, exc: JournalError, *, keep_finished: bool,
                              other_game: str) -> None:
        """A journal damaged in the middle: go on from the inputs before the damaged line; the
        whole file is kept aside and an alert names it."""
        before = read_before(exc)
        assert before is not None
        kept = self._free_name(f"damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        self._replace_current(dump_journal(before.header, before.inputs), kept)
        text = (f"the journal was damaged at line {exc.line} ({exc.reason}); the game goes on "
                f"from the {len(before.inputs)} inputs before it; the whole file is kept "
                f"as {kept.name}")
        log.error("%s: %s", self.current_path, text)
        self._resume(keep_finished=keep_finished, other_game=other_game)
        self.alerts["journal_damaged"] = text
        self.notice("journal_damaged", line=exc.line, reason=exc.reason, kept=str(kept),
                    inputs=len(before.inputs))

    def _resume(self, *, keep_finished: bool = False, other_game: str = "resume") -> None:
        journal = read_journal(self.current_path, tolerate_torn_tail=True)
        header = journal.header
        table = Table(header, settle_ns=self._settle_ns())
        table.push_all(journal.inputs)
        table.flush()
        differences = journal_differences(header, self.configured)
        banner = game_banner(header.game, header.seats)
        if table.engine.over:
            if not (keep_finished and not differences):
                self._archive(header.game)
                log.info("the journal's game, %s, was over (%s); starting a new one",
                         banner, table.state()["winners"])
                self.start_game()
                return
        elif differences:
            other = (f"{self.current_path} holds an unfinished game of {banner}, not the "
                     f"configured one ({'; '.join(differences)})")
            if other_game == "new":
                self._archive(header.game)
                log.warning("%s; archived it under its own name and dealing the configured "
                            "game", other)
                self.start_game()
                return
            wired = self.config.raw.get("seats")
            if isinstance(wired, list) and len(wired) < header.n_seats:
                raise OtherGameError(
                    f"{other}; the table is wired for {len(wired)} seats, so it cannot go on: "
                    "finish it with its own configuration, or start with --new-game to "
                    "archive it under its own name and deal the configured game")
            self.other_game = (f"the journal folder holds an unfinished game of {banner}, not "
                               f"the configured one ({'; '.join(differences)}); it goes on, "
                               "and 'new' deals the configured game")
            log.warning("%s; going on with it (--new-game, or 'new' at the console, archives "
                        "it under its own name and deals the configured game)", other)
            assert header.options is not None
            self.config = replace(self.config, game=header.game, seats=header.seats,
                                  dealer=header.dealer, options=header.options,
                                  seed=header.seed)
        last_t = journal.inputs[-1].t if journal.inputs else 0
        # Keep table time increasing across a reboot: CLOCK_MONOTONIC starts again at boot.
        gap = last_t + 1_000_000 - self.clock.source()
        if gap > self.clock.offset_ns:
            self.clock.offset_ns = gap
        table.journal = JournalWriter.resume(self.current_path, fsync=self.fsync)
        self._use(table)
        self.resumed = True
        log.info("resumed %s: %d inputs, table clock offset %d ns", self.current_path,
                 len(journal.inputs), self.clock.offset_ns)
        self._publish(table.verdicts[-8:])

    def start_game(self, seed: int | None = None) -> None:
        """Deal a new game: shuffled with ``seed`` (or the configured seed; a virtual deck
        without one gets a fresh seed); a board or console table without a seed is observed."""
        cfg = self.configured
        if seed is None:
            seed = cfg.seed
        if cfg.card_source == "virtual" and seed is None:
            seed = int.from_bytes(os.urandom(4), "big")
        # A board or console table with a seed was dealt from that shuffle (the cards scanned
        # at the deal); without one it is observed: faces are learned as cards are laid.
        header = JournalHeader(cfg.game, cfg.seats, cfg.dealer, cfg.options, seed).resolved()
        try:  # dealt once aside first: a game that cannot be dealt leaves the old one be
            Table(header)
        except (ArithmeticError, TypeError) as exc:
            raise ValueError(f"this game cannot be dealt: {exc}") from exc
        self.config = cfg
        self.other_game = None
        if self.table is not None:
            self.table.flush()  # judge what the settle window still holds, in the old game
            if self.table.journal is not None:
                self.table.journal.close()
            if self.current_path.exists():
                self._archive(self.table.header.game)
        try:
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            writer = JournalWriter.create(self.current_path, header, fsync=self.fsync,
                                          replace=True)
        except (JournalWriteError, OSError) as exc:
            # The deal waits for the disk: nothing may be judged that is not on disk.
            with contextlib.suppress(OSError):
                if self.current_path.exists() and self.current_path.stat().st_size == 0:
                    self.current_path.unlink()
            self._fault_new_game = (seed,)
            self._journal_failed(exc)
            return
        self._fault_new_game = None
        self._use(Table(header, settle_ns=self._settle_ns(), journal=writer))
        self.resumed = False
        self._publish([])

    def _use(self, table: Table) -> None:
        table.listeners.append(self._publish)  # with the state the table just built
        table.judged_listeners.append(self._on_judged)
        self.table = table

    def _archive(self, game: str) -> None:
        """Archive the current journal under its start time and ``game``, the game it holds
        (its header's, never the configuration's)."""
        self.current_path.rename(self._free_name(f"{time.strftime('%Y%m%d-%H%M%S')}-{game}"))

    def _replace_current(self, text: str, kept: Path) -> None:
        """``current.jsonl`` becomes ``text`` and what it held is kept as ``kept``: the old
        one is linked to its new name first and is never moved, so a crash or a full disk at
        any step leaves a whole ``current.jsonl``, the old or the new. (The old one had been
        moved away first, and a write that failed then, or a crash, lost the game.)"""
        try:
            os.link(self.current_path, kept)
        except OSError:  # a file system without hard links: a copy
            write_whole(kept, self.current_path.read_bytes())
        try:
            write_whole(self.current_path, text)
        except BaseException:  # the journal as it was: no copy of it beside it
            with contextlib.suppress(OSError):
                kept.unlink()
            raise

    def _free_name(self, stem: str) -> Path:
        """``<stem>.jsonl`` in the journal folder, or ``<stem>-2.jsonl``, … : a name no file
        has (two archives in one second must not land on each other)."""
        target, k = self.journal_dir / f"{stem}.jsonl", 1
        while target.exists():
            k += 1
            target = self.journal_dir / f"{stem}-{k}.jsonl"
        return target

    def _settle_ns(self) -> int:
        return int(self.config.settle_ms * 1_000_000)

    # -- inputs ------------------------------------------------------------------------------
    def submit(self, inp: Input) -> None:
        """Hand in an input from any thread; ``inp.t`` is on the table clock. Each of
        :attr:`watchers` sees it first (the table check: which pad, and how late)."""
        for watch in self.watchers:
            watch(inp)
        with self._lock:
            self._pending.append(inp)
        self._poke()

    def in_flight(self) -> bool:
        """Whether an input handed in is not judged yet (waiting to be taken in, or held by
        the arbiter): what a player acting on the state must wait for."""
        with self._lock:
            if self._pending:
                return True
        return self.table is not None and len(self.table.arbiter) > 0

    def notice(self, kind: str, **fields: Any) -> None:
        """An outside event for the verdict stream that is not a game input (e.g. a stuck button,
        the board going offline); not journaled. The lasting ones are also kept in the state's
        ``alerts``, so a display that joins later sees them."""
        if kind in ("board_offline", "board_online"):
            self.alerts["board"] = kind.removeprefix("board_")
        elif kind == "button_stuck":
            self._stuck.add((fields.get("seat"), fields.get("button")))
        elif kind == "button_released":
            self._stuck.discard((fields.get("seat"), fields.get("button")))
        elif kind in ("button_chatter", "button_settled"):  # alerts.chatter while there is one
            pad = {"seat": fields.get("seat"), "button": fields.get("button")}
            chatter = [p for p in self.alerts.pop("chatter", []) if p != pad]
            if kind == "button_chatter":
                chatter.append(pad)
            if chatter:
                self.alerts["chatter"] = chatter
        elif kind == "camera_offline":  # alerts.camera says why, while it lasts
            self.alerts["camera"] = fields.get("reason")
        elif kind == "camera_online":
            self.alerts.pop("camera", None)
        elif kind == "board_link_unusable":  # alerts.board_link says why, while it lasts
            self.alerts["board_link"] = fields.get("reason")
        elif kind == "board_link_usable":
            self.alerts.pop("board_link", None)
        self._publish([Verdict(self.clock.now(), kind, fields)])

    async def judge(self, inp: Input, timeout: float = 2.0) -> tuple[bool, list[Verdict]]:
        """Submit ``inp`` (on the service's loop) and wait until it is taken: ``(True, the
        verdicts of the step that judged it)`` — which may hold an ``illegal`` for it — or
        ``(False, [the notice that refused it])``. After ``timeout`` seconds without either,
        ``(True, [])``: it is held (e.g. a slap waiting for its instant to close)."""
        future: asyncio.Future[tuple[bool, list[Verdict]]] = (
            asyncio.get_running_loop().create_future())
        self._replies[id(inp)] = (inp, future)
        self.submit(inp)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return True, []
        finally:
            self._replies.pop(id(inp), None)

    def _refuse(self, inp: Input, kind: str, reason: str, **why: Any) -> None:
        """Report an input that is not journaled (and answer whoever waits for it); ``why``:
        the reason in codes (``why``, and its ``fault``) for a display to word it
        (:data:`referee.describe.IGNORED`)."""
        fields = {"seat": inp.seat, "act": inp.act, "reason": reason, **why}
        self.notice(kind, **fields)
        waiting = self._replies.pop(id(inp), None)
        if waiting is not None and not waiting[1].done():
            waiting[1].set_result((False, [Verdict(self.clock.now(), kind, fields)]))

    def _on_judged(self, inputs: list[Input], verdicts: list[Verdict]) -> None:
        for inp in inputs:
            waiting = self._judging.pop(id(inp), None)
            if waiting is not None and not waiting[1].done():
                waiting[1].set_result((True, verdicts))

    def _take_pending(self) -> None:
        """Take what the edges handed in since the last step: refuse what cannot be taken,
        journal the rest in one write and one sync (inputs that came together, such as the
        slaps of one race, wait for one sync, not one each), and hold them for judging."""
        with self._lock:
            pending, self._pending = self._pending, []
        batch: list[tuple[Input, list[Input]]] = []  # as handed in; what is pushed for it
        for inp in pending:
            if self.table is None:
                continue
            if self.journal_fault is not None:
                self._refuse(inp, "ignored",
                             f"the journal cannot be written ({self.journal_fault})",
                             why="journal", fault=self.journal_fault)
                continue
            if self.paused:
                self._refuse(inp, "ignored", "the game is paused", why="paused")
                continue
            problem = self._unjournalable(inp)
            if problem:
                self._refuse(inp, "rejected", problem)
                continue
            pushes = [self.translate(inp)]
            if self._needs_reshuffle(inp):
                pushes.insert(0, self.translate(Input(inp.t, inp.seat, "reshuffle")))
            batch.append((inp, pushes))
        if not batch or self.table is None:
            return
        try:
            pushed = self.table.push_all([p for _inp, pushes in batch for p in pushes])
        except JournalWriteError as exc:
            self._journal_failed(exc)
            for inp, _pushes in batch:
                self._refuse(inp, "ignored",
                             f"the journal cannot be written ({self.journal_fault})",
                             why="journal", fault=self.journal_fault)
            return
        k = 0
        for inp, pushes in batch:
            k += len(pushes)
            waiting = self._replies.pop(id(inp), None)
            if waiting is not None:  # the input itself is the last pushed for it
                self._judging[id(pushed[k - 1])] = (pushed[k - 1], waiting[1])

    # -- a journal that cannot be written -------------------------------------------------------
    def _journal_failed(self, exc: BaseException) -> None:
        """Stop judging until the journal can be written again (see the module docstring)."""
        # a write error without a cause of its own (the closed journal) had said "None"
        cause = (exc.__cause__ or exc) if isinstance(exc, JournalWriteError) else exc
        why = (cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause))
        first = self.journal_fault is None
        self.journal_fault = f"{why} at {self.journal_dir}"
        self.alerts["journal"] = (f"the journal cannot be written ({self.journal_fault}): the "
                                  "game is paused until it can")
        self._fault_checked = time.monotonic()
        if first:
            log.error("journal: %s", self.alerts["journal"])
            self.notice("journal_error", reason=self.journal_fault)
        if self.stop_on_journal_fault:
            self.stop()

    def _check_journal(self) -> None:
        """While the journal cannot be written: once a second, see whether the folder takes a
        synced write again; if it does, reopen the journal and go on."""
        now = time.monotonic()
        if self.journal_fault is None or now - self._fault_checked < JOURNAL_RETRY_S:
            return
        self._fault_checked = now
        probe = self.journal_dir / ".probe"
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 4096)
                fh.flush()
                os.fsync(fh.fileno())
            probe.unlink()
            if self._fault_new_game is not None:
                (seed,) = self._fault_new_game
                self.journal_fault = None
                self.start_game(seed)
                fault: str | None = self.journal_fault  # start_game sets it when it fails again
                if fault is not None:
                    return
            elif self.table is not None and self.table.journal is not None:
                self.table.journal.close()
                self.table.journal = JournalWriter.resume(self.current_path, fsync=self.fsync)
        except (OSError, JournalError) as exc:
            with contextlib.suppress(OSError):
                probe.unlink()
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.journal_fault = f"{why} at {self.journal_dir}"
            return
        log.warning("journal: %s can be written again; the game goes on", self.journal_dir)
        self.journal_fault = None
        self.alerts.pop("journal", None)
        self.notice("journal_ok")

    def _needs_reshuffle(self, inp: Input) -> bool:
        """A Vändåtta draw from an empty stock with ``reshuffle_discards`` on: the discards
        become the new stock first (docs/rules.md §3), as the table does before the draw."""
        assert self.table is not None
        if inp.act != "draw" or not getattr(self.config.options, "reshuffle_discards", False):
            return False
        state = self.table.engine.state()
        return state.get("stock") == 0 and len(state.get("pile") or []) > 1

    def _unjournalable(self, inp: Input) -> str | None:
        """Why an input may not enter the journal (the journal reader would refuse the line,
        and the table could not resume), or None."""
        assert self.table is not None
        n = self.table.header.n_seats
        if not 0 <= inp.seat < n:
            return f"there is no seat {inp.seat} (seats 0..{n - 1})"
        spec = game_named(self.config.game)
        turn = spec.turn_button if self.config.card_source == "virtual" else None
        if inp.act not in spec.acts and inp.act != turn:
            known = ", ".join(spec.acts if turn is None else (*spec.acts, turn))
            return f"{spec.title} has no '{inp.act}' (its inputs: {known})"
        try:
            Input.from_json(inp.to_json(), n)
        except ValueError as exc:
            return str(exc)
        return None

    def translate(self, inp: Input) -> Input:
        """Complete an input the way the referee does at this table: with a virtual deck the
        seats turn their cards with a button (the slap button in Beggar My Neighbour, where
        nobody slaps; the call button in Banka bäver), and a reshuffle of a deck the referee
        knows gets the order the referee shuffled (journaled, so a replay needs no seed)."""
        assert self.table is not None
        if (inp.act == "reshuffle" and inp.stock is None and not self.table.header.observed):
            pile = self.table.state().get("pile") or []
            if pile and all(c is not None for c in pile):
                return replace(inp, stock=reshuffled(pile, random.Random(os.urandom(8))))
        if (self.config.card_source == "virtual"
                and inp.act == game_named(self.config.game).turn_button):
            return Input(inp.t, inp.seat, "lay")
        return inp

    def step(self) -> list[Verdict]:
        """Take what edges handed in, judge what the sources' progress (or the settle window)
        lets go, publish."""
        self._check_journal()
        progress = self._progress()  # before taking: what they say is in is then pushed
        self._take_pending()
        if self.table is None or self.paused:  # paused: nothing is decided, not even by time
            return []
        for source, value in progress:
            self.table.add_source(source)
            if value is not None:
                self.table.progress(source, value)
        return self.table.release(self.clock.now())

    def _sources(self) -> list[tuple[str, Source | None]]:
        """The edges that are sources of the arbiter, by name (``None``: one that cannot say
        how far it is), worked out once for each list of edges (``isinstance`` against a
        protocol costs tens of microseconds, and this is asked at every step)."""
        key = tuple(map(id, self.edges))
        if self._source_key != key:
            found: list[tuple[str, Source | None]] = []
            for edge in self.edges:
                if isinstance(edge, Source):
                    found.append((edge.source, edge))
                elif getattr(edge, "own_stamps", True):  # not known to stamp at hand-in
                    found.append((type(edge).__name__, None))
            self._source_key, self._source_list = key, found
        return self._source_list

    def _progress(self) -> list[tuple[str, int | None]]:
        """Every edge's progress as a source: ``None`` for one that cannot say now."""
        if self.config.release != "progress":
            return []
        return [(name, None if edge is None else edge.progress())
                for name, edge in self._sources()]

    def _publish(self, verdicts: list[Verdict], table_state: dict[str, Any] | None = None
                 ) -> None:
        """Hand ``verdicts`` and the state to every output (``table_state``: the table's own
        state, when the caller has it: it is built once per change)."""
        state = self.state(table_state)
        for out in self.outputs:
            try:
                out.update(verdicts, state)
            except Exception:  # an output must never stop the referee
                log.exception("output %r failed", out)

    def state(self, table_state: dict[str, Any] | None = None) -> dict[str, Any]:
        """The table state with the table id, the pause flag and the ``alerts`` (``board``:
        ``online``/``offline`` once a board spoke; ``stuck``: buttons held too long);
        ``table_state``: the table's state just built, to add them to (a copy)."""
        if table_state is not None:
            state = dict(table_state)
        else:
            state = self.table.state() if self.table is not None else self._no_game_yet()
        state["table"] = self.config.table_id
        state["paused"] = self.paused
        state["alerts"] = {**self.alerts, "stuck": [{"seat": seat, "button": button}
                                                    for seat, button in sorted(self._stuck)]}
        return state

    # -- operator ----------------------------------------------------------------------------
    def pause(self, by: str | None = None) -> None:
        """Stop accepting inputs (they are reported as ignored) and deciding anything until
        :meth:`resume`: what is held and what time would decide (a collect grace, a time
        limit) waits, and is judged at once when the game resumes, as a replay judges it.
        ``by``: who asked (the notice says it)."""
        self.paused = True
        self.notice("paused", **_by(by))

    def resume(self, by: str | None = None) -> None:
        """Accept inputs again; judge at once what waited while the game was paused."""
        self.paused = False
        self.notice("resumed", **_by(by))
        self._poke()

    def _poke(self) -> None:
        """Wake :meth:`run` to look again now (from any thread)."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wake.set)

    def end_game(self, by: str | None = None) -> None:
        """End the game now: its journal is archived and a new game is dealt."""
        self.notice("ended_by_operator", **_by(by))
        self.start_game()

    def set_game(self, game: str, seats: list[str], dealer: int,
                 options: dict[str, Any]) -> None:
        """Make this the configured game (what :meth:`start_game` deals from now on, until the
        referee stops: the configuration file is not changed), checked as the configuration
        checks it: a :class:`ConfigError` names the key (``table.seats[2]``, ``options.…``).
        A table wired with pads takes at most as many seats as it has pads."""
        raw = dict(self.configured.raw)
        raw["table"] = dict(raw.get("table") or {}, game=game, seats=list(seats),
                            dealer=dealer)
        raw["options"] = dict(options)
        new = parse_config(raw, self.configured.path)
        wired = raw.get("seats")
        if isinstance(wired, list) and wired and len(seats) > len(wired):
            raise ConfigError(self.configured.path, "table.seats",
                              f"the table has pads for {len(wired)} seats, not {len(seats)}")
        self.configured = replace(self.configured, game=new.game, seats=new.seats,
                                  dealer=new.dealer, options=new.options, raw=raw)

    def _no_game_yet(self) -> dict[str, Any]:
        """The state before the first game could be dealt (its journal waits for the disk)."""
        n = len(self.config.seats)
        return {"game": self.config.game, "seats": list(self.config.seats), "counts": [0] * n,
                "pile": [], "turn": None, "cards_played": 0, "tricks": 0, "out": [],
                "over": False, "winners": None}

    def deal_round(self) -> None:
        """Start the next round of the Vändåtta points game: shuffled and dealt by the referee
        when it knows the cards, else an observed round (faces learned as they are played)."""
        assert self.table is not None
        state = self.state()
        spec = game_named(self.config.game)
        if not spec.in_rounds:
            raise Refused(Words(N_("{game} is not played in rounds"), {"game": spec.title}))
        if state.get("phase") != "round_over":
            raise Refused(Words(N_("the round is not over")))
        t = self.clock.now()
        if self.table.header.observed:
            dealer = next_dealer(state["dealer"], len(state["counts"]), state.get("out", []))
            self.submit(Input(t, dealer, "deal"))
        else:
            self.submit(next_deal(state, int.from_bytes(os.urandom(4), "big"), t))

    def correct(self, line: int | None, card: str) -> Words:
        """Correct a misread card: input line ``line`` (as numbered in the journal file; None:
        the last card laid or drawn) gets ``card``; the game is judged again from the
        corrected journal. The journal before the correction is kept beside it. Returns what
        was changed, in words (of any language)."""
        assert self.table is not None
        try:
            new_card = parse_card(card)
        except CardError as exc:
            raise ValueError(str(exc)) from None
        journal = read_journal(self.current_path, tolerate_torn_tail=True)
        if line is None:
            pairs = zip(journal.lines, journal.inputs, strict=True)
            line = next((n for n, inp in reversed(list(pairs)) if inp.act in ("lay", "draw")),
                        None)
            if line is None:
                raise Refused(Words(N_("no card has been laid or drawn in this game yet")))
        if line not in journal.lines:
            raise Refused(Words(N_("line {line} is not an input line of {path}"),
                                {"line": line, "path": self.current_path}))
        k = journal.lines.index(line)
        old = journal.inputs[k]
        if old.act not in ("lay", "draw"):
            raise Refused(Words(N_("line {line} is a {act!r}, not a card laid or drawn"),
                                {"line": line, "act": old.act}))
        journal.inputs[k] = replace(old, card=new_card)
        assert self.table.journal is not None
        self.table.journal.close()
        try:
            self._replace_current(
                dump_journal(journal.header, journal.inputs),
                self._free_name(f"before-correction-{time.strftime('%Y%m%d-%H%M%S')}"))
        except OSError as exc:  # a full disk: the journal as it was, the game goes on
            raise Refused(Words(N_("the correction could not be written ({why}); the game "
                                   "goes on as it was"),
                                {"why": os_words(exc)})) from None
        finally:
            self._resume()
        who = seat_name(list(journal.header.seats), old.seat)
        if old.card is None:
            return Words(N_("line {line} ({seat}'s {act}): no card → {card}"),
                         {"line": line, "seat": who, "act": old.act, "card": new_card})
        return Words(N_("line {line} ({seat}'s {act}): {old} → {card}"),
                     {"line": line, "seat": who, "act": old.act, "old": old.card,
                      "card": new_card})

    # -- running -----------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Run until ``stop`` is set (or the task is cancelled)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._stop = stop or asyncio.Event()
        if self.table is None:
            self.open_game()
        started: list[Edge] = []
        try:
            for edge in self.edges:
                await edge.start(self)
                started.append(edge)
        except Exception as exc:
            for edge in reversed(started):
                with contextlib.suppress(Exception):
                    await edge.stop()
            raise EdgeError(f"{type(edge).__name__} could not start: {exc}") from exc
        self._publish([])  # every output starts from the whole picture
        try:
            while not self._stop.is_set():
                self.step()
                due = self._next_deadline()
                wait = IDLE_WAIT_S if due is None else max(0.0, (due - self.clock.now()) / 1e9)
                if (self.table is not None and len(self.table.arbiter)
                        and self.config.release == "progress" and self._sources()):
                    wait = min(wait, PROGRESS_POLL_S)  # a source may be past them any moment
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    # Just past what is due (not just before it), unless polling the sources.
                    late = 0.0 if wait <= PROGRESS_POLL_S else 0.0005
                    await asyncio.wait_for(self._wake.wait(),
                                           timeout=min(wait, IDLE_WAIT_S) + late)
        finally:
            for edge in reversed(self.edges):
                with contextlib.suppress(Exception):
                    await edge.stop()
            self.step()
            self.close()

    def close(self) -> None:
        """Close the journal and let the folder's lock go (what the end of the process does)."""
        if self.table is not None and self.table.journal is not None:
            self.table.journal.close()
        self._folder_lock.release()

    def _next_deadline(self) -> int | None:
        """When the loop must look again without an input: the arbiter's next release, the end
        of a collect grace (judged once the window has passed it), a running time limit;
        none while the game is paused."""
        if self.table is None or self.paused:
            return None
        due = self.table.arbiter.next_due()
        deadline = self.table.engine.next_deadline()
        if deadline is not None:
            until = deadline + self._settle_ns()
            due = until if due is None else min(due, until)
        return due

    def stop(self) -> None:
        """Ask :meth:`run` to return (from any thread, or a signal handler)."""
        if self._stop is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            if self._wake is not None:
                self._loop.call_soon_threadsafe(self._wake.set)
