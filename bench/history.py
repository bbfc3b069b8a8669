"""`referee history` over a folder of thousands of journals (issue 36: 5 000 in under 5 s).

A folder of ``--journals`` archived games (default 5 000: copies of 30 seeded simulations of the
three games, each under its own name and time) and the game being played. Measured, each once
on this machine's shared cores:

- ``cold_s``: :func:`cardtable.history.read_history` with no cache, every journal judged again
  (the baseline, in the same run: what every look cost before the cache);
- ``warm_s``: the same again, the folder unchanged (the records from ``.history-cache.json``);
- ``changed_s``: after one journal has a line more (that one judged again);
- ``command_s``: ``referee history --journal-dir`` as a person runs it (a process of its own,
  Python's start included), warm.

Prints one JSON line; exits non-zero only when a warm read lists other games than the cold one.

    python3 bench/history.py [--journals 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cardtable.history import CACHE, read_history  # noqa: E402
from cardtable.simulate import Simulation  # noqa: E402
from referee.journal import dump_journal  # noqa: E402

GAMES = (("banka-bever", 4), ("vandatta", 3), ("beggar-my-neighbour", 2))


def make_folder(folder: Path, n: int) -> None:
    """``n`` archived journals and a current one, a minute apart, ending an hour ago."""
    texts = []
    for seed in range(10):
        for game, players in GAMES:
            sim = Simulation(game, players, seed)
            sim.run()
            texts.append((game, dump_journal(sim.header, sim.table.inputs)))
    end = time.time() - 3600
    for k in range(n):
        game, text = texts[k % len(texts)]
        when = end - (n - k) * 60
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
        path = folder / f"{stamp}-{game}.jsonl"
        path.write_text(text)
        os.utime(path, (when, when))
    game, text = texts[0]
    (folder / "current.jsonl").write_text(text.rsplit("\n", 30)[0] + "\n")


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--journals", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        folder = Path(tmp)
        make_folder(folder, args.journals)
        cold, cold_s = timed(lambda: read_history(folder))
        warm, warm_s = timed(lambda: read_history(folder))
        one = sorted(folder.glob("2*.jsonl"))[len(cold.games) // 2]
        with one.open("a") as fh:
            fh.write('{"t": 1, "seat": 0, "act": "lay"}\n')
        _, changed_s = timed(lambda: read_history(folder))
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "cardtable.cli", "history", "--journal-dir",
                               str(folder)], capture_output=True, text=True, cwd=ROOT)
        command_s = time.perf_counter() - start
        same = [g.to_json() for g in cold.games] == [g.to_json() for g in warm.games]
        line = {
            "bench": "history", "journals": len(cold.games),
            "cache_bytes": (folder / CACHE).stat().st_size,
            "cold_s": round(cold_s, 2), "warm_s": round(warm_s, 3),
            "changed_s": round(changed_s, 3), "command_s": round(command_s, 2),
            "command_status": done.returncode, "warm_speedup": round(cold_s / warm_s, 1),
            "same_records": same, "target_s": 5.0,
        }
    print(json.dumps(line))
    return 0 if same and done.returncode in (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
