"""``referee simulate``: a whole game with virtual players on a virtual table clock.

The players are seeded: the same ``--seed`` gives the same deal, the same reactions and so the
same journal and verdicts. Every input goes through :class:`referee.table.Table` (journal →
arbiter → engine), the code a real table runs, so replaying the written journal reproduces the
simulation's verdicts exactly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import heapq
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from referee.cards import Card, parse_card, shuffled_deck
from referee.deal import HAND_SIZE
from referee.describe import describe, format_time
from referee.engine import SEAT_LIMITS
from referee.journal import JournalHeader, JournalWriter
from referee.model import GAMES, Input, Verdict
from referee.options import OptionError, parse_option_assignment, parse_options
from referee.table import Table

MS = 1_000_000
DEFAULT_NAMES = ("Anna", "Bo", "Cia", "Dan", "Eva", "Frej", "Gun", "Hugo")
#: A game that has not ended after this many inputs is stopped (Beggar can loop for ever).
MAX_INPUTS = 200_000


@dataclass
class Step:
    """One judged input of the simulation, with the verdicts and state it produced."""

    t: int
    input: Input | None
    verdicts: list[Verdict]
    state: dict[str, Any]


@dataclass(order=True)
class _Plan:
    t: int
    order: int
    inp: Input = field(compare=False)
    version: int = field(compare=False, default=-1)


class Simulation:
    """A seeded game between virtual players; iterate :meth:`steps` to play it."""

    def __init__(
        self,
        game: str,
        players: int,
        seed: int,
        *,
        options: dict[str, Any] | None = None,
        dealer: int = 0,
        names: list[str] | None = None,
        journal: JournalWriter | None = None,
        journal_path: str | None = None,
    ) -> None:
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r} (known: {', '.join(GAMES)})")
        lo, hi = SEAT_LIMITS[game]
        if not lo <= players <= hi:
            raise ValueError(f"{game} takes {lo} to {hi} players, not {players}")
        names = names or list(DEFAULT_NAMES[:players])
        opts = parse_options(game, options or {})
        self.header = JournalHeader(game, tuple(names), dealer % players, opts, seed).resolved()
        if journal is None and journal_path is not None:
            journal = JournalWriter(journal_path, self.header, fsync=False)
        self.table = Table(self.header, settle_ns=0, journal=journal)
        self.rng = random.Random(f"players-{seed}")
        self.skill = [self.rng.uniform(0.8, 1.3) for _ in range(players)]
        self._plans: list[_Plan] = []
        self._order = 0
        self._version = 0
        self.t = 1_000 * MS
        self._deals = 0

    @property
    def engine(self) -> Any:
        """The engine judging the game."""
        return self.table.engine

    # -- planning -----------------------------------------------------------------------
    def _plan(self, t: int, inp: Input, *, versioned: bool = True) -> None:
        self._order += 1
        heapq.heappush(
            self._plans, _Plan(t, self._order, inp, self._version if versioned else -1)
        )

    def _reaction(self, seat: int, base_ms: float, spread: float = 0.25) -> int:
        ms = self.rng.lognormvariate(0, spread) * base_ms * self.skill[seat]
        return int(ms * MS) + self.rng.randrange(1000)

    def _plan_turn(self, now: int) -> None:
        """Plan the next act of the seat(s) to act; older plans of this kind become stale."""
        self._version += 1
        if self.engine.over:
            return
        game = self.header.game
        if game == "vandatta":
            self._plan_vandatta(now)
            return
        lays = [i for i in self.engine.legal_inputs(now) if i.act == "lay"]
        if lays:
            lay = lays[0]
            delay = self._reaction(lay.seat, 450 if game == "banka-bever" else 550, 0.3)
            self._plan(now + delay, lay)

    def _plan_slaps(self, now: int, state: dict[str, Any]) -> None:
        for seat, base_ms in slappers(state, self.header.options, self.rng):
            self._plan(now + self._reaction(seat, base_ms), Input(0, seat, "slap"),
                       versioned=False)

    def _plan_vandatta(self, now: int) -> None:
        legal = self.engine.legal_inputs(now)
        state = self.engine.state()
        seat = state.get("must_draw") if state.get("must_draw") is not None else state["turn"]
        if (state["stock"] == 0 and len(state["pile"]) > 1 and seat is not None
                and self.header.options.reshuffle_discards and state["phase"] != "round_over"):
            # The table reshuffles as soon as the stock is empty (RULES.md allows any moment).
            self._plan(now + 2500 * MS, self._reshuffle(Input(0, seat, "reshuffle"), state))
            return
        if not legal:
            if state.get("phase") == "round_over" and not self.engine.over:
                self._plan(now + 3000 * MS, self._next_deal(state))
            return
        seat = legal[0].seat
        choice = choose_vandatta(legal, self.engine.hand, self.rng)
        self._plan(now + self._reaction(seat, 1400, 0.35), choice)

    def _reshuffle(self, template: Input, state: dict[str, Any]) -> Input:
        if template.stock is not None:
            return template
        pile = [parse_card(c) for c in state["pile"][:-1] if c is not None]
        self.rng.shuffle(pile)
        return Input(template.t, template.seat, "reshuffle", stock=tuple(pile))

    def _next_deal(self, state: dict[str, Any]) -> Input:
        return next_deal(state, self.rng.getrandbits(32), 0)

    # -- running ------------------------------------------------------------------------
    def steps(self) -> Iterator[Step]:
        """Play the game, one judged input at a time."""
        self._plan_turn(self.t)
        count = 0
        while self._plans and not self.engine.over and count < MAX_INPUTS:
            plan = heapq.heappop(self._plans)
            if plan.version not in (-1, self._version):
                continue
            inp = stamped(plan.inp, plan.t)
            if inp.act == "lay":
                # The card on top of the stack may have changed since the plan (a burn).
                lays = [i for i in self.engine.legal_inputs(plan.t)
                        if i.act == "lay" and i.seat == inp.seat]
                if not lays:
                    continue
                inp = lays[0]
            count += 1
            self.t = plan.t
            self.table.push(inp)
            verdicts = self.table.release(plan.t)
            state = self.table.state()
            self._after(inp, verdicts, state)
            yield Step(plan.t, inp, verdicts, state)
        if not self.engine.over:
            verdicts = self.table.flush(finish=True)
            if verdicts:
                yield Step(self.t, None, verdicts, self.table.state())

    def _after(self, inp: Input, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        game = self.header.game
        changed = inp.act != "slap" or any(v.verdict in ("pile_won", "out") for v in verdicts)
        if game == "banka-bever" and inp.act == "lay" and not any(
                v.verdict in ("illegal", "desync") for v in verdicts):
            self._plan_slaps(inp.t, state)
        if changed or not self._has_turn_plan():
            self._plan_turn(inp.t)

    def _has_turn_plan(self) -> bool:
        return any(p.version == self._version for p in self._plans)

    def run(self, on_step: Callable[[Step], None] | None = None) -> list[Verdict]:
        """Play to the end; returns every verdict."""
        for step in self.steps():
            if on_step is not None:
                on_step(step)
        return self.table.verdicts


def choose_vandatta(legal: list[Input], hand_of: Callable[[int], list[Card | None]],
                    rng: random.Random) -> Input:
    """A virtual Vändåtta player's choice among the legal inputs: call lappen when one rank is
    left (mostly), lay rather than draw, keep eights and aces for later, lay many at once."""
    by_act: dict[str, list[Input]] = {}
    for inp in legal:
        by_act.setdefault(inp.act, []).append(inp)
    if "call" in by_act:
        hand = hand_of(by_act["call"][0].seat)
        if len({c.rank for c in hand if c is not None}) <= 1 and rng.random() < 0.85:
            return by_act["call"][0]
    plays = by_act.get("play", [])
    if plays:
        def score(inp: Input) -> tuple[int, int, float]:
            cards = inp.cards or ()
            special = sum(1 for c in cards if c.rank in (8, 14))
            return (-special if len(cards) > 1 else -special * 2, len(cards), rng.random())
        if rng.random() < 0.9:
            return max(plays, key=score)
        return rng.choice(plays)
    for act in ("draw", "pass"):
        if act in by_act:
            return by_act[act][0]
    return legal[0]


def slappers(state: dict[str, Any], options: Any,
             rng: random.Random) -> list[tuple[int, float]]:
    """The seats that slap after a card is laid, with their mean reaction in ms: most players
    slap a pile that looks slappable, a few slap falsely, some miss."""
    holds = slap_holds(state, getattr(options, "bottom_match", True))
    out = []
    for seat, count in enumerate(state["counts"]):
        if seat in state.get("out", []) or (count == 0 and not options.slap_back_in):
            continue
        if holds and rng.random() < 0.9:
            out.append((seat, 320.0))
        elif not holds and rng.random() < 0.004:
            out.append((seat, 380.0))
    return out


def slap_holds(state: dict[str, Any], bottom_match: bool = True) -> bool:
    """Whether a slap looks valid from the public state (what a player at the table sees:
    the two top cards, and the bottom card)."""
    pile = state.get("pile") or []
    if len(pile) >= 2 and pile[-1] and pile[-2] and parse_card(pile[-1]).rank == parse_card(
            pile[-2]).rank:
        return True
    bottom = state.get("bottom")
    return bool(bottom_match and bottom and len(pile) >= 2 and pile[-1]
                and parse_card(pile[-1]).rank == parse_card(bottom).rank)


def next_deal(state: dict[str, Any], seed: int, t: int) -> Input:
    """The next round's ``deal`` of the Vändåtta points game, shuffled with ``seed``: the deal
    passes clockwise to the next seat still in the game, who deals from their left."""
    deck = shuffled_deck(seed)
    n = len(state["counts"])
    out = set(state.get("out", []))
    dealer = state.get("dealer", 0)
    dealer = next((dealer + k) % n for k in range(1, n + 1) if (dealer + k) % n not in out)
    hands: list[tuple[Card, ...]] = [() for _ in range(n)]
    pos = 0
    for k in range(1, n + 1):
        seat = (dealer + k) % n
        if seat not in out:
            hands[seat] = tuple(deck[pos:pos + HAND_SIZE])
            pos += HAND_SIZE
    return Input(t, dealer, "deal", hands=tuple(hands), stock=tuple(deck[pos + 1:]),
                 upcard=deck[pos])


def stamped(inp: Input, t: int) -> Input:
    """The same input at time ``t``."""
    return dataclasses.replace(inp, t=t)


# -- command line ---------------------------------------------------------------------------
def _cmd_simulate(args: argparse.Namespace) -> int:
    from referee.cli import CommandError

    options: dict[str, Any] = {}
    try:
        for text in args.option or []:
            key, value = parse_option_assignment(text)
            options[key] = value
        sim = Simulation(args.game, args.players, args.seed, options=options,
                         dealer=args.dealer, journal_path=args.journal)
    except (OptionError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write the journal: {exc}") from None
    if args.table and not args.broker:
        raise CommandError("--table names the feed's table id: give --broker too")
    if args.full_stack:
        return _cmd_full_stack(args, options)
    if args.journal_dir:
        raise CommandError("--journal-dir goes with --full-stack (use --journal PATH otherwise)")
    feed = None
    if args.broker:
        from referee.feed import TableFeed, parse_broker_url

        try:
            parse_broker_url(args.broker)
        except ValueError as exc:
            raise CommandError(f"--broker: {exc}") from None
        feed = TableFeed(args.broker, args.table or "sim", seats=list(sim.header.seats))
    try:
        asyncio.run(_play(sim, args, feed))
    finally:
        if sim.table.journal is not None:
            sim.table.journal.close()
    return 0


def _cmd_full_stack(args: argparse.Namespace, options: dict[str, Any]) -> int:
    from referee.cli import CommandError
    from referee.config import ConfigError
    from referee.fullstack import full_stack_config, journal_dir_arg, run_full_stack

    if args.journal:
        raise CommandError("--full-stack journals to --journal-dir (the service's journal)")
    journal_dir = journal_dir_arg(args.journal_dir)
    doc = full_stack_config(args.game, args.players, args.seed, journal_dir=journal_dir,
                            options=options, dealer=args.dealer, broker=args.broker,
                            table_id=args.table or "sim", settle_ms=args.settle_ms)
    live = not (args.json or args.fast)
    speed = args.speed if live or args.speed != 1.0 else 25.0
    view = _LiveView() if live else None
    try:
        service = asyncio.run(run_full_stack(doc, seed=args.seed, speed=speed,
                                             outputs=[view] if view else []))
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if view is not None:
            view.close()
    assert service.table is not None
    state = service.state()
    seats = state["seats"]
    if args.json:
        for v in service.table.verdicts:
            print(json.dumps(v.to_json(), ensure_ascii=False))
        print(json.dumps({"state": state}, ensure_ascii=False))
    else:
        if args.fast:
            for v in service.table.verdicts:
                print(f"{format_time(v.t)}  {describe(v.to_json(), seats)}")
        winners = " and ".join(seats[w] for w in state.get("winners") or []) or "nobody yet"
        print(f"{args.game} on the full stack: {state['cards_played']} cards played; "
              f"winner: {winners}; journal in {journal_dir}")
    return 0


async def _play(sim: Simulation, args: argparse.Namespace, feed: Any) -> None:
    """Play the game: print it (``--json``/``--fast``) or show it live, publishing each step to
    the feed when there is one."""
    live = not (args.json or args.fast)
    if feed is not None:
        feed_task = asyncio.create_task(feed.run())
        if not await feed.wait_connected(3.0):
            print(f"referee: broker {args.broker} not reachable yet; the game goes on and the "
                  "feed keeps trying", file=sys.stderr)
    seats = list(sim.header.seats)
    view = _LiveView() if live else None
    last_t: int | None = None
    try:
        if feed is not None:
            feed.publish(sim.table.state(), [])
        for step in sim.steps():
            if feed is not None:
                feed.publish(step.state, step.verdicts)
            if args.json:
                for v in step.verdicts:
                    print(json.dumps(v.to_json(), ensure_ascii=False))
            elif args.fast:
                for v in step.verdicts:
                    print(f"{format_time(v.t)}  {describe(v.to_json(), seats)}")
            if view is not None:
                if last_t is not None and args.speed > 0:
                    await asyncio.sleep(min((step.t - last_t) / 1e9 / args.speed, 2.0))
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
        print(_summary(sim))


def _summary(sim: Simulation) -> str:
    state = sim.table.state()
    seats = state["seats"]
    winners = state.get("winners") or []
    who = " and ".join(seats[w] for w in winners) or "nobody (stopped)"
    what = "rounds played" if sim.header.game == "vandatta" else "piles collected"
    return (f"{sim.header.game}: {state['cards_played']} cards played, "
            f"{state['tricks']} {what}; winner: {who}")


class _LiveView:
    """The table drawn live in the terminal with rich."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console()
        self.live = Live(console=self.console, refresh_per_second=10, transient=False)
        self.live.start()
        self.recent: list[dict[str, Any]] = []

    def show(self, step: Step) -> None:
        """Draw one step of the game."""
        self.update(step.verdicts, step.state)

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Draw the table after a change (also an output of the full-stack service)."""
        from referee.display import render

        self.recent = (self.recent + [v.to_json() for v in verdicts])[-8:]
        self.live.update(render(state, self.recent, "online", table_id="simulated"))

    def close(self) -> None:
        self.live.stop()
        self.console.line()


def register(sub: Any) -> None:
    """Add the ``simulate`` subcommand."""
    p = sub.add_parser(
        "simulate", help="play a whole game with virtual players (no hardware, no broker)",
        description="Play a whole game with seeded virtual players on a virtual table clock. "
        "By default the table is shown live in the terminal at a human pace. The same seed "
        "always gives the same game; --journal writes a journal that `referee replay` "
        "judges to the same verdicts.",
    )
    p.add_argument("--game", required=True, choices=GAMES, help="which game to play")
    p.add_argument("--players", type=int, default=4, help="number of seats (default 4)")
    p.add_argument("--seed", type=int, default=1, help="seed of the deal and the players")
    p.add_argument("--dealer", type=int, default=0, help="the dealer's seat (default 0)")
    p.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                   help="a table option, e.g. -o false_slap_penalty=burn (repeatable)")
    p.add_argument("--fast", action="store_true",
                   help="run as fast as possible, printing verdicts as text")
    p.add_argument("--speed", type=float, default=1.0,
                   help="live view pace: 1 is real time, 4 four times faster (default 1)")
    p.add_argument("--journal", metavar="PATH", help="write the game's journal to PATH")
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
    p.add_argument("--journal-dir", metavar="DIR",
                   help="with --full-stack: the service's journal folder (default: a new "
                   "temporary folder)")
    p.add_argument("--settle-ms", type=float, default=20.0,
                   help="with --full-stack: the arbiter's settle window (default 20)")
    p.set_defaults(func=_cmd_simulate)


if __name__ == "__main__":  # pragma: no cover
    from referee.cli import main

    sys.exit(main(["simulate", *sys.argv[1:]]))
