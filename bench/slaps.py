"""Slap arbitration on the real clock: from the later button edge of a race to its verdict leaving
the arbiter, judged by the pads' progress and by the fixed settle window in the same run. Prints
one JSON line.

    python3 bench/slaps.py [--pairs 400] [--seed 1] [--settle-ms 20]

Each pair: a new Banka bäver game where a slap wins (two fives laid through the table, 8 seats), two
seats press their slap buttons with edges 1 µs to 1 ms apart, stamped on CLOCK_MONOTONIC, each
delivered to its pin's callback 0.1–1 ms after its stamp (a busy Pi's callback latency; pigpio's
author measures about 0.5 ms) by a feeder thread (:class:`hardware.mock.EdgeFeeder`, as lgpio's
notification thread would), to gpiozero mock pins (:class:`hardware.mock.VirtualMockFactory` on
the real monotonic clock). The pads turn them into inputs, and the
:class:`hardware.slaps.SlapDriver` loop (its own thread) runs the loop production runs:
``referee.table.Table`` (push, then release in time order, then the engine).

Three runs over the same pairs: ``progress`` (the pads report how far they have delivered, the
arbiter releases a race as soon as both edges are in), ``progress_late`` (deliveries 0.1–3 ms:
the verdict can be no sooner than the later delivery) and ``window`` (the baseline: the fixed
settle window, no progress). Per run: ``correct`` (the pile went to the earlier edge),
edge → verdict latency p50/p99/max (from the later edge's stamp), and ``late`` (inputs restamped).

``--speech N`` adds ``speech``: N runs of ``progress`` with the table's speaker saying every
verdict (:class:`cardtable.speech.Speaker` as an output, espeak-ng in Swedish, writing its
audio to /dev/null on a machine without a sound card) alternating with N runs without it, in
the same process: the median of each side's p99 (and every run's), and how many changes the
speaker said and dropped. Issue 35's check that speech never delays a verdict.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
from typing import Any

from hardware.config import HardwareConfig, SeatPins
from hardware.mock import EdgeFeeder, MonotonicClock, VirtualMockFactory
from hardware.pads import SeatPads
from hardware.slaps import SlapDriver
from referee.cards import parse_card
from referee.deal import PileDeal
from referee.journal import JournalHeader
from referee.model import Input, Verdict
from referee.options import BankaOptions
from referee.table import Table

SEATS = 8
PINS = [4, 5, 6, 12, 13, 16, 17, 18]
US = 1_000
MS = 1_000_000


def position(dealer: int, now: int, settle_ns: int) -> Table:
    """A new game of eight seats, two fives just laid (the second 50 ms ago) and judged: the
    next slap wins."""
    cards = iter(parse_card(f"{r}{s}") for r in "2346789" for s in "CDHS")
    stacks = [[next(cards), next(cards)] for _ in range(SEATS)]
    stacks[(dealer + 1) % SEATS][0] = parse_card("5H")
    stacks[(dealer + 2) % SEATS][0] = parse_card("5S")
    header = JournalHeader("banka-bever", tuple(f"Seat {s}" for s in range(SEATS)), dealer,
                           BankaOptions(), deal=PileDeal(stacks=tuple(tuple(s) for s in stacks)))
    table = Table(header, settle_ns=settle_ns)
    table.push(Input(now - 100 * MS, (dealer + 1) % SEATS, "lay"))
    table.push(Input(now - 50 * MS, (dealer + 2) % SEATS, "lay"))
    table.release(now)
    return table


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest-rank method."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[k]


def run(pairs: int, seed: int, settle_ms: float, *, progress: bool = True,
        delivery_ms: tuple[float, float] = (0.1, 1.0), speaker: Any = None) -> dict[str, Any]:
    rng = random.Random(seed)
    clock = MonotonicClock()
    factory = VirtualMockFactory(clock)
    feeder = EdgeFeeder(factory)
    verdict_at: dict[str, Any] = {}
    got = threading.Event()

    def on_verdicts(verdicts: list[Verdict], state: dict[str, Any]) -> None:
        for v in verdicts:
            if v.verdict == "pile_won":
                verdict_at["t"] = time.monotonic_ns()
                verdict_at["seat"] = v["seat"]
            elif v.verdict == "slap_lost":
                verdict_at["lost"] = v["seat"]
        if "seat" in verdict_at and "lost" in verdict_at:
            got.set()  # both slaps judged: the next pair may start
        if speaker is not None:  # an output after the verdict, as in the service
            speaker.update(verdicts, state)

    settle_ns = round(settle_ms * MS)
    driver = SlapDriver(position(0, clock.now_ns(), settle_ns), on_verdicts=on_verdicts,
                        progress=progress)
    # The bench presses each pad about ten times a second, faster than a person slaps: the
    # chatter limit (hardware.max_presses_per_s, 8 by default) would rightly flag that.
    config = HardwareConfig(seats=tuple(SeatPins(s, f"Seat {s}", p) for s, p in enumerate(PINS)),
                            pin_factory="mock", max_presses_per_s=100)
    seat_pads = SeatPads(config, driver.submit, driver.notice, pin_factory=factory)
    driver.pads = seat_pads  # the driver's loop checks them (lockouts, stuck buttons)
    pads = [seat_pads.slap[s] for s in range(SEATS)]
    released = [clock.now_ns()] * SEATS  # no edge can predate its pad
    stop = threading.Event()
    loop = threading.Thread(target=driver.serve, args=(stop,), daemon=True)
    loop.start()

    latencies: list[float] = []
    over: list[float] = []
    correct = 0
    late = 0  # over every game: each pair is a new table with its own arbiter
    try:
        for k in range(pairs):
            game = position(rng.randrange(SEATS), clock.now_ns(), settle_ns)
            late += driver.new_game(game).arbiter.late
            # Each seat's pad is used every fourth pair.
            a, b = (2 * k) % SEATS, (2 * k + 1) % SEATS
            if rng.random() < 0.5:
                a, b = b, a
            # A person presses again no sooner than a bounce lockout after letting go.
            ready = max(released[a], released[b]) + config.lockout_ns + 5 * MS
            while clock.now_ns() < ready:
                time.sleep(max(0, ready - clock.now_ns()) / 1e9)
            got.clear()
            verdict_at.clear()
            t_a = clock.now_ns()  # a's edge happened first ...
            t_b = t_a + round(10 ** rng.uniform(3, 6))  # ... 1 µs to 1 ms before b's
            lo, hi = (round(d * MS) for d in delivery_ms)
            for seat, t in ((a, t_a), (b, t_b)):
                feeder.schedule(pads[seat].pin, False, t, t + rng.randrange(lo, hi))
            if not got.wait(5):
                raise RuntimeError(f"pair {k}: no verdict within 5 s")
            latencies.append((verdict_at["t"] - t_b) / MS)
            over.append((verdict_at["t"] - (t_b + settle_ns)) / MS)
            correct += verdict_at["seat"] == a
            for seat in (a, b):
                released[seat] = clock.now_ns()
                pads[seat].pin.drive_at(True, released[seat])
    finally:
        stop.set()
        loop.join(5)
        feeder.close()
        seat_pads.close()
    return {
        "pairs": pairs,
        "correct": correct,
        "delivery_ms": list(delivery_ms),
        "p50_ms": round(statistics.median(latencies), 3),
        "p99_ms": round(percentile(latencies, 0.99), 3),
        "max_ms": round(max(latencies), 3),
        "over_window_p99_ms": round(percentile(over, 0.99), 3),
        "late": late + driver.table.arbiter.late,
    }


def speech_runs(pairs: int, seed: int, settle_ms: float, n: int) -> dict[str, Any]:
    """``n`` runs of ``progress`` without and with the speaker, alternating (see the module's
    docstring)."""
    import asyncio
    import shutil

    from cardtable.i18n import language
    from cardtable.speech import Speaker, SpeechConfig

    engine = shutil.which("espeak-ng")
    if engine is None:
        return {"skipped": "espeak-ng is not installed (apt-get install espeak-ng; "
                "bash .ci/provision)"}
    off: list[float] = []
    on: list[float] = []
    said = dropped = 0
    for k in range(n):
        off.append(run(pairs, seed + k, settle_ms)["p99_ms"])
        speaker = Speaker(SpeechConfig(engine=engine), language("sv"),
                          extra=["-w", "/dev/null"])
        asyncio.run(speaker.start())
        on.append(run(pairs, seed + k, settle_ms, speaker=speaker)["p99_ms"])
        said += len(speaker.said)
        dropped += speaker.dropped
        asyncio.run(speaker.stop())
    return {"runs": n, "engine": "espeak-ng -v sv", "p99_ms_off": off, "p99_ms_on": on,
            "median_p99_ms_off": round(statistics.median(off), 3),
            "median_p99_ms_on": round(statistics.median(on), 3),
            "said": said, "dropped": dropped}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--settle-ms", type=float, default=20.0)
    parser.add_argument("--speech", type=int, default=0, metavar="N",
                        help="also N runs with the speaker saying every verdict, alternating "
                        "with N without (default 0: none)")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"bench": "slaps", "settle_ms": args.settle_ms,
                              "clock": "CLOCK_MONOTONIC",
                              "backend": "gpiozero MockFactory (hardware.mock)"}
    result["progress"] = run(args.pairs, args.seed, args.settle_ms)
    result["progress_late"] = run(args.pairs, args.seed, args.settle_ms, delivery_ms=(0.1, 3.0))
    result["window"] = run(args.pairs, args.seed, args.settle_ms, progress=False)
    result["speedup_p99"] = round(result["window"]["p99_ms"] / result["progress"]["p99_ms"], 1)
    if args.speech:
        result["speech"] = speech_runs(args.pairs, args.seed, args.settle_ms, args.speech)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
