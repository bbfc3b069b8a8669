"""The arbiter's cost per input against the number of inputs it holds, with sources reporting
progress. Prints one JSON line.

    python3 bench/arbiter.py [--rounds 3]

For each size n (10, 1 000, 100 000 held inputs), n inputs with shuffled times are pushed while
three sources report progress, then released in one go: the cost per input (push + progress +
release, best of ``--rounds``). Pushing and releasing are a heap (O(log n) per input) and the
release limit is a minimum over the sources (O(sources)), so the cost per input should grow like
log n: ``per_log2n`` (ns per input divided by log2 n) stays about flat. The baseline in the same
run is the same work with a sorted list (``bisect.insort``: O(n) per input).
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import random
import sys
import time

from referee.arbiter import Arbiter
from referee.model import Input, judging_key

SIZES = (10, 1_000, 100_000)
SOURCES = ("gpio", "board", "camera")


def with_arbiter(inputs: list[Input]) -> float:
    """Seconds to push, report progress for, and release ``inputs``."""
    arb = Arbiter(10**15)
    for s in SOURCES:
        arb.add_source(s)
    start = time.perf_counter()
    for k, inp in enumerate(inputs):
        arb.push(inp)
        arb.progress(SOURCES[k % 3], -1)
    for s in SOURCES:
        arb.progress(s, 10**12)
    out = arb.release(10**12)
    elapsed = time.perf_counter() - start
    assert len(out) == len(inputs)
    return elapsed


def with_sorted_list(inputs: list[Input]) -> float:
    """The baseline: the same order kept in a sorted list."""
    start = time.perf_counter()
    held: list[tuple[tuple[int, int, int], int]] = []
    for k, inp in enumerate(inputs):
        bisect.insort(held, (judging_key(inp, k), k))
    out = [inputs[k] for _, k in held]
    elapsed = time.perf_counter() - start
    assert len(out) == len(inputs)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rng = random.Random(1)
    sizes = {}
    for n in SIZES:
        inputs = [Input(rng.randrange(10**11), rng.randrange(8), "slap") for _ in range(n)]
        arb = min(with_arbiter(inputs) for _ in range(args.rounds))
        base = min(with_sorted_list(inputs) for _ in range(args.rounds))
        per = arb / n * 1e9
        sizes[str(n)] = {"ns_per_input": round(per), "per_log2n": round(per / math.log2(n), 1),
                         "sorted_list_ns_per_input": round(base / n * 1e9)}
    growth = sizes[str(SIZES[-1])]["ns_per_input"] / sizes[str(SIZES[0])]["ns_per_input"]
    print(json.dumps({"bench": "arbiter", "sources": len(SOURCES), "sizes": sizes,
                      "growth_10_to_100000": round(growth, 2),
                      "log_growth_10_to_100000": round(math.log2(SIZES[-1]) /
                                                       math.log2(SIZES[0]), 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
