"""``referee simulate``: a whole game between virtual players, shown live in the terminal,
printed, journaled or published to a broker; with ``--full-stack`` played at a table run by
the very service of ``referee run``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardtable.commands.argtypes import (
    add_language_option,
    add_web_options,
    pace,
    path_name,
    settle_window,
    whole_number,
)
from cardtable.config import table_id_problem
from cardtable.errors import CommandError, TableBusyError, TemporaryFailure, startup_failure
from cardtable.extras import require
from cardtable.i18n import Language, table_language
from cardtable.simulate import Simulation, Step
from referee.describe import (
    counted,
    describe,
    describe_input,
    format_time,
    join_names,
    tally_words,
)
from referee.errors import JournalExistsError, JournalWriteError, shown
from referee.games import GAME_NAMES, games
from referee.model import Input, Verdict
from referee.options import OptionError, options_to_json, parse_option_assignment

if TYPE_CHECKING:
    from cardtable.service import RefereeService


def _cmd_simulate(args: argparse.Namespace) -> int:
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # a pipe too
    options: dict[str, Any] = {}
    if args.broker is not None and not args.broker.strip():  # it had been taken as no broker
        raise CommandError("--broker is empty: give the broker's URL, or leave --broker out")
    if args.table and not args.broker:
        raise CommandError("--table names the feed's table id: give --broker too")
    if args.overwrite and not args.journal:
        raise CommandError("--overwrite goes with --journal PATH")
    if args.camera and not args.full_stack:
        raise CommandError("--camera goes with --full-stack")
    if args.speech and not args.full_stack:
        raise CommandError("--speech goes with --full-stack: the speaker is an output of "
                           "`referee run`'s service")
    if args.camera:
        require("camera", "referee simulate --camera")
    if args.settle_ms is not None and not args.full_stack:
        raise CommandError("--settle-ms goes with --full-stack: the settle window is the "
                           "service's")
    if args.journal_dir and not args.full_stack:
        raise CommandError("--journal-dir goes with --full-stack (use --journal PATH otherwise)")
    if args.operator and not args.full_stack:
        raise CommandError("--operator goes with --full-stack: the operator page steers the "
                           "service of `referee run`")
    if args.speed is not None and (args.fast or args.json) and not args.full_stack:
        flag = "--fast" if args.fast else "--json"
        raise CommandError(f"--speed paces the live view, and {flag} prints the game at once: "
                           "give one of the two")
    if (args.bind is not None or args.port is not None) and not args.operator:
        raise CommandError("--bind and --port go with --operator")
    if args.table is not None and (problem := table_id_problem(args.table)) is not None:
        raise CommandError(f"--table {shown(args.table)}: the table id {problem}")
    try:
        given, lang = table_language(args.option or [], args.lang)
        for text in given:
            key, value = parse_option_assignment(text, games[args.game].options)
            if key in options:  # the last had won without a word
                raise CommandError(f"-o {shown(key)} is given twice: give it once")
            options[key] = value
        # A bad option or seat count reads the same with --full-stack as without it.
        sim = Simulation(args.game, args.players, args.seed, options=options,
                         dealer=args.dealer,
                         journal_path=None if args.full_stack else args.journal,
                         overwrite=args.overwrite)
    except JournalExistsError:
        if Path(args.journal).is_dir():  # "add --overwrite" would not do
            raise CommandError(f"--journal {args.journal}: a folder; give a file's path (a "
                               "journal holds one game)") from None
        raise CommandError(f"--journal {args.journal}: the file already exists (a journal holds "
                           "one game); give another path, or add --overwrite to replace "
                           "it") from None
    except (OptionError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    except JournalWriteError as exc:  # names the journal and why
        raise CommandError(str(exc)) from None
    except OSError as exc:  # a folder, a device: in words, not the errno's form
        raise CommandError(f"--journal {args.journal}: cannot write the journal there: "
                           f"{exc.strerror or exc}") from None
    if args.full_stack:
        return _cmd_full_stack(args, options, lang)
    args.speed = 1.0 if args.speed is None else args.speed
    feed = None
    if args.broker:
        from cardtable.feed import TableFeed, parse_broker_url

        try:
            parse_broker_url(args.broker)
        except ValueError as exc:
            raise CommandError(f"--broker: {exc}") from None
        feed = TableFeed(args.broker, args.table or "sim", seats=list(sim.header.seats),
                         language=lang.code)
    try:
        asyncio.run(_play(sim, args, feed, lang))
    finally:
        if sim.table.journal is not None:
            sim.table.journal.close()
    return 0


def _cmd_full_stack(args: argparse.Namespace, options: dict[str, Any], lang: Language) -> int:
    from cardtable.errors import ConfigError
    from cardtable.fullstack import full_stack_config, journal_dir_arg, run_full_stack

    if args.journal:
        raise CommandError("--full-stack journals to --journal-dir (the service's journal)")
    try:
        journal_dir = journal_dir_arg(args.journal_dir)
    except (FileExistsError, NotADirectoryError):  # a file where the folder should be
        raise CommandError(f"--journal-dir {args.journal_dir}: not a folder") from None
    except OSError as exc:  # permission, a full or read-only disk: as referee run says it
        raise TemporaryFailure(f"--journal-dir {args.journal_dir}: cannot make the folder "
                               f"({exc.strerror or exc})") from None
    temporary = args.journal_dir is None  # a folder of our own: removed once the game is told
    fast = args.json or args.fast
    speed, settle_ms = full_stack_pace(fast=fast, camera=bool(args.camera), speed=args.speed,
                                       settle_ms=args.settle_ms)
    doc = full_stack_config(args.game, args.players, args.seed, journal_dir=journal_dir,
                            options=options, dealer=args.dealer, broker=args.broker,
                            table_id=args.table or "sim", settle_ms=settle_ms,
                            card_source="camera" if args.camera else "board",
                            pads=8 if args.operator else None, language=lang.code)
    if args.speech:
        doc["speech"] = {"say": args.speech}
    # A terminal shows the table live; anything else gets the verdicts as lines as they come
    # (and so does a table steered from the operator page, whose address is said first).
    view: Any = (_LiveView(lang) if not fast and sys.stdout.isatty() and not args.operator
                 else _VerdictLines(as_json=args.json, lang=lang))
    site = None
    if args.operator:
        from cardtable.config import DEFAULT_BIND, DEFAULT_PORT

        site = (args.bind or DEFAULT_BIND, DEFAULT_PORT if args.port is None else args.port)

    async def play() -> RefereeService:
        stop = asyncio.Event()
        if site is not None:  # until Ctrl-C: the operator deals game after game
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError):
                    loop.add_signal_handler(sig, stop.set)
        return await run_full_stack(
            doc, seed=args.seed, speed=speed, outputs=[view], camera_deck=args.camera or "touati",
            on_ready=view.bind if isinstance(view, _VerdictLines) else None, site=site,
            announce=lambda text: print(text, flush=True), stop=stop)

    try:
        service = asyncio.run(play())
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    except TableBusyError as exc:
        raise TemporaryFailure(str(exc)) from None
    except JournalWriteError as exc:
        temporary = False  # keep what was written
        raise TemporaryFailure(f"the game stopped: {exc}; the journal so far is in "
                               f"{journal_dir}") from None
    except OSError as exc:  # what is in the journal folder: as referee run says it
        inside = bool(exc.filename) and Path(str(exc.filename)).resolve().is_relative_to(
            Path(journal_dir).resolve())  # a relative --journal-dir too
        raise startup_failure(exc, f"--journal-dir {journal_dir}: cannot use it" if inside
                              else "") from None
    finally:
        view.close()
        if temporary:
            shutil.rmtree(journal_dir, ignore_errors=True)
    assert service.table is not None
    state = service.state()
    seats = state["seats"]
    if args.json:
        print(json.dumps({"state": state}, ensure_ascii=False))
    else:
        winners = (join_names([seats[w] for w in state.get("winners") or []], lang)
                   or lang.gettext("nobody yet"))
        kept = (lang.gettext("journal not kept (give --journal-dir DIR to keep it)")
                if temporary else lang.gettext("journal in {folder}").format(folder=journal_dir))
        print(lang.ngettext("{game} on the full stack: {n} card played; winner: {winners}; "
                            "{kept}",
                            "{game} on the full stack: {n} cards played; winner: {winners}; "
                            "{kept}", state["cards_played"]).format(
            game=games[args.game].title, n=state["cards_played"], winners=winners,
            kept=kept))
    return 0


def full_stack_pace(*, fast: bool, camera: bool, speed: float | None,
                    settle_ms: float | None) -> tuple[float, float]:
    """The players' pace and the settle window (ms) of a full-stack game, from the command's
    options (``speed`` and ``settle_ms`` None when not given: a given ``--speed`` is the pace,
    ``--speed 1`` too).

    The table runs on the real clock. ``--fast`` (and ``--json``): the players act a hundred
    times faster than people and the settle window is 2 ms (their presses still lie further
    apart than that); the table's own waits (a collect grace) stay real time. The camera
    films in real time: its players do not hurry, and its window is the camera's."""
    from cardtable.config import DEFAULT_SETTLE_MS
    from hardware.camera.config import CAMERA_SETTLE_MS

    if camera:
        return speed or 1.0, CAMERA_SETTLE_MS if settle_ms is None else settle_ms
    if fast:
        return (100.0 if speed is None else speed), (2.0 if settle_ms is None else settle_ms)
    return speed or 1.0, DEFAULT_SETTLE_MS if settle_ms is None else settle_ms


class _VerdictLines:
    """The full stack's game verdicts printed as they are judged, one line each (words, or
    JSON with ``as_json``), flushed at once: into a pipe or a file as much as on a terminal.
    The verdicts of a game resumed from its journal come first."""

    def __init__(self, *, as_json: bool, lang: Language) -> None:
        self.as_json = as_json
        self.lang = lang
        self.service: RefereeService | None = None
        self._table: Any = None
        self._printed = 0

    def bind(self, service: RefereeService) -> None:
        """Print for ``service`` (its verdicts so far at once)."""
        self.service = service
        self.close()

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """As an output of the service: print the game's new verdicts."""
        self.close()

    def close(self) -> None:
        """Print what is not printed yet."""
        table = self.service.table if self.service is not None else None
        if table is None:
            return
        if table is not self._table:
            self._table, self._printed = table, 0
        new = table.verdicts[self._printed:]
        self._printed += len(new)
        try:
            _print(new, list(table.header.seats), as_json=self.as_json, lang=self.lang)
        except BrokenPipeError:  # the reader has gone (| head): nobody to play for
            service, self.service = self.service, None
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            if service is not None:
                service.stop()


async def _play(sim: Simulation, args: argparse.Namespace, feed: Any, lang: Language) -> None:
    """Play the game: print it (``--json``/``--fast``) or show it live, publishing each step to
    the feed when there is one. Live into a pipe or file (no terminal to redraw), the verdicts
    are printed as lines at the same pace."""
    paced = not (args.json or args.fast)
    live = paced and sys.stdout.isatty()
    if feed is not None:
        feed_task = asyncio.create_task(feed.run())
        if not await feed.wait_connected(3.0):
            print(f"referee: broker {args.broker} not reachable yet; the game goes on and the "
                  "feed keeps trying", file=sys.stderr)
    seats = list(sim.header.seats)
    view = _LiveView(lang) if live else None
    if view is not None:
        view.console.print(_header(args, sim, lang))
    last_t: int | None = None
    # In a game of hands the plays are the game (few of them give a verdict): tell them too.
    plays = games[sim.header.game].in_rounds and not args.json
    try:
        if feed is None and not paced:  # nothing reads the state: the fast path
            for _t, inp, verdicts in sim.moves():
                if plays and inp is not None:
                    _print_play(inp, seats, lang)
                _print(verdicts, seats, as_json=args.json, lang=lang)
        if feed is not None:
            feed.publish(sim.table.state(), [])
        for step in sim.steps() if feed is not None or paced else ():
            if feed is not None:
                feed.publish(step.state, step.verdicts)
            if args.json or not live:
                if plays and step.input is not None:
                    _print_play(step.input, seats, lang)
                _print(step.verdicts, seats, as_json=args.json, lang=lang)
            if paced:
                if last_t is not None and args.speed > 0:
                    await asyncio.sleep(min((step.t - last_t) / 1e9 / args.speed, 2.0))
                if view is not None:
                    view.show(step)
            elif feed is not None:
                await asyncio.sleep(0)  # let the feed publish as the game goes
            last_t = step.t
    finally:
        if view is not None:
            view.close()
        if feed is not None:
            feed.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(feed_task, 5)
    if args.json:
        print(json.dumps({"state": sim.table.state()}, ensure_ascii=False))
    else:
        print(_summary(sim, lang))
    if feed is not None and feed.connections == 0:
        raise TemporaryFailure(f"the broker {args.broker} never answered: nothing of the game "
                               "was published")
    if feed is not None and feed.dropped_events:
        print(f"referee: {counted(feed.dropped_events, 'verdict')} not published while the "
              "broker was away (the displays have the final state)", file=sys.stderr)


def _print(verdicts: list[Verdict], seats: list[str], *, as_json: bool,
           lang: Language) -> None:
    """Print verdicts as JSON lines or as words (in ``lang``)."""
    for v in verdicts:
        if as_json:
            print(json.dumps(v.to_json(), ensure_ascii=False))
        else:
            print(f"{format_time(v.t)}  {describe(v.to_json(), seats, lang)}")


def _header(args: argparse.Namespace, sim: Simulation, lang: Language) -> str:
    """What a live game is before it starts: the game, the seats, how long it takes at this
    pace, and how to have it sooner (the same seed plays the same game: it is played first
    here, in milliseconds, to know its length)."""
    probe = Simulation(sim.header.game, sim.header.n_seats, args.seed,
                       options=options_to_json(sim.header.options),  # type: ignore[arg-type]
                       dealer=sim.header.dealer)
    probe.run()
    verdicts = probe.table.verdicts
    seconds = (verdicts[-1].t / 1e9 if verdicts else 0.0) / args.speed
    minutes, whole = round(seconds / 60), max(1, round(seconds))
    length = (lang.ngettext("about {n} minute", "about {n} minutes", minutes).format(n=minutes)
              if seconds >= 90 else
              lang.ngettext("about {n} second", "about {n} seconds", whole).format(n=whole))
    return lang.gettext("{game}: {seats} (seed {seed}), shown as it is played: {length}. --fast "
                        "prints the whole game at once, --speed 4 plays it four times faster; "
                        "Ctrl-C stops.").format(game=games[sim.header.game].title,
                                                seats=", ".join(sim.header.seats),
                                                seed=args.seed, length=length)


def _print_play(inp: Input, seats: list[str], lang: Language) -> None:
    """Print an input of a game of hands in words (``Anna plays the 8 of spades``)."""
    if inp.act != "deal":  # the round's deal is told by the round's verdicts
        print(f"{format_time(inp.t)}  {describe_input(inp.to_json(), seats, tr=lang)}")


def _summary(sim: Simulation, lang: Language) -> str:
    state = sim.table.state()
    seats = state["seats"]
    winners = state.get("winners") or []
    who = join_names([seats[w] for w in winners], lang) or lang.gettext("nobody (stopped)")
    tally = tally_words(games[sim.header.game].tally, state["tricks"], lang)
    return lang.ngettext("{game}: {n} card played, {tally}; winner: {winners}",
                         "{game}: {n} cards played, {tally}; winner: {winners}",
                         state["cards_played"]).format(game=games[sim.header.game].title,
                                                       n=state["cards_played"], tally=tally,
                                                       winners=who)


class _LiveView:
    """The table drawn live in the terminal with rich."""

    def __init__(self, lang: Language) -> None:
        from rich.console import Console
        from rich.live import Live

        self.lang = lang
        self.console = Console()
        self.live = Live(console=self.console, refresh_per_second=10, transient=False)
        self.live.start()
        self.recent: list[dict[str, Any]] = []

    def show(self, step: Step) -> None:
        """Draw one step of the game."""
        self.update(step.verdicts, step.state)

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Draw the table after a change (also an output of the full-stack service)."""
        from cardtable.display.render import render

        self.recent = (self.recent + [v.to_json() for v in verdicts])[-8:]
        self.live.update(render(state, self.recent, "online", table_id="simulated",
                                lang=self.lang))

    def close(self) -> None:
        self.live.stop()
        self.console.line()


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``simulate`` subcommand."""
    p = sub.add_parser(
        "simulate", help="play a whole game with virtual players (no hardware, no broker)",
        description="Play a whole game with seeded virtual players on a virtual table clock. "
        "By default the table is shown live in the terminal at a human pace. The same seed "
        "always gives the same game; --journal writes a journal that `referee replay` "
        "judges to the same verdicts.",
    )
    p.add_argument("--game", required=True, choices=GAME_NAMES, help="which game to play")
    p.add_argument("--players", type=whole_number, default=4, help="number of seats (default 4)")
    p.add_argument("--seed", type=whole_number, default=1,
                   help="seed of the deal and the players (default 1: the same game every "
                   "time; another seed, another game)")
    p.add_argument("--dealer", type=whole_number, default=0, help="the dealer's seat (default 0)")
    p.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                   help="a table option, e.g. -o false_slap_penalty=burn (repeatable); a "
                   "switch takes true/false, yes/no, on/off or 1/0; -o language=sv tells the "
                   "game in Swedish (a setting of the table, not of the game: never "
                   "journaled)")
    add_language_option(p)
    p.add_argument("--fast", action="store_true",
                   help="run as fast as possible, printing verdicts as text")
    p.add_argument("--speed", type=pace, default=None,
                   help="live view pace, 0.01 to 10000: 1 is real time, 4 four times faster, "
                   "0.5 half as fast (default 1; not with --fast or --json, which print the game "
                   "at once; with --full-stack the players' pace, 100 with --fast unless "
                   "--speed is given)")
    p.add_argument("--journal", metavar="PATH", type=path_name,
                   help="write the game's journal to PATH (a new file: an existing one is "
                   "refused, see --overwrite)")
    p.add_argument("--overwrite", action="store_true",
                   help="with --journal: replace a file that already exists at PATH")
    p.add_argument("--json", action="store_true",
                   help="print the verdicts and the final state as JSON lines (implies --fast)")
    p.add_argument("--broker", metavar="URL",
                   help="publish the game to this MQTT broker, e.g. mqtt://user:pass@host:1883 "
                   "(without it nothing needs a broker)")
    p.add_argument("--table", metavar="ID", help="the table id of the feed's topics "
                   "(cardtable/ID/…; default 'sim')")
    p.add_argument("--full-stack", action="store_true",
                   help="run the game through `referee run`'s own service: players press mock "
                   "GPIO buttons, cards are read by an emulated board on a pseudo-terminal, "
                   "the journal is synced to disk (and resumed if the same --journal-dir holds "
                   "an unfinished game)")
    p.add_argument("--operator", action="store_true",
                   help="with --full-stack: serve the table's display and the operator page "
                   "(as `referee run` does, docs/operator.md) and play every game dealt from "
                   "it until Ctrl-C; the pairing code and address are printed first")
    add_web_options(p, "(with --operator)")
    p.add_argument("--speech", choices=("words", "sounds", "both"),
                   help="with --full-stack: say each verdict aloud through espeak-ng (words), "
                   "play short sounds for slaps, won piles, photo finishes and false slaps "
                   "(sounds), or both ([speech] of table.toml, docs/i18n.md)")
    p.add_argument("--journal-dir", metavar="DIR", type=path_name,
                   help="with --full-stack: the service's journal folder (default: a new "
                   "temporary folder)")
    p.add_argument("--settle-ms", type=settle_window, default=None,
                   help="with --full-stack: the arbiter's settle window in ms (default 20; 2 "
                   "with --fast or --json; with --camera 1000)")
    p.add_argument("--camera", metavar="DECK", choices=("touati", "anglo", "gnomangelo"),
                   help="with --full-stack: the cards are laid under a virtual camera filming "
                   "this deck (touati, anglo, gnomangelo; docs/camera.md) and read by the "
                   "recogniser, in real time (the settle window defaults to 1000 ms)")
    p.set_defaults(func=_cmd_simulate)
