"""Vändåtta replay: journal inputs judged per CPU-second, beside OpenSpiel's ``crazy_eights``
replaying recorded games in the same run. Prints one JSON line.

    python3 bench/vandatta_replay.py [--games 25] [--rounds 7]

What is counted, ours
    The journals of ``referee simulate --game vandatta --players P --seed S`` (default
    options, P 2 to 5, ``--games`` seeds each), written as text and read back as ``referee
    replay`` reads a file (the cards are parsed, not the simulator's own objects). Timed:
    ``referee.table.replay(journal)`` per journal, which is what ``referee replay`` does once
    the file is read: a :class:`~referee.table.Table` set up from the header (engine, deal
    checks), every input pushed through the arbiter and judged by the engine, the verdicts
    kept, the final state built. The figure is journal inputs per CPU-second
    (``time.process_time``: on a shared machine the time spent waiting for a core is not
    counted). Reading the JSON is not timed (OpenSpiel's figure has no parsing either); a
    replay needs no legal-input generation (each input is judged as it comes) and builds no
    state per input (a table without listeners builds none), so neither is in the figure.
    Before timing, every replay must give the verdicts the simulation gave, or the bench fails.

The baseline: OpenSpiel's ``crazy_eights`` (PyPI ``open_spiel``, C++ behind pybind11)
    Games of ``crazy_eights`` with ``players`` P (2 to 5, the same number of games each; its
    other parameters at their defaults) played by seeded uniformly random choices among the
    legal actions, the actions recorded; then timed, interleaved with ours round by round, a
    replay of those actions as a referee would do it there::

        state = game.new_initial_state()
        for action in actions:
            if action not in state.legal_actions(): raise ...   # judged: is it legal?
            state.apply_action(action)

    ``baseline_actions_per_s``: actions per CPU-second, every action counted, the chance
    actions too (the dealer's choice, every card dealt and every card drawn is one: one of our
    ``draw`` inputs is two OpenSpiel actions, and our deal is in the journal's header, not
    among its inputs). ``ratio`` is the median over rounds of ours / that: issue 36's figure.

    Beside it, for what the figures are compared with:

    * ``ratio_to_player_actions``: ours / the same replay's rate counted in the actions of
      the players alone (chance actions are not inputs of ours; their time stays in).
    * ``random_playout_actions_per_s``: playouts of as many games, per action
      ``legal_actions()``, a ``random.Random`` choice among them, ``apply_action()`` and
      ``is_terminal()`` (chance outcomes chosen uniformly, as when the games were recorded).
    * ``sampled_playout_actions_per_s``: OpenSpiel's own example loop, chance outcomes drawn
      by their probabilities (``chance_outcomes()``, ``random.choices``), a player's action
      uniformly among ``legal_actions()``: the loop whose rate is nearest issue 36's 461 k
      actions/s beside our 285 k inputs/s (a ratio of 0.62 before the issue's work).

Without ``open_spiel`` installed (``pip install '.[bench]'``, or ``pip install open_spiel``; it
is not in the ``dev`` extra: it and scipy add ~180 MB to every CI install for one bench's
baseline) the line gives our figure and says the baseline is missing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# The rules library of the tree this file is in, not an installed copy of another checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cardtable.simulate import Simulation  # noqa: E402
from referee.journal import Journal, dump_journal, parse_lines  # noqa: E402
from referee.table import replay  # noqa: E402

SEATS = (2, 3, 4, 5)


def our_journals(games: int) -> list[tuple[Journal, list[dict[str, Any]]]]:
    """The simulated journals, read back from their text, each with the verdicts the
    simulation gave."""
    out = []
    for seats in SEATS:
        for seed in range(1, games + 1):
            sim = Simulation("vandatta", seats, seed)
            sim.run()
            text = dump_journal(sim.header, sim.table.inputs)
            out.append((parse_lines(text.splitlines()),
                        [v.to_json() for v in sim.table.verdicts]))
    return out


def check_ours(journals: list[tuple[Journal, list[dict[str, Any]]]]) -> None:
    """Every replay gives the simulation's verdicts, or the bench fails."""
    for journal, verdicts in journals:
        got = [v.to_json() for v in replay(journal).verdicts]
        if got != verdicts:
            h = journal.header
            raise SystemExit(f"vandatta_replay: the replay of {h.n_seats} seats, seed {h.seed} "
                             "differs from its simulation")


def time_ours(journals: list[Journal]) -> float:
    """CPU seconds to replay every journal."""
    start = time.process_time()
    for journal in journals:
        replay(journal)
    return time.process_time() - start


def spiel_games(pyspiel: Any, games: int) -> tuple[list[tuple[Any, list[int]]], int]:
    """Seeded random games of ``crazy_eights``: (the game, its recorded actions) each, and
    how many of all those actions were the players' (not chance outcomes)."""
    out = []
    players_actions = 0
    for players in SEATS:
        game = pyspiel.load_game("crazy_eights", {"players": players})
        for seed in range(1, games + 1):
            rng = random.Random(f"crazy_eights-{players}-{seed}")
            state = game.new_initial_state()
            actions = []
            while not state.is_terminal():
                players_actions += not state.is_chance_node()
                legal = state.legal_actions()
                action = legal[rng.randrange(len(legal))]
                state.apply_action(action)
                actions.append(action)
            out.append((game, actions))
    return out, players_actions


def time_spiel_replay(recorded: list[tuple[Any, list[int]]]) -> float:
    """CPU seconds to replay every recorded game, each action checked legal then applied."""
    start = time.process_time()
    for game, actions in recorded:
        state = game.new_initial_state()
        for action in actions:
            if action not in state.legal_actions():
                raise SystemExit(f"vandatta_replay: OpenSpiel refuses its own action {action}")
            state.apply_action(action)
    return time.process_time() - start


def time_spiel_playouts(recorded: list[tuple[Any, list[int]]], *,
                        sampled: bool) -> tuple[float, int]:
    """CPU seconds and actions of as many playouts (other seeds) as ``recorded``: every action
    uniformly among the legal ones, or (``sampled``) OpenSpiel's example loop, chance
    outcomes by their probabilities and players' actions uniformly."""
    rng = random.Random(0)
    actions = 0
    start = time.process_time()
    for game, _ in recorded:
        state = game.new_initial_state()
        while not state.is_terminal():
            if sampled and state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                action = rng.choices(outcomes, probabilities)[0]
            else:
                legal = state.legal_actions()
                action = legal[rng.randrange(len(legal))]
            state.apply_action(action)
            actions += 1
    return time.process_time() - start, actions


def _median_ratio(ours: list[float], theirs: list[float]) -> float:
    return round(statistics.median(o / t for o, t in zip(ours, theirs, strict=True)), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=25,
                        help="games per seat count, each side (default 25)")
    parser.add_argument("--rounds", type=int, default=7,
                        help="timed rounds, ours and the baseline's interleaved (default 7)")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    checked = our_journals(args.games)
    check_ours(checked)
    journals = [journal for journal, _ in checked]
    inputs = sum(len(j.inputs) for j in journals)
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        pyspiel = None
    recorded, players_actions = spiel_games(pyspiel, args.games) if pyspiel else ([], 0)
    actions = sum(len(a) for _, a in recorded)
    ours: list[float] = []
    theirs: list[float] = []
    playouts: list[float] = []
    sampled: list[float] = []
    for _ in range(args.rounds):
        ours.append(inputs / time_ours(journals))
        if recorded:
            theirs.append(actions / time_spiel_replay(recorded))
            seconds, played = time_spiel_playouts(recorded, sampled=False)
            playouts.append(played / seconds)
            seconds, played = time_spiel_playouts(recorded, sampled=True)
            sampled.append(played / seconds)
    line: dict[str, Any] = {
        "bench": "vandatta_replay",
        "case": "Vändåtta journals of referee simulate, 2-5 seats: referee.table.replay, "
                "inputs per CPU-second",
        "seats": list(SEATS),
        "journals": len(journals),
        "inputs": inputs,
        "inputs_per_s": round(statistics.median(ours)),
        "rounds": args.rounds,
    }
    if recorded:
        line.update({
            "baseline": "OpenSpiel crazy_eights (open_spiel "
                        f"{getattr(pyspiel, '__version__', '?')}), the same player counts: "
                        "replay of recorded random games, legal_actions() and apply_action() "
                        "per action, chance actions included",
            "baseline_games": len(recorded),
            "baseline_actions": actions,
            "baseline_actions_per_s": round(statistics.median(theirs)),
            "ratio": _median_ratio(ours, theirs),
            "baseline_player_actions": players_actions,
            "ratio_to_player_actions": _median_ratio(
                ours, [t * players_actions / actions for t in theirs]),
            "random_playout_actions_per_s": round(statistics.median(playouts)),
            "ratio_to_random_playouts": _median_ratio(ours, playouts),
            "sampled_playout_actions_per_s": round(statistics.median(sampled)),
            "ratio_to_sampled_playouts": _median_ratio(ours, sampled),
        })
    else:
        line.update({"baseline": "missing: open_spiel is not installed (pip install "
                                 "'.[bench]'); no ratio",
                     "ratio": None})
    line["seconds"] = round(time.perf_counter() - began, 1)
    print(json.dumps(line, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
