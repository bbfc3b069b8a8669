"""The slap-order checks as figures: 100 000 pairs 1 µs apart and 10 000 exact ties, judged by
the fixed window and by the GPIO pads' progress, and 20 000 pairs each with a board source that
never reports (quiet) and with pads whose progress runs ahead of late edges. Prints one JSON line.

    python3 bench/slap_checks.py [--scale 1.0]

On a virtual clock (nothing sleeps; ``tests/hardware/test_slaps.py``'s rig: mock pins, edges
delivered 0–19 ms late in random order, the driver polled as the service polls). Per run: pairs
right (the pile to the earlier edge; a tie to the seat first clockwise from the turn), late
inputs, and for the runs by progress the share of verdicts that left at the very delivery that
allowed them. ``progress_ahead`` breaks the promise on purpose: late edges are restamped and
counted, and ``replays_equal`` says every game's journal replays to the verdicts given live.
The suite asserts the same (``tests/hardware/test_slaps.py``); this prints the counts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' rig

from tests.hardware.test_slaps import (  # noqa: E402
    MS,
    new_position,
    play_pairs,
    rig,
    tie_winner,
)


def pairs(n: int, *, progress: bool, case: str = "", seed: int = 1_000_003) -> dict[str, Any]:
    """``n`` pairs 1 µs apart (the suite's :func:`play_pairs`), timed."""
    start = time.perf_counter()
    got: dict[str, Any] = dict(play_pairs(n, progress=progress, case=case, seed=seed))
    got["s"] = round(time.perf_counter() - start, 1)
    return got


def ties(n: int, *, progress: bool) -> dict[str, Any]:
    """``n`` exact ties: the clockwise tie rule, whichever was delivered first."""
    r = rig(progress=progress)
    rng = random.Random(77)
    window = r.driver.settle_ns
    right = 0
    for k in range(n):
        base = (k + 1) * 1_000 * MS
        m = rng.randint(2, 8)
        turn = new_position(r, m, rng.randrange(m), base)
        a, b = rng.sample(range(m), 2)
        t = base + 200 * MS + rng.randrange(MS)
        r.press(a, t, rng.randrange(window), hold=None)
        r.press(b, t, rng.randrange(window), hold=None)
        r.verdicts = []
        r.run_until(t + 2 * window)
        r.release(a, t + 60 * MS)
        r.release(b, t + 60 * MS)
        win = tie_winner(a, b, turn, m)
        right += [(v.verdict, v["seat"]) for v in r.verdicts][:1] == [("pile_won", win)]
    return {"ties": n, "right": right, "late": r.late}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="run this share of the pairs and ties (default 1: all)")
    args = parser.parse_args(argv)
    big, tie_n, small = (max(1, round(x * args.scale)) for x in (100_000, 10_000, 20_000))
    result = {
        "bench": "slap_checks",
        "window": pairs(big, progress=False),
        "progress": pairs(big, progress=True),
        "ties_window": ties(tie_n, progress=False),
        "ties_progress": ties(tie_n, progress=True),
        "quiet_board": pairs(small, progress=True, case="quiet_board", seed=20_011),
        "progress_ahead": pairs(small, progress=True, case="progress_ahead", seed=20_011),
    }
    print(json.dumps(result), flush=True)
    wrong = [name for name in ("window", "progress", "quiet_board")
             if result[name]["right"] != result[name]["pairs"] or result[name]["late"]]
    wrong += [name for name in ("ties_window", "ties_progress")
              if result[name]["right"] != result[name]["ties"]]
    if result["progress_ahead"]["replays_equal"] != small:
        wrong.append("progress_ahead")
    for name in wrong:
        print(f"slap_checks: {name} is not all right", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
