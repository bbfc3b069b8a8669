"""Soak (issue 36, attack 7): one referee service under simulated play for a long time.

The full stack of ``referee simulate --full-stack`` (mock GPIO pads, the board emulator on a
pseudo-terminal, the journal synced to disk), four seats of Banka bäver at twice a person's
pace, a new deal whenever a game ends, for ``--minutes`` (default 30). Every ``--every``
seconds it samples the process's resident memory (``VmRSS``) and open file descriptors; each
game verdict's latency is the service clock when the verdict is judged minus the time of the
input that made it (edge stamps for slaps), so a p99 per window shows whether the referee
slows as it runs.

Targets (the issue): RSS growth under 5 MB after the warm-up (the first window), no growth of
file descriptors, verdict p99 steady. The baseline is the first window of the same run.
Not run in CI (it takes the minutes it is given); ``python3 bench/soak.py --minutes 2`` tries
it. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cardtable.fullstack import full_stack_config, run_full_stack  # noqa: E402
from cardtable.service import RefereeService  # noqa: E402
from referee.model import Verdict  # noqa: E402


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class Latencies:
    """An output of the service: each game verdict's judging time minus its input's time."""

    def __init__(self) -> None:
        self.service: RefereeService | None = None
        self.window: list[float] = []
        self.verdicts = 0

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        if self.service is None:
            return
        now = self.service.clock.now()
        for v in verdicts:
            if v.verdict in ("false_slap", "pile_won", "slap_lost", "challenge"):
                self.window.append((now - v.t) / 1e6)
                self.verdicts += 1


async def soak(minutes: float, every: float) -> dict[str, Any]:
    samples: list[dict[str, Any]] = []
    lat = Latencies()
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        doc = full_stack_config("banka-bever", 4, 1, journal_dir=tmp, settle_ms=20)
        start = time.monotonic()

        async def sample() -> None:
            while True:
                await asyncio.sleep(every)
                window, lat.window = lat.window, []
                q = (statistics.quantiles(window, n=100, method="inclusive")
                     if len(window) >= 2 else [float("nan")] * 99)
                samples.append({"s": round(time.monotonic() - start), "rss_kb": rss_kb(),
                                "fds": open_fds(), "verdicts": len(window),
                                "p50_ms": round(q[49], 3), "p99_ms": round(q[98], 3)})

        def ready(service: RefereeService) -> None:
            lat.service = service

        sampler = asyncio.create_task(sample())
        try:
            service = await run_full_stack(doc, seed=1, speed=2.0, outputs=[lat],
                                           on_ready=ready, timeout_s=minutes * 60, again=True)
        finally:
            sampler.cancel()
        games = sum(1 for p in Path(tmp).glob("2*.jsonl")) + 1
    first, last = samples[0], samples[-1]
    steady = [s["p99_ms"] for s in samples if s["verdicts"] >= 2]
    return {
        "bench": "soak", "minutes": minutes, "games": games, "verdicts": lat.verdicts,
        "rss_kb_first": first["rss_kb"], "rss_kb_last": last["rss_kb"],
        "rss_growth_kb": last["rss_kb"] - first["rss_kb"],
        "fds_first": first["fds"], "fds_last": last["fds"],
        "p99_ms_first": first["p99_ms"], "p99_ms_last": last["p99_ms"],
        "p99_ms_max": max(steady) if steady else None,
        "journal_fault": service.journal_fault,
        "targets": {"rss_growth_kb": 5 * 1024, "fd_growth": 0},
        "samples": samples,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    args = parser.parse_args()
    every = min(args.every, args.minutes * 60 / 3)
    result = asyncio.run(soak(args.minutes, every))
    print(json.dumps(result))
    return 0 if result["journal_fault"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
