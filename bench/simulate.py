"""Median time of a ``--fast`` 4-seat Banka bäver simulation (target: well under 50 ms).

Prints one JSON line. The baseline in the same run is the bare engine replaying the same game's
inputs with no players and no arbiter, so the figure separates the simulation's overhead from
the rules engine's cost on this (noisy, shared) machine.
"""

from __future__ import annotations

import json
import statistics
import time

from referee.app.simulate import Simulation
from referee.journal import Journal
from referee.table import replay

SEEDS = range(1, 21)


def main() -> None:
    """Time one simulated game per seed; print medians."""
    sim_ms, replay_ms, inputs = [], [], []
    for seed in SEEDS:
        start = time.perf_counter()
        sim = Simulation("banka-bever", 4, seed)
        sim.run()
        sim_ms.append((time.perf_counter() - start) * 1000)
        inputs.append(len(sim.table.inputs))
        journal = Journal(sim.header, list(sim.table.inputs))
        start = time.perf_counter()
        replay(journal)
        replay_ms.append((time.perf_counter() - start) * 1000)
    print(json.dumps({
        "bench": "simulate",
        "case": "banka-bever, 4 seats, --fast",
        "games": len(SEEDS),
        "median_inputs": statistics.median(inputs),
        "median_ms": round(statistics.median(sim_ms), 2),
        "p90_ms": round(sorted(sim_ms)[int(0.9 * len(sim_ms)) - 1], 2),
        "baseline_replay_median_ms": round(statistics.median(replay_ms), 2),
        "target_ms": 50,
        "meets_target": statistics.median(sim_ms) < 50,
    }))


if __name__ == "__main__":
    main()
