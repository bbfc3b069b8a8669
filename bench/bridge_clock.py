"""Clock sync error of the firmware bridge under ±100 ppm crystal drift. Prints one JSON line.

    python3 bench/bridge_clock.py [--seconds 10] [--minutes 30] [--seed 1]

``pty``: the virtual board (``firmware_bridge.emulator``) on a real pseudo-terminal, the host
link on pyserial-asyncio-fast, both in this process on CLOCK_MONOTONIC. The board's crystal runs
+100 ppm, then -100 ppm, with its 32-bit µs counter starting 2 s before the wrap; a button edge
every 20 ms is stamped in board ticks, and the error is the link's table-clock ``t`` minus the
true host instant of those ticks. Every event after the board came online counts (the first
seconds, before the drift is measured, included).

``virtual``: the same link and board code in virtual time (``firmware_bridge.sim``) for
``--minutes`` per drift, over a line with 50 µs + exponential(150 µs) one-way latency per write,
an event every 100 ms; errors after the first 10 s.

``bound_us`` is the error bound the link reports with each event; ``within_bound`` the share of
events whose true error was inside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from firmware_bridge.emulator import VirtualBoard
from firmware_bridge.events import BoardEvent
from firmware_bridge.link import Link
from firmware_bridge.sim import SimulatedLink

DRIFTS = (100.0, -100.0)


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _summary(errors: list[float], bounds: list[float], inside: int) -> dict[str, Any]:
    return {
        "events": len(errors),
        "error_us": {"p50": round(_pct(errors, 0.5), 1), "p99": round(_pct(errors, 0.99), 1),
                     "max": round(max(errors), 1)},
        "bound_us": {"p50": round(_pct(bounds, 0.5), 1), "max": round(max(bounds), 1)},
        "within_bound": round(inside / len(errors), 4),
    }


async def _pty_run(ppm: float, seconds: float, seed: int) -> tuple[list[float], list[float], int]:
    board = VirtualBoard(seed=seed, drift_ppm=ppm, tick_start=2**32 - 2_000_000)
    path = await board.start()
    link = Link(path)
    await link.open()
    try:
        await link.wait_online(10)
        truth: dict[int, float] = {}
        n = int(seconds / 0.02)
        for i in range(n):
            ticks = board.clock.ticks(time.monotonic_ns())
            truth[ticks & 0xFFFFFFFF] = board.clock.host_ns(ticks)
            board.press(i % 8, bool(i % 2), ticks)
            await asyncio.sleep(0.02)
        errors, bounds, inside = [], [], 0
        while len(errors) < n:
            ev = await link.next_event(10)
            if isinstance(ev, BoardEvent):
                err = abs(ev.t - truth[ev.ticks])
                errors.append(err / 1e3)
                bounds.append(ev.error_ns / 1e3)
                inside += err <= ev.error_ns
        return errors, bounds, inside
    finally:
        await link.close()
        await board.close()


def _virtual_run(ppm: float, minutes: float, seed: int) -> tuple[list[float], list[float], int]:
    sim = SimulatedLink(drift_ppm=ppm, tick_start=2**32 - 60_000_000, seed=seed,
                        latency_ns=lambda r: int(50_000 + r.expovariate(1 / 150_000)))
    sim.run_for(5, lambda: sim.link.online)
    truth: dict[int, float] = {}
    t0 = sim.t
    n = int(minutes * 600)

    def press(i: int) -> None:
        ticks = sim.board_clock.ticks(sim.t)
        truth[ticks & 0xFFFFFFFF] = sim.board_clock.host_ns(ticks)
        sim.board.button(i % 8, True, ticks)

    for i in range(n):
        sim.at(t0 + i * 100_000_000, lambda i=i: press(i))
    sim.run_for(minutes * 60 + 1)
    errors, bounds, inside = [], [], 0
    for ev in sim.events:
        if isinstance(ev, BoardEvent) and ev.t > t0 + 10 * 10**9:
            err = abs(ev.t - truth[ev.ticks])
            errors.append(err / 1e3)
            bounds.append(ev.error_ns / 1e3)
            inside += err <= ev.error_ns
    return errors, bounds, inside


def main(argv: list[str] | None = None) -> int:
    """Run both measurements and print the JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="pty run per drift (s)")
    ap.add_argument("--minutes", type=float, default=30.0, help="virtual run per drift (min)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"bench": "bridge_clock", "drift_ppm": list(DRIFTS)}
    for name, runner, span in (("pty", _pty_run, args.seconds),
                               ("virtual", _virtual_run, args.minutes)):
        errors: list[float] = []
        bounds: list[float] = []
        inside = 0
        for i, ppm in enumerate(DRIFTS):
            if name == "pty":
                e, b, k = asyncio.run(runner(ppm, span, args.seed + i))
            else:
                e, b, k = runner(ppm, span, args.seed + i)
            errors += e
            bounds += b
            inside += k
        key = "seconds" if name == "pty" else "minutes"
        result[name] = {key: span, **_summary(errors, bounds, inside)}
    result["under_1ms"] = all(result[k]["error_us"]["max"] < 1000 for k in ("pty", "virtual"))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
