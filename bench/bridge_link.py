"""Card-read events per second over the firmware bridge on a real pty, with byte faults.
Prints one JSON line.

    python3 bench/bridge_link.py [--events 10000] [--corrupt 0.01] [--drop 0.01] [--seed 1]

The virtual board (``firmware_bridge.emulator``) on the master end of a pseudo-terminal, the
host link (pyserial-asyncio-fast) on the slave end, one process, one event loop. Faults hit
every byte both ways (corrupted: XOR with a random non-zero byte; dropped).

``burst``: the board reads ``--events`` tags as fast as its window lets it (at most 256 waiting);
``events_per_s`` is from the first read to the last delivery. ``lost`` and ``doubled`` are
checked against what the board sent (both must be 0), ``damaged`` counts delivered events whose
tag was never sent. ``clean`` is the same burst without faults.

``paced``: 200 reads per second for ``--paced`` events with the same faults; ``latency_ms`` is
from the read's true instant to its delivery to the host program (what the arbiter's settle
window has to cover; resends after a damaged frame make the tail).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from firmware_bridge.emulator import Faults, VirtualBoard
from firmware_bridge.events import BoardEvent
from firmware_bridge.link import Link


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def _burst(n: int, faults: Faults | None, seed: int) -> dict[str, Any]:
    board = VirtualBoard(seed=seed, faults=faults)
    path = await board.start()
    link = Link(path)
    await link.open()
    try:
        await link.wait_online(10)
        tags = [i.to_bytes(4, "big") + b"\xa5" for i in range(n)]
        sent = set(tags)

        async def feed() -> None:
            for i, tag in enumerate(tags):
                board.read_tag(tag, i % 4)
                if i % 64 == 63:
                    await asyncio.sleep(0)
                    while board.core.sender.pending > 256:
                        await asyncio.sleep(0.001)

        t0 = time.perf_counter()
        feeder = asyncio.ensure_future(feed())
        got: list[bytes] = []
        offline = 0
        while len(got) < n:
            ev = await link.next_event(30)
            if isinstance(ev, BoardEvent):
                got.append(ev.tag or b"")
            elif getattr(ev, "kind", "") == "board_offline":
                offline += 1
        elapsed = time.perf_counter() - t0
        await feeder
        await asyncio.sleep(0.3)  # late resends would show up as doubles
        while not link._queue.empty():
            ev = link._queue.get_nowait()
            if isinstance(ev, BoardEvent):
                got.append(ev.tag or b"")
        unique = set(got)
        return {
            "events": n,
            "seconds": round(elapsed, 2),
            "events_per_s": round(n / elapsed),
            "lost": len(sent - unique),
            "doubled": len(got) - len(unique),
            "damaged": len(unique - sent),
            "board_frames_resent": board.core.sender.retransmits,
            "bad_frames_at_host": sum(link.stats.bad_frames.values()),
            "duplicates_filtered": link.stats.duplicates,
            "offline": offline,
            "bytes_corrupted": board.line_out.stats["corrupted"] + board.line_in.stats["corrupted"],
            "bytes_dropped": board.line_out.stats["dropped"] + board.line_in.stats["dropped"],
        }
    finally:
        await link.close()
        await board.close()


async def _paced(n: int, faults: Faults, seed: int) -> dict[str, Any]:
    board = VirtualBoard(seed=seed, faults=faults)
    path = await board.start()
    link = Link(path)
    await link.open()
    try:
        await link.wait_online(10)
        born: dict[bytes, int] = {}
        latency: list[float] = []

        async def collect() -> None:
            while len(latency) < n:
                ev = await link.next_event(30)
                if isinstance(ev, BoardEvent) and ev.tag in born:
                    latency.append((time.monotonic_ns() - born.pop(ev.tag)) / 1e6)

        collector = asyncio.ensure_future(collect())
        for i in range(n):
            tag = i.to_bytes(4, "big")
            born[tag] = time.monotonic_ns()
            board.read_tag(tag, 0)
            await asyncio.sleep(0.005)
        await collector
        return {"events": n, "rate_per_s": 200,
                "latency_ms": {"p50": round(_pct(latency, 0.5), 2),
                               "p99": round(_pct(latency, 0.99), 2),
                               "max": round(max(latency), 2)}}
    finally:
        await link.close()
        await board.close()


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print the JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--paced", type=int, default=2_000)
    ap.add_argument("--corrupt", type=float, default=0.01)
    ap.add_argument("--drop", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    faults = Faults(corrupt=args.corrupt, drop=args.drop, seed=args.seed)
    result = {
        "bench": "bridge_link",
        "transport": "pty + pyserial-asyncio-fast",
        "faults": {"corrupt": args.corrupt, "drop": args.drop},
        "burst": asyncio.run(_burst(args.events, faults, args.seed)),
        "clean": asyncio.run(_burst(args.events, None, args.seed)),
        "paced": asyncio.run(_paced(args.paced, faults, args.seed)),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
