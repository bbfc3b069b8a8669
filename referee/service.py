"""The referee service: ``referee run`` at a real table, and the same loop in simulation.

One asyncio loop, no hidden threads of ours: edges (GPIO pads, the serial board, the console,
virtual players) call :meth:`RefereeService.submit` — from any thread — with an :class:`Input`
stamped on the table clock; the service journals it (flushed and synced to disk), holds it in the
arbiter's settle window, judges it, and hands the verdicts and state to the outputs (the MQTT
feed, seat LEDs, the terminal). Outputs must not block.

Recovery: the game being played is always ``<journal_dir>/current.jsonl``. On start, a current
journal whose game is not over is replayed through the same code and the game goes on from
there; the table clock is shifted so that time keeps increasing across a reboot. A finished game's
journal is archived under its start time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from referee.cards import CardError, parse_card
from referee.config import ConfigError, TableConfig, load_config
from referee.journal import (
    JournalError,
    JournalHeader,
    JournalWriter,
    dump_journal,
    read_journal,
)
from referee.model import Input, Verdict
from referee.table import Table

log = logging.getLogger("referee.service")

CURRENT = "current.jsonl"
#: The longest the loop sleeps with nothing due: only an input (which wakes it) changes the game.
IDLE_WAIT_S = 1.0


class TableClock:
    """The table clock in ns: CLOCK_MONOTONIC plus an offset (so a resumed game's time grows)."""

    def __init__(self, offset_ns: int = 0, source: Callable[[], int] = time.monotonic_ns) -> None:
        self.offset_ns = offset_ns
        self.source = source

    def now(self) -> int:
        """The table time now."""
        return self.source() + self.offset_ns

    def from_monotonic(self, mono_ns: int) -> int:
        """A CLOCK_MONOTONIC timestamp (a GPIO edge, a synced board tick) on the table clock."""
        return mono_ns + self.offset_ns


class EdgeError(RuntimeError):
    """An edge (GPIO pads, the board, the console, the feed) could not start."""


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


class RefereeService:
    """One table: the journal on disk, the arbiter, the engine and the outputs."""

    def __init__(self, config: TableConfig, *, clock: TableClock | None = None,
                 outputs: Iterable[Output] = (), edges: Iterable[Edge] = (),
                 fsync: bool = True) -> None:
        self.config = config
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

    # -- games and journals ----------------------------------------------------------------
    @property
    def current_path(self) -> Path:
        """The journal of the game being played."""
        return self.journal_dir / CURRENT

    def open_game(self, *, keep_finished: bool = False) -> None:
        """Resume the current journal's game if it is not over, else start a new game; with
        ``keep_finished`` a finished game is kept as it is (to report its result)."""
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        if self.current_path.exists():
            try:
                self._resume(keep_finished=keep_finished)
                return
            except JournalError as exc:
                broken = self.current_path.with_suffix(f".broken-{int(time.time())}.jsonl")
                self.current_path.rename(broken)
                log.error("cannot resume %s (%s); kept it as %s", self.current_path, exc, broken)
        self.start_game()

    def _resume(self, *, keep_finished: bool = False) -> None:
        journal = read_journal(self.current_path, tolerate_torn_tail=True)
        table = Table(journal.header, settle_ns=self._settle_ns())
        for inp in journal.inputs:
            table.push(inp)
        table.flush()
        if table.engine.over and not keep_finished:
            table_state = table.state()
            self._archive()
            log.info("the journal's game was over (%s); starting a new one", table_state["winners"])
            self.start_game()
            return
        last_t = journal.inputs[-1].t if journal.inputs else 0
        # Keep table time increasing across a reboot: CLOCK_MONOTONIC starts again at boot.
        gap = last_t + 1_000_000 - self.clock.source()
        if gap > self.clock.offset_ns:
            self.clock.offset_ns = gap
        table.journal = JournalWriter(self.current_path, fsync=self.fsync)
        self._use(table)
        self.resumed = True
        log.info("resumed %s: %d inputs, table clock offset %d ns", self.current_path,
                 len(journal.inputs), self.clock.offset_ns)
        self._publish(table.verdicts[-8:])

    def start_game(self, seed: int | None = None) -> None:
        """Deal a new game: shuffled with ``seed`` (or the configured seed; a virtual deck
        without one gets a fresh seed); a board or console table without a seed is observed."""
        cfg = self.config
        if self.table is not None:
            self.table.flush()  # judge what the settle window still holds, in the old game
            if self.table.journal is not None:
                self.table.journal.close()
            if self.current_path.exists():
                self._archive()
        if seed is None:
            seed = cfg.seed
        if cfg.card_source == "virtual" and seed is None:
            seed = int.from_bytes(os.urandom(4), "big")
        # A board or console table with a seed was dealt from that shuffle (the cards scanned
        # at the deal); without one it is observed: faces are learned as cards are laid.
        header = JournalHeader(cfg.game, cfg.seats, cfg.dealer, cfg.options, seed).resolved()
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        writer = JournalWriter(self.current_path, header, fsync=self.fsync)
        self._use(Table(header, settle_ns=self._settle_ns(), journal=writer))
        self.resumed = False
        self._publish([])

    def _use(self, table: Table) -> None:
        table.listeners.append(lambda verdicts, _state: self._publish(verdicts))
        self.table = table

    def _archive(self) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.journal_dir / f"{stamp}-{self.config.game}.jsonl"
        k = 1
        while target.exists():
            k += 1
            target = self.journal_dir / f"{stamp}-{self.config.game}-{k}.jsonl"
        self.current_path.rename(target)

    def _settle_ns(self) -> int:
        return int(self.config.settle_ms * 1_000_000)

    # -- inputs ------------------------------------------------------------------------------
    def submit(self, inp: Input) -> None:
        """Hand in an input from any thread; ``inp.t`` is on the table clock."""
        with self._lock:
            self._pending.append(inp)
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wake.set)

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
        self._publish([Verdict(self.clock.now(), kind, fields)])

    def _take_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for inp in pending:
            if self.table is None:
                continue
            if self.paused:
                self.notice("ignored", seat=inp.seat, act=inp.act, reason="the game is paused")
                continue
            problem = self._unjournalable(inp)
            if problem:
                self.notice("rejected", seat=inp.seat, act=inp.act, reason=problem)
                continue
            if self._needs_reshuffle(inp):
                self.table.push(self.translate(Input(inp.t, inp.seat, "reshuffle")))
            self.table.push(self.translate(inp))

    def _needs_reshuffle(self, inp: Input) -> bool:
        """A Vändåtta draw from an empty stock with ``reshuffle_discards`` on: the discards
        become the new stock first (RULES.md §3), as the table does before the draw."""
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
                stock = [parse_card(c) for c in pile[:-1]]
                random.Random(os.urandom(8)).shuffle(stock)
                return replace(inp, stock=tuple(stock))
        if self.config.card_source != "virtual" or inp.act not in ("slap", "call"):
            return inp
        game = self.config.game
        if (game == "beggar-my-neighbour" and inp.act == "slap") or (
                game == "banka-bever" and inp.act == "call"):
            return Input(inp.t, inp.seat, "lay")
        return inp

    def step(self) -> list[Verdict]:
        """Take what edges handed in, judge what the settle window lets go, publish."""
        self._take_pending()
        if self.table is None:
            return []
        return self.table.release(self.clock.now())

    def _publish(self, verdicts: list[Verdict]) -> None:
        if self.table is None:
            return
        state = self.state()
        for out in self.outputs:
            try:
                out.update(verdicts, state)
            except Exception:  # an output must never stop the referee
                log.exception("output %r failed", out)

    def state(self) -> dict[str, Any]:
        """The table state with the table id, the pause flag and the ``alerts`` (``board``:
        ``online``/``offline`` once a board spoke; ``stuck``: buttons held too long)."""
        assert self.table is not None
        state = self.table.state()
        state["table"] = self.config.table_id
        state["paused"] = self.paused
        state["alerts"] = {**self.alerts, "stuck": [{"seat": seat, "button": button}
                                                    for seat, button in sorted(self._stuck)]}
        return state

    # -- operator ----------------------------------------------------------------------------
    def pause(self) -> None:
        """Stop accepting inputs (they are reported as ignored) until :meth:`resume`."""
        self.paused = True
        self.notice("paused")

    def resume(self) -> None:
        """Accept inputs again."""
        self.paused = False
        self.notice("resumed")

    def end_game(self) -> None:
        """End the game now: its journal is archived and a new game is dealt."""
        self.notice("ended_by_operator")
        self.start_game()

    def deal_round(self) -> None:
        """Start the next round of the Vändåtta points game: shuffled and dealt by the referee
        when it knows the cards, else an observed round (faces learned as they are played)."""
        assert self.table is not None
        state = self.state()
        if state.get("game") != "vandatta":
            raise ValueError("only Vändåtta is played in rounds")
        if state.get("phase") != "round_over":
            raise ValueError("the round is not over")
        t = self.clock.now()
        if self.table.header.observed:
            out = set(state.get("out", []))
            n = len(state["counts"])
            dealer = next((state["dealer"] + k) % n for k in range(1, n + 1)
                          if (state["dealer"] + k) % n not in out)
            self.submit(Input(t, dealer, "deal"))
        else:
            from referee.simulate import next_deal

            self.submit(next_deal(state, int.from_bytes(os.urandom(4), "big"), t))

    def correct(self, line: int, card: str) -> str:
        """Correct a misread card: input line ``line`` (as numbered in the journal file) gets
        ``card``; the game is judged again from the corrected journal. The journal before the
        correction is kept beside it. Returns what was changed, in words."""
        assert self.table is not None
        try:
            new_card = parse_card(card)
        except CardError as exc:
            raise ValueError(str(exc)) from None
        journal = read_journal(self.current_path, tolerate_torn_tail=True)
        if line not in journal.lines:
            raise ValueError(f"line {line} is not an input line of {self.current_path}")
        k = journal.lines.index(line)
        old = journal.inputs[k]
        if old.act not in ("lay", "draw"):
            raise ValueError(f"line {line} is a {old.act!r}, not a card laid or drawn")
        journal.inputs[k] = replace(old, card=new_card)
        assert self.table.journal is not None
        self.table.journal.close()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        os.replace(self.current_path, self.journal_dir / f"before-correction-{stamp}.jsonl")
        tmp = self.current_path.with_suffix(".tmp")
        tmp.write_text(dump_journal(journal.header, journal.inputs), encoding="utf-8")
        os.replace(tmp, self.current_path)
        self._resume()
        return f"line {line}: {old.card} → {new_card}"

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
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(),
                                           timeout=min(wait, IDLE_WAIT_S) + 0.0005)
        finally:
            for edge in reversed(self.edges):
                with contextlib.suppress(Exception):
                    await edge.stop()
            self.step()
            if self.table is not None and self.table.journal is not None:
                self.table.journal.close()

    def _next_deadline(self) -> int | None:
        """When the loop must look again without an input: the arbiter's next release, the end
        of a collect grace (judged once the window has passed it), a running time limit."""
        assert self.table is not None
        due = self.table.arbiter.next_due()
        engine = self.table.engine
        if engine.over:
            return due
        claim = engine.state().get("claim")
        if claim is not None:
            until = claim["until"] + self._settle_ns()
            due = until if due is None else min(due, until)
        if getattr(self.config.options, "time_limit_s", None):
            soon = self.clock.now() + 50_000_000
            due = soon if due is None else min(due, soon)
        return due

    def stop(self) -> None:
        """Ask :meth:`run` to return (from any thread, or a signal handler)."""
        if self._stop is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            if self._wake is not None:
                self._loop.call_soon_threadsafe(self._wake.set)


# -- the console card source and operator console ----------------------------------------------
CONSOLE_HELP = """\
Inputs (seat number first):  lay SEAT [CARD] | slap SEAT | play SEAT CARD [CARD…] [as CARD]
                             draw SEAT [CARD] | pass SEAT | call SEAT | reshuffle SEAT
Operator:                    pause | resume | end | new | deal | correct LINE CARD | state
                             help | quit
"""


def parse_console_line(text: str, t: int) -> Input | str:
    """Turn a typed line into an Input stamped ``t``, or return an operator command word."""
    words = text.strip().split()
    if not words:
        return ""
    cmd = words[0].lower()
    if cmd in ("pause", "resume", "end", "new", "deal", "state", "help", "quit", "correct"):
        return text.strip()
    if cmd not in ("lay", "slap", "play", "draw", "pass", "call", "reshuffle"):
        raise ValueError(f"unknown command {words[0]!r}; type 'help'")
    if len(words) < 2 or not words[1].isdigit():
        raise ValueError(f"'{cmd}' needs the seat number first, e.g. '{cmd} 1'")
    seat = int(words[1])
    rest = words[2:]
    try:
        if cmd in ("lay", "draw"):
            card = parse_card(" ".join(rest)) if rest else None
            return Input(t, seat, cmd, card=card)
        if cmd == "play":
            declared = None
            if "as" in [w.lower() for w in rest]:
                k = [w.lower() for w in rest].index("as")
                declared = parse_card(" ".join(rest[k + 1:]))
                rest = rest[:k]
            if not rest:
                raise ValueError("'play' needs the cards laid, e.g. 'play 0 QH QS'")
            return Input(t, seat, "play", cards=tuple(parse_card(w) for w in rest),
                         as_=declared)
        if cmd == "call":
            return Input(t, seat, "call", call="lappen")
        return Input(t, seat, cmd)
    except CardError as exc:
        raise ValueError(str(exc)) from None


class ConsoleEdge:
    """Typed inputs and operator commands from a text stream (standard input by default)."""

    def __init__(self, stream: Any = None, echo: Callable[[str], None] | None = None) -> None:
        self.stream = stream or sys.stdin
        self.echo = echo or (lambda text: print(text, flush=True))
        self._task: asyncio.Task[None] | None = None

    async def start(self, service: RefereeService) -> None:
        """Read lines in the background."""
        self._task = asyncio.create_task(self._read(service))

    async def _read(self, service: RefereeService) -> None:
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, self.stream.readline)
            if not line:
                return
            self.handle(service, line)

    def handle(self, service: RefereeService, line: str) -> None:
        """Act on one typed line."""
        try:
            parsed = parse_console_line(line, service.clock.now())
        except ValueError as exc:
            self.echo(f"? {exc}")
            return
        if isinstance(parsed, Input):
            service.submit(parsed)
            return
        words = parsed.split()
        if not words:
            return
        cmd = words[0].lower()
        try:
            if cmd == "pause":
                service.pause()
            elif cmd == "resume":
                service.resume()
            elif cmd == "end":
                service.end_game()
            elif cmd == "new":
                service.start_game()
            elif cmd == "deal":
                service.deal_round()
            elif cmd == "state":
                self.echo(json.dumps(service.state(), ensure_ascii=False))
            elif cmd == "help":
                self.echo(CONSOLE_HELP)
            elif cmd == "quit":
                service.stop()
            elif cmd == "correct":
                if len(words) < 3 or not words[1].isdigit():
                    raise ValueError("usage: correct LINE CARD (LINE as numbered in the journal)")
                self.echo(service.correct(int(words[1]), " ".join(words[2:])))
        except ValueError as exc:
            self.echo(f"? {exc}")

    async def stop(self) -> None:
        """Stop reading."""
        if self._task is not None:
            self._task.cancel()


class SocketConsole:
    """The operator console on a Unix socket, for a referee that runs as a service with no
    terminal: ``referee console --socket PATH`` connects to it. Each line sent is handled like
    a typed console line; the replies end with a line holding a single ``.``. ``quit`` closes
    the connection (not the referee)."""

    END = "."

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._server: asyncio.AbstractServer | None = None

    async def start(self, service: RefereeService) -> None:
        """Listen on the socket (a stale socket file from a crash is replaced)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_socket():
            self.path.unlink()

        async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            replies: list[str] = []
            console = ConsoleEdge(stream=None, echo=replies.append)
            try:
                while line := await reader.readline():
                    text = line.decode("utf-8", "replace")
                    if text.strip().lower() == "quit":
                        break
                    replies.clear()
                    console.handle(service, text)
                    writer.write("".join(f"{r}\n" for r in [*replies, self.END]).encode())
                    await writer.drain()
            except ConnectionError:
                pass
            finally:
                writer.close()

        self._server = await asyncio.start_unix_server(client, path=str(self.path))
        os.chmod(self.path, 0o660)  # the referee's group may steer the table

    async def stop(self) -> None:
        """Stop listening and remove the socket file."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        with contextlib.suppress(OSError):
            self.path.unlink()


def console_client(path: str, commands: list[str], stdin: Any = None,
                   out: Callable[[str], None] = print) -> int:
    """Send console lines to a running referee's socket and print its replies."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        reader = sock.makefile("r", encoding="utf-8")
        lines = commands or iter((stdin or sys.stdin).readline, "")
        for line in lines:
            sock.sendall((line.rstrip("\n") + "\n").encode())
            if line.strip().lower() == "quit":
                break
            for reply in iter(reader.readline, ""):
                if reply.rstrip("\n") == SocketConsole.END:
                    break
                out(reply.rstrip("\n"))
    return 0


class LogOutput:
    """Writes each verdict to the log in plain words."""

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Log the verdicts."""
        from referee.describe import describe

        for v in verdicts:
            log.info("%s", describe(v.to_json(), state.get("seats") or []))


# -- command line --------------------------------------------------------------------------------
def _cmd_run(args: argparse.Namespace) -> int:
    from referee.cli import CommandError

    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    if config.card_source == "console" and args.no_console:
        raise CommandError(f"{config.path}: table.card_source: \"console\" needs the console "
                           "(leave out --no-console, or use \"board\" or \"virtual\")")
    def early_stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)  # before the loop runs: every journal line is already on disk

    previous = signal.signal(signal.SIGTERM, early_stop)
    try:
        try:
            service = build_service(config, console=not args.no_console)
            service.open_game()
        except (ConfigError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"{config.path}: table.journal_dir: cannot use "
                               f"{config.journal_dir}: {exc.strerror}") from None

        async def serve() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError):
                    loop.add_signal_handler(sig, service.stop)
            await service.run()

        try:
            asyncio.run(serve())
        except EdgeError as exc:
            raise CommandError(str(exc)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def build_service(config: TableConfig, *, console: bool = True,
                  pin_factory: Any = None) -> RefereeService:
    """The service with the edges and outputs the configuration names: the console, the GPIO
    pads and seat LEDs (``[hardware]``/``[[seats]]``), the MQTT feed (``[broker]``)."""
    outputs: list[Output] = [LogOutput()]
    edges: list[Edge] = []
    if console:
        edges.append(ConsoleEdge())
    if config.console_socket is not None:
        edges.append(SocketConsole(config.console_socket))
    raw = config.raw
    if "seats" in raw or "hardware" in raw:
        from hardware import config as hwconfig
        from hardware.pads import SeatLeds, make_pin_factory
        from hardware.slaps import GpioEdge

        try:
            hw = hwconfig.parse_config(raw)
        except hwconfig.ConfigError as exc:
            raise ConfigError(config.path, exc.key, exc.reason) from None
        if len(hw.seats) != len(config.seats):
            raise ConfigError(config.path, "seats",
                              f"{len(hw.seats)} [[seats]] pin entries for "
                              f"{len(config.seats)} seats in table.seats")
        try:
            factory = pin_factory or make_pin_factory(hw)
        except Exception as exc:  # lgpio missing, no /dev/gpiochip, no permission …
            raise ConfigError(
                config.path, "hardware.pin_factory",
                f"the {hw.factory_name()!r} GPIO backend cannot start here ({exc}); on the Pi "
                "install it with pip install 'card-referee[pi]' and add the user to the gpio "
                "group; without GPIO use pin_factory = \"mock\" (or GPIOZERO_PIN_FACTORY=mock)"
            ) from None
        edges.append(GpioEdge(hw, pin_factory=factory))
        if any(seat.led is not None for seat in hw.seats):
            outputs.append(SeatLeds(hw, pin_factory=factory))
    if config.card_source == "board" or config.board_port is not None:
        from firmware_bridge.edge import BoardEdge

        board = BoardEdge.from_config(config)
        edges.append(board)
        outputs.append(board)
    if config.broker is not None:
        feed = FeedOutput(config)
        edges.append(feed)
        outputs.append(feed)
    return RefereeService(config, outputs=outputs, edges=edges)


class FeedOutput:
    """The MQTT feed as an output of the service (and started/stopped with it)."""

    def __init__(self, config: TableConfig) -> None:
        from referee.feed import TableFeed

        assert config.broker is not None
        self.feed = TableFeed(config.broker.url, config.table_id,
                              username=config.broker.username,
                              password=config.broker.password, seats=list(config.seats))
        self._task: asyncio.Task[None] | None = None

    async def start(self, service: RefereeService) -> None:
        """Connect in the background (the referee never waits for the broker)."""
        self._task = asyncio.create_task(self.feed.run())

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Queue the change for the broker."""
        self.feed.publish(state, verdicts)

    async def stop(self) -> None:
        """Publish ``offline`` and disconnect."""
        self.feed.stop()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 3)


def register(sub: Any) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser(
        "run", help="referee a real table from its configuration",
        description="Referee a real table: slap and call buttons on GPIO, cards from the "
        "serial board, typed at the console or dealt by a virtual deck, the game published "
        "to MQTT. Every input is journaled and synced to disk before it is judged; after a "
        "crash or power cut the same command resumes the game where it was.",
    )
    p.add_argument("--config", required=True, help="the table's TOML configuration file")
    p.add_argument("--no-console", action="store_true",
                   help="do not read typed inputs and operator commands from standard input")
    p.add_argument("--verbose", "-v", action="store_true", help="log debugging detail")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "console", help="the operator console of a running referee (over its socket)",
        description="Send operator commands and typed inputs to a referee that runs as a "
        "service ([table] console_socket in its configuration), and print its replies. "
        "Without COMMAND, reads lines from standard input. Type 'help' for the commands.",
    )
    p.add_argument("--socket", required=True, help="the referee's console socket")
    p.add_argument("command", nargs="*", help="one console line, e.g. pause, or 'lay 1 QH'")
    p.set_defaults(func=_cmd_console)


def _cmd_console(args: argparse.Namespace) -> int:
    from referee.cli import CommandError

    try:
        return console_client(args.socket, [" ".join(args.command)] if args.command else [])
    except OSError as exc:
        raise CommandError(f"cannot reach the referee at {args.socket}: {exc.strerror or exc} "
                           "(is it running, with [table] console_socket set?)") from None
