"""The firmware on real MicroPython against the CPython board emulator, same run, same host
link: card-read events per second under byte faults, reads lost/doubled/damaged, and the clock
sync error of button edges. Prints one JSON line.

    python3 bench/firmware_mpy.py [--events 1000] [--corrupt 0.01] [--drop 0.01]
                                  [--seconds 3] [--seed 1]

``micropython``: ``firmware/pico/main.py`` in the MicroPython 1.27 VM under Node.js
(``firmware/harness``), on a pty; ``baseline``: ``firmware_bridge.emulator.VirtualBoard`` on a
pty. Both have the host's ``Link`` (pyserial) on the other end, at most 100 reads in flight.

``burst``: ``--events`` tag reads with ``--corrupt``/``--drop`` byte faults both ways;
``events_per_s`` from the first read to the last delivery; ``lost``, ``doubled`` and
``damaged`` (a delivered tag never read) must all be 0. ``sync``: a button edge every 20 ms
for ``--seconds`` at -100 and +100 ppm of drift, clean line; ``error_us`` is |table time of
the event − host time when the board's clock showed its ticks|, ``bound_us`` the error bound
the link reported for it, ``outside`` how many events fell outside their bound (must be 0).
Without Node.js or the npm package, the line says why (``skipped``) and the bench exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.firmware.harness

from firmware_bridge.emulator import Faults, VirtualBoard  # noqa: E402
from firmware_bridge.events import BoardEvent  # noqa: E402
from firmware_bridge.link import Link  # noqa: E402
from tests.firmware.harness import load_mpboard  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def _online(board: Any) -> tuple[Any, Link]:
    path = await board.start()
    link = Link(path)
    await link.open()
    await link.wait_online(15)
    return board, link


async def _burst(board: Any, n: int) -> dict[str, Any]:
    board, link = await _online(board)
    try:
        tags = [i.to_bytes(4, "big") + b"\xa5" for i in range(n)]
        got: list[bytes] = []
        sent = 0
        t0 = time.perf_counter()
        while len(got) < n:
            while sent < n and sent - len(got) < 100:
                board.read_tag(tags[sent], sent % 2)
                sent += 1
            ev = await link.next_event(30)
            if isinstance(ev, BoardEvent):
                got.append(ev.tag or b"")
        elapsed = time.perf_counter() - t0
        await asyncio.sleep(0.3)  # late resends would show up as doubles
        while not link._queue.empty():
            ev = link._queue.get_nowait()
            if isinstance(ev, BoardEvent):
                got.append(ev.tag or b"")
        unique = set(got)
        return {"events": n, "seconds": round(elapsed, 2), "events_per_s": round(n / elapsed),
                "lost": len(set(tags) - unique), "doubled": len(got) - len(unique),
                "damaged": len(unique - set(tags)),
                "bad_frames": sum(link.stats.bad_frames.values())}
    finally:
        await link.close()
        await board.close()


async def _sync(board: Any, seconds: float, truth_of: Any) -> tuple[list[float], list[float], int]:
    board, link = await _online(board)
    try:
        n = int(seconds / 0.02)
        truths: list[float] = []
        for i in range(n):
            truths.append(truth_of(board, i))
            await asyncio.sleep(0.02)
        events: list[BoardEvent] = []
        while len(events) < n:
            ev = await link.next_event(10)
            if isinstance(ev, BoardEvent):
                events.append(ev)
        events.sort(key=lambda e: e.seq)
        truths = truths if truths[0] else [float(r["tick_ns"]) for r in board.of("edge")]
        errors = [abs(e.t - t) for e, t in zip(events, truths, strict=True)]
        return errors, [float(e.error_ns) for e in events], [
            err > e.error_ns for err, e in zip(errors, events, strict=True)].count(True)
    finally:
        await link.close()
        await board.close()


def _press_emulator(board: VirtualBoard, i: int) -> float:
    ticks = board.clock.ticks(time.monotonic_ns())
    board.press(i % 4, (i // 4) % 2 == 0, ticks)
    return board.clock.host_ns(ticks)


def _press_micropython(board: Any, i: int) -> float:
    board.press(i % 4, (i // 4) % 2 == 0)
    return 0.0  # the truth comes back from the board (its edge records)


async def _one(kind: str, args: argparse.Namespace, mp: Any) -> dict[str, Any]:
    def board(**kw: Any) -> Any:
        if kind == "micropython":
            return mp.MicroPythonBoard(seed=args.seed, **kw)
        faults = (Faults(corrupt=kw.pop("corrupt"), drop=kw.pop("drop"))
                  if "corrupt" in kw else None)
        if "tick_start_us" in kw:
            kw["tick_start"] = kw.pop("tick_start_us")
        return VirtualBoard(seed=args.seed, faults=faults, **kw)

    out: dict[str, Any] = {"burst": await _burst(board(corrupt=args.corrupt, drop=args.drop),
                                                 args.events)}
    errors: list[float] = []
    bounds: list[float] = []
    outside = 0
    press = _press_micropython if kind == "micropython" else _press_emulator
    for ppm in (-100.0, 100.0):
        e, b, o = await _sync(board(drift_ppm=ppm, tick_start_us=2**30 - 1_000_000),
                              args.seconds / 2, press)
        errors += e
        bounds += b
        outside += o
    out["sync"] = {"events": len(errors),
                   "error_us": {"p50": round(_pct(errors, 0.5) / 1e3, 1),
                                "p99": round(_pct(errors, 0.99) / 1e3, 1),
                                "max": round(max(errors) / 1e3, 1)},
                   "bound_us": {"p50": round(_pct(bounds, 0.5) / 1e3, 1),
                                "max": round(max(bounds) / 1e3, 1)},
                   "outside": outside}
    return out


def main(argv: list[str] | None = None) -> int:
    """Run both boards and print the JSON line; exit 1 if a read was lost, doubled or damaged
    or an event fell outside its bound."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--corrupt", type=float, default=0.01)
    parser.add_argument("--drop", type=float, default=0.01)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    mp = load_mpboard()
    why = mp.missing()
    if why is not None:
        print(json.dumps({"bench": "firmware_mpy", "skipped": why}))
        return 0

    async def both() -> dict[str, Any]:
        return {"micropython": await _one("micropython", args, mp),
                "baseline": {"emulator": await _one("emulator", args, mp)}}

    result = asyncio.run(both())
    print(json.dumps({"bench": "firmware_mpy", **result}))
    bad = [r for r in (result["micropython"], result["baseline"]["emulator"])
           if r["burst"]["lost"] or r["burst"]["doubled"] or r["burst"]["damaged"]
           or r["sync"]["outside"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
