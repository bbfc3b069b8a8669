"""``referee analyse`` across processes: four-seat Banka bäver games per second with ``--jobs 2``
against ``--jobs 1`` in the same run (target at least 1.8 times), and the time 10 000 such games
take on two processes (target under 2 minutes), extrapolated from the run unless ``--full``
plays all 10 000.

Prints one JSON line. Both runs must give the very same figures (the analysis is the same for
any number of jobs); the bench exits 1 if they differ. ``--games K`` sets the games per run
(default 300). The machine may be shared: the wall-clock figures are noisy; the CPU-time ones
(this process and its workers) say what two cores of its own would do, and ``control_speedup``
(a plain CPU loop on one process and on two, in the same run) what two processes can gain on
the machine as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from cardtable.analyse import analysis
from cardtable.commands.analyse import default_jobs, game_seeds, play_all

GAME, SEATS = "banka-bever", 4
TARGET_SPEEDUP = 1.8
TARGET_10K_S = 120.0


def _cpu() -> float:
    """CPU seconds of this process and of its finished worker processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _run(games: int, jobs: int) -> tuple[float, float, dict[str, Any]]:
    """Wall and CPU seconds of ``games`` games on ``jobs`` processes, and their figures."""
    pairs = game_seeds(1, games, 1)
    cpu = _cpu()
    start = time.perf_counter()
    records, interrupted = play_all(GAME, SEATS, [{}], pairs, jobs)
    seconds = time.perf_counter() - start
    assert not interrupted and len(records) == games
    return seconds, _cpu() - cpu, analysis(GAME, SEATS, [{}], records)


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def control_speedup(n: int = 2_000_000, tasks: int = 4) -> float:
    """What two processes give over one on this machine now, for a plain CPU loop with no
    sharing at all: the most ``--jobs 2`` can give (on a machine shared with other work it is
    well under 2)."""
    import multiprocessing

    start = time.perf_counter()
    for _ in range(tasks):
        _burn(n)
    one = time.perf_counter() - start
    with multiprocessing.get_context("fork").Pool(2) as pool:
        start = time.perf_counter()
        pool.map(_burn, [n] * tasks)
        two = time.perf_counter() - start
    return one / two


def main(argv: list[str] | None = None) -> None:
    """Time K games with one process and with two; print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300, help="games per run (default 300)")
    parser.add_argument("--full", action="store_true",
                        help="also play all 10 000 games on two processes")
    args = parser.parse_args(argv)
    control = control_speedup()
    one_s, one_cpu, one = _run(args.games, 1)
    two_s, two_cpu, two = _run(args.games, 2)
    if one != two:
        print("analyse: --jobs 2 gave other figures than --jobs 1", file=sys.stderr)
        raise SystemExit(1)
    rate_two = args.games / two_s
    line: dict[str, Any] = {
        "bench": "analyse",
        "case": f"{GAME}, {SEATS} seats, {args.games} games",
        "cores": default_jobs(),
        "jobs_1_games_per_s": round(args.games / one_s, 1),
        "jobs_2_games_per_s": round(rate_two, 1),
        "speedup": round(one_s / two_s, 2),
        "target_speedup": TARGET_SPEEDUP,
        "meets_speedup": one_s / two_s >= TARGET_SPEEDUP,
        # The control: a plain CPU loop's two-process speed-up in the same run; the analysis's
        # parallel efficiency is speedup / control_speedup.
        "control_speedup": round(control, 2),
        "efficiency": round(one_s / two_s / control, 2),
        "games_10k_s": round(10_000 / rate_two, 1),
        "games_10k": "extrapolated from the jobs-2 run",
        # What the CPU time says: games per CPU-second, and 10 000 games on two cores that
        # this bench has to itself (a shared machine's wall times are longer).
        "jobs_1_games_per_cpu_s": round(args.games / one_cpu, 1),
        "jobs_2_games_per_cpu_s": round(args.games / two_cpu, 1),
        "games_10k_s_two_idle_cores": round(10_000 / (2 * args.games / two_cpu), 1),
        "target_10k_s": TARGET_10K_S,
        "baseline": "the same games with --jobs 1, in the same run",
    }
    if args.full:
        full_s, _, _ = _run(10_000, 2)
        line.update(games_10k_s=round(full_s, 1), games_10k="measured: 10 000 games played")
    line["meets_10k"] = line["games_10k_s"] < TARGET_10K_S
    print(json.dumps(line))


if __name__ == "__main__":
    main()
