"""The camera's latency at a full-stack table (issue 12): how long after the first frame that
showed a card its lay reached the referee (two more frames plus reading them), the frames read
per second, the lays the operator had to type, and whether the service's verdicts are the
verdicts of replaying its journal. The baseline is the camera table's settle window,
which the latency must stay under for inputs to be judged in their place (1 000 ms).

``python3 bench/camera_latency.py [--seconds S] [--deck DECK]`` (default 30 s of Banka bäver,
3 seats, anglo); ``BENCH_SHORT=1``: 8 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from cardtable.fullstack import full_stack_config, run_full_stack  # noqa: E402
from hardware.camera.config import CAMERA_SETTLE_MS  # noqa: E402
from referee.journal import read_journal  # noqa: E402
from referee.model import NOTICE_KINDS, Verdict  # noqa: E402
from referee.table import replay  # noqa: E402


class Recorder:
    def __init__(self) -> None:
        self.verdicts: list[dict[str, Any]] = []

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        self.verdicts += [v.to_json() for v in verdicts if v.verdict not in NOTICE_KINDS]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float,
                    default=8.0 if os.environ.get("BENCH_SHORT") == "1" else 30.0)
    ap.add_argument("--deck", default="anglo")
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="camera-latency-")
    doc = full_stack_config("banka-bever", 3, 7, journal_dir=folder, card_source="camera",
                            settle_ms=CAMERA_SETTLE_MS)
    rec = Recorder()
    service = asyncio.run(run_full_stack(doc, seed=7, speed=1.0, outputs=[rec],
                                         timeout_s=args.seconds, camera_deck=args.deck))
    camera = next(o for o in service.outputs if type(o).__name__ == "CameraTable")
    delays = np.array([d for _, d in camera.edge.seen], float) / 1e6
    judged = [v.to_json() for v in replay(read_journal(f"{folder}/current.jsonl"),
                                          finish=False).verdicts]
    same = judged[:len(rec.verdicts)] == rec.verdicts
    line = {"bench": "camera_latency", "seconds": args.seconds, "deck": args.deck,
            "cards_laid": camera.laid, "camera_lays": len(delays),
            "typed_by_operator": camera.typed,
            "frames_per_s": round(camera.edge.frames_read / args.seconds, 1),
            "latency_ms_p50": round(float(np.median(delays)), 1) if len(delays) else None,
            "latency_ms_p99": round(float(np.percentile(delays, 99)), 1) if len(delays)
            else None,
            "latency_ms_max": round(float(delays.max()), 1) if len(delays) else None,
            "verdicts_match_replay": same, "baseline": {"settle_ms": CAMERA_SETTLE_MS}}
    print(json.dumps(line))
    return 0 if same and len(delays) else 1


if __name__ == "__main__":
    sys.exit(main())
