"""Seeded simulated games per second on one core, per game and seat count: the simulator as it
is against the simulator as it was before issue 13 (kept below, word for word but for names, as
the baseline), in the same run on the same engines; and the median time of a ``--fast``
four-seat Banka bäver game (target well under 50 ms) with the bare engine's replay of the same
inputs.

Prints one JSON line. Both simulators must write the very same journal for every seed (the
faster one changes no input); the bench exits 1 naming the first seed where they differ.
``--seeds N`` sets the seeds per case (default 12; the figures are noisy on a shared machine).
Games per second are per CPU-second of this process (``time.process_time``: on a machine shared
with other work, the time it waits for a core is not counted), and the runs are interleaved
(before, after, before, …) so that a burst of load hits both alike. The median ms is wall time.

The in-run baseline shares today's rules library, so what made the library faster (issue 13's
engine accessors, a cheaper ``Input``) speeds it up too. The stricter figure is
``original_games_per_s``: the simulator *and* the rules library as they were before issue 13
(commit ``ORIGINAL``, taken from git into a temporary folder), each side in its own process,
the two at the same time (``--reps`` rounds, the best CPU time of each side), with a digest of
the journals both sides wrote, which must agree. Without git history that part is left out (and
says so).
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardtable.players import DEFAULT_NAMES, TURN_MS, Reactions, choose_vandatta
from cardtable.simulate import MAX_INPUTS, Simulation
from referee.cards import parse_card
from referee.deal import reshuffled
from referee.engine import Engine
from referee.games import game as game_named
from referee.games.vandatta import Vandatta, next_deal
from referee.journal import Journal, JournalHeader, dump_journal
from referee.model import Input
from referee.options import VandattaOptions
from referee.table import Table, replay

#: (game, seats) timed before and after.
CASES = (("beggar-my-neighbour", 2), ("beggar-my-neighbour", 4), ("banka-bever", 2),
         ("banka-bever", 4), ("banka-bever", 8), ("vandatta", 3), ("vandatta", 5))
TARGET_SPEEDUP = 3.0
MS = 1_000_000
#: The commit whose simulator and rules library issue 13's figures are measured against.
ORIGINAL = "3a38d19595d95d01954e761f228492377a755884"
ROOT = Path(__file__).resolve().parents[1]
#: Run in a child process: play seeds first..last, print the CPU seconds and the journals' digest.
_CHILD = """
import hashlib, sys, time
from cardtable.simulate import Simulation
from referee.journal import dump_journal
game, seats, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
digest, cpu = hashlib.sha256(), 0.0
for seed in range(first, last + 1):
    start = time.process_time()
    sim = Simulation(game, seats, seed)
    sim.run()
    cpu += time.process_time() - start
    digest.update(dump_journal(sim.header, sim.table.inputs).encode())
print(cpu, digest.hexdigest())
"""


# -- the simulator before issue 13 (cardtable/simulate.py and players.py at 3a38d19) --------
def _slappers(state: dict[str, Any], options: Any,
              rng: random.Random) -> list[tuple[int, float]]:
    holds = _slap_holds(state, getattr(options, "bottom_match", True))
    out = []
    for seat, count in enumerate(state["counts"]):
        if seat in state.get("out", []) or (count == 0 and not options.slap_back_in):
            continue
        if holds and rng.random() < 0.9:
            out.append((seat, 320.0))
        elif not holds and rng.random() < 0.004:
            out.append((seat, 380.0))
    return out


def _slap_holds(state: dict[str, Any], bottom_match: bool = True) -> bool:
    pile = state.get("pile") or []
    if len(pile) >= 2 and pile[-1] and pile[-2] and parse_card(pile[-1]).rank == parse_card(
            pile[-2]).rank:
        return True
    bottom = state.get("bottom")
    return bool(bottom_match and bottom and len(pile) >= 2 and pile[-1]
                and parse_card(pile[-1]).rank == parse_card(bottom).rank)


def _stamped(inp: Input, t: int) -> Input:
    return dataclasses.replace(inp, t=t)


@dataclass(order=True)
class _Plan:
    t: int
    order: int
    inp: Input = field(compare=False)
    version: int = field(compare=False, default=-1)


class BeforeSimulation:
    """The simulator before issue 13: the table's state after every input, the engine asked
    for the legal lays when a lay is planned and again when it is made, dataclass plans."""

    def __init__(self, game: str, players: int, seed: int, *,
                 options: dict[str, Any] | None = None) -> None:
        spec = game_named(game)
        opts = spec.parse_options(options or {})
        self.header = JournalHeader(game, tuple(DEFAULT_NAMES[:players]), 0, opts,
                                    seed).resolved()
        self.table = Table(self.header, settle_ns=0)
        self.rng = random.Random(f"players-{seed}")
        self.reactions = Reactions(self.rng, players)
        self._plans: list[_Plan] = []
        self._order = 0
        self._version = 0
        self.t = 1_000 * MS

    @property
    def engine(self) -> Engine:
        return self.table.engine

    def _plan(self, t: int, inp: Input, *, versioned: bool = True) -> None:
        self._order += 1
        heapq.heappush(
            self._plans, _Plan(t, self._order, inp, self._version if versioned else -1)
        )

    def _plan_turn(self, now: int) -> None:
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
            delay = self.reactions.ns(lay.seat, TURN_MS[game], 0.3)
            self._plan(now + delay, lay)

    def _plan_slaps(self, now: int, state: dict[str, Any]) -> None:
        for seat, base_ms in _slappers(state, self.header.options, self.rng):
            self._plan(now + self.reactions.ns(seat, base_ms), Input(0, seat, "slap"),
                       versioned=False)

    def _plan_vandatta(self, now: int) -> None:
        legal = self.engine.legal_inputs(now)
        state = self.engine.state()
        options = self.header.options
        assert isinstance(options, VandattaOptions)
        seat = state.get("must_draw") if state.get("must_draw") is not None else state["turn"]
        if (state["stock"] == 0 and len(state["pile"]) > 1 and seat is not None
                and options.reshuffle_discards and state["phase"] != "round_over"):
            self._plan(now + 2500 * MS, self._reshuffle(Input(0, seat, "reshuffle"), state))
            return
        if not legal:
            if state.get("phase") == "round_over" and not self.engine.over:
                self._plan(now + 3000 * MS, next_deal(state, self.rng.getrandbits(32), 0))
            return
        seat = legal[0].seat
        choice = choose_vandatta(legal, self.engine.hand, self.rng)
        self._plan(now + self.reactions.ns(seat, TURN_MS["vandatta"], 0.35), choice)

    def _reshuffle(self, template: Input, state: dict[str, Any]) -> Input:
        if template.stock is not None:
            return template
        return Input(template.t, template.seat, "reshuffle",
                     stock=reshuffled(state["pile"], self.rng))

    def run(self) -> None:
        self._plan_turn(self.t)
        count = 0
        while self._plans and not self.engine.over and count < MAX_INPUTS:
            plan = heapq.heappop(self._plans)
            if plan.version not in (-1, self._version):
                continue
            inp = _stamped(plan.inp, plan.t)
            if inp.act == "lay":
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
            changed = inp.act != "slap" or any(v.verdict in ("pile_won", "out")
                                               for v in verdicts)
            if "slap" in game_named(self.header.game).acts and inp.act == "lay" and not any(
                    v.verdict in ("illegal", "desync") for v in verdicts):
                self._plan_slaps(inp.t, state)
            if changed or not any(p.version == self._version for p in self._plans):
                self._plan_turn(inp.t)
        if not self.engine.over:
            self.table.flush(finish=True)


# -- timing ------------------------------------------------------------------------------------
def _case(game: str, seats: int, seeds: range) -> dict[str, Any]:
    before = after = floor = 0.0
    for seed in seeds:
        start = time.process_time()
        old = BeforeSimulation(game, seats, seed)
        old.run()
        before += time.process_time() - start
        start = time.process_time()
        new = Simulation(game, seats, seed)
        new.run()
        after += time.process_time() - start
        floor += _engine_answers(new)
        if dump_journal(old.header, old.table.inputs) != dump_journal(new.header,
                                                                      new.table.inputs):
            print(f"simulate: {game}, {seats} seats, seed {seed}: the journal differs from "
                  "the simulator before", file=sys.stderr)
            raise SystemExit(1)
    games = len(seeds)
    return {"game": game, "seats": seats, "games": games,
            "before_games_per_s": round(games / before, 1),
            "after_games_per_s": round(games / after, 1),
            "speedup": round(before / after, 2),
            "engine_answers_games_per_s": round(games / floor, 1),
            "ceiling": round(before / floor, 2)}


def _engine_answers(sim: Simulation) -> float:
    """CPU seconds the bare engine takes to judge a played game's inputs and to give what its
    players read: in the pile games the legal inputs after every input but a slap, and the
    state after every lay of a slap game; in Vändåtta the turn's offers (``turn_options``, what
    its players now read instead of ``legal_inputs`` and the state) after every input. No
    simulator that asks these questions can be faster than this (the case's ``ceiling`` is the
    speed-up it would give)."""
    h = sim.header
    engine = game_named(h.game).new_engine(h.n_seats, h.dealer, h.options, h.deal)
    slaps = "slap" in game_named(h.game).acts
    start = time.process_time()
    if isinstance(engine, Vandatta):
        for inp in sim.table.inputs:
            engine.apply(inp)
            engine.advance(inp.t)
            engine.turn_options()
        return time.process_time() - start
    for inp in sim.table.inputs:
        engine.apply(inp)
        engine.advance(inp.t)
        if inp.act != "slap":
            engine.legal_inputs(inp.t)
            if slaps and inp.act == "lay":
                engine.state()
    return time.process_time() - start


def _original_tree(into: str) -> str | None:
    """The package ``referee`` at :data:`ORIGINAL` unpacked under ``into``; None (with the
    reason on stderr) without git or that commit."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ORIGINAL, "referee"],
                                 capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"simulate: no original tree ({exc}); original_games_per_s left out",
              file=sys.stderr)
        return None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # pragma: no cover - Python before 3.11.4
            tar.extractall(into)  # noqa: S202 - our own repository's archive
    return into


def _child(tree: str, game: str, seats: int, seeds: range) -> subprocess.Popen[str]:
    """Start playing ``seeds`` with the code under ``tree`` (see :func:`_result`)."""
    env = dict(os.environ, PYTHONPATH=tree)
    return subprocess.Popen([sys.executable, "-c", _CHILD, game, str(seats), str(seeds[0]),
                             str(seeds[-1])], cwd=tree, env=env, stdout=subprocess.PIPE,
                            text=True)


def _result(proc: subprocess.Popen[str]) -> tuple[float, str]:
    """CPU seconds and journals' digest of a child of :func:`_child`."""
    out, _ = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"simulate: a timing child failed ({proc.returncode})")
    cpu, digest = out.split()
    return float(cpu), digest


def _against_original(tree: str, game: str, seats: int, seeds: range,
                      reps: int) -> dict[str, Any]:
    """The case played by the original code and by today's, both at once (a burst of load
    hits both), ``reps`` rounds; the best CPU time of each."""
    old = new = float("inf")
    for _ in range(reps):
        both = _child(tree, game, seats, seeds), _child(str(ROOT), game, seats, seeds)
        (old_cpu, old_digest), (new_cpu, new_digest) = (_result(p) for p in both)
        if old_digest != new_digest:
            print(f"simulate: {game}, {seats} seats: the journals differ from {ORIGINAL[:7]}'s",
                  file=sys.stderr)
            raise SystemExit(1)
        old, new = min(old, old_cpu), min(new, new_cpu)
    games = len(seeds)
    return {"original_games_per_s": round(games / old, 1),
            "now_games_per_s": round(games / new, 1),
            "speedup_vs_original": round(old / new, 2)}


def _median_game(seeds: range) -> dict[str, Any]:
    sim_ms, replay_ms, inputs = [], [], []
    for seed in seeds:
        start = time.perf_counter()
        sim = Simulation("banka-bever", 4, seed)
        sim.run()
        sim_ms.append((time.perf_counter() - start) * 1000)
        inputs.append(len(sim.table.inputs))
        journal = Journal(sim.header, list(sim.table.inputs))
        start = time.perf_counter()
        replay(journal)
        replay_ms.append((time.perf_counter() - start) * 1000)
    return {
        "median_inputs": statistics.median(inputs),
        "median_ms": round(statistics.median(sim_ms), 2),
        "p90_ms": round(sorted(sim_ms)[max(int(0.9 * len(sim_ms)) - 1, 0)], 2),
        "baseline_replay_median_ms": round(statistics.median(replay_ms), 2),
        "target_ms": 50,
        "meets_target": statistics.median(sim_ms) < 50,
    }


def main(argv: list[str] | None = None) -> None:
    """Time every case before and after; print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=12, help="seeds per case (default 12)")
    parser.add_argument("--reps", type=int, default=3,
                        help="rounds against the original code, best of (default 3; 0: none)")
    args = parser.parse_args(argv)
    seeds = range(1, args.seeds + 1)
    cases = [_case(game, seats, seeds) for game, seats in CASES]
    worst = min(c["speedup"] for c in cases)
    original: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tree = _original_tree(tmp) if args.reps > 0 else None
        if tree is not None:
            for case in cases:
                case.update(_against_original(tree, case["game"], case["seats"], seeds,
                                              args.reps))
            factors = [c["speedup_vs_original"] for c in cases]
            original = {"min_speedup_vs_original": min(factors),
                        "meets_target_vs_original": min(factors) >= TARGET_SPEEDUP,
                        "cases_meeting_target_vs_original": sum(f >= TARGET_SPEEDUP
                                                                for f in factors),
                        "original": f"the simulator and rules library at {ORIGINAL[:7]}, "
                                    "each side in its own process, the two at once, best of "
                                    "--reps rounds"}
    print(json.dumps({
        "bench": "simulate",
        "case": "seeded games per second on one core, before and after issue 13; "
                "banka-bever, 4 seats, --fast: median ms",
        "cases": cases,
        # the target is against the original code (below); the in-run figure has
        # today's faster rules library on both sides
        "min_speedup_same_engines": worst,
        "target_speedup": TARGET_SPEEDUP,
        **original,
        **_median_game(range(1, 21)),
        "baseline": "the simulator before issue 13 (BeforeSimulation in this file) on the "
                    "same engines, same seeds, interleaved",
    }))


if __name__ == "__main__":
    main()
