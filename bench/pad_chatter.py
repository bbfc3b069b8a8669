"""A chattering slap pad at a full table: what reaches the journal, whether the game goes on, and
what it costs in memory. Prints one JSON line.

    python3 bench/pad_chatter.py [--seconds 15] [--rate 10000]

The full mock stack (``referee simulate --full-stack``: the service ``referee run`` starts, mock
GPIO pads, the emulated board on a pty, four virtual players of Banka bäver) plays for
``--seconds`` while a thread drives seat 1's slap line at ``--rate`` random edges a second
(issue 10.10: before, every 60 ms of it was a journaled false slap, the players laid no card and
the process grew by about 1 MB a second). Measured: the slaps of that seat in the journal (at
most ``max_presses_per_s`` before the pad is flagged), the cards laid meanwhile by everyone, and
the resident memory at the start (the baseline) and at the end. Exit status 1 when the pad was
not flagged, more than 8 of its slaps were journaled, or no card was laid.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cardtable.fullstack import SLAP_PINS, full_stack_config, run_full_stack
from hardware.config import DEFAULT_MAX_PRESSES_PER_S
from referee.journal import read_journal


def rss_mb() -> float:
    """This process's resident memory, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def chatter(pin: Any, rate: int, stop: threading.Event, count: list[int]) -> None:
    """Drive ``pin`` at ``rate`` random edges a second, stamped when they happen, until
    ``stop``; then let the line rest released."""
    rng, level, last = random.Random(1), True, time.monotonic_ns()
    while not stop.is_set():
        time.sleep(0.001)
        now, t = time.monotonic_ns(), last
        while (t := t + int(rng.expovariate(rate) * 1e9) + 1) <= now:
            level = not level
            pin.drive_at(level, t)
            count[0] += 1
        last = now
    pin.drive_at(True, time.monotonic_ns())


def run(seconds: float, rate: int) -> dict[str, Any]:
    """One run of the full stack with seat 1's slap line chattering."""
    journal_dir = tempfile.mkdtemp(prefix="pad-chatter-")
    doc = full_stack_config("banka-bever", 4, 7, journal_dir=journal_dir)
    stop = threading.Event()
    edges = [0]
    start: dict[str, float] = {}

    def on_ready(service: Any) -> None:
        gpio = next(e for e in service.edges if type(e).__name__ == "GpioEdge")
        pin = gpio.pads.pin_factory.pin(SLAP_PINS[1])
        start["rss_mb"] = rss_mb()
        start["t"] = time.monotonic()
        threading.Thread(target=chatter, args=(pin, rate, stop, edges), daemon=True).start()

    async def play() -> Any:
        try:
            return await run_full_stack(doc, seed=7, on_ready=on_ready, timeout_s=seconds)
        finally:
            stop.set()

    service = asyncio.run(play())
    elapsed = time.monotonic() - start.get("t", time.monotonic())
    end_rss = rss_mb()
    inputs = read_journal(Path(journal_dir) / "current.jsonl").inputs
    flags = [v for v in service.table.verdicts if v.verdict == "button_chatter"]
    return {
        "bench": "pad_chatter",
        "seconds": round(elapsed, 1),
        "edges": edges[0],
        "edges_per_s": round(edges[0] / max(elapsed, 1e-9)),
        "chattering_seat_slaps_journaled": sum(i.act == "slap" and i.seat == 1 for i in inputs),
        "cards_laid": sum(i.act == "lay" for i in inputs),
        "flagged": "chatter" in service.state()["alerts"] or bool(flags),
        "rss_start_mb": start.get("rss_mb"),
        "rss_end_mb": end_rss,
        "baseline": "rss_start_mb: the same process before the chatter began",
    }


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its JSON line; exit 1 on a real failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rate", type=int, default=10_000, help="edges per second")
    args = parser.parse_args(argv)
    result = run(args.seconds, args.rate)
    print(json.dumps(result), flush=True)
    failures = []
    if not result["flagged"]:
        failures.append("the chattering pad was never flagged")
    if result["chattering_seat_slaps_journaled"] > DEFAULT_MAX_PRESSES_PER_S:
        failures.append(f"{result['chattering_seat_slaps_journaled']} of its slaps journaled")
    if not result["cards_laid"]:
        failures.append("no card was laid: the game did not go on")
    for why in failures:
        print(f"pad_chatter: {why}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
