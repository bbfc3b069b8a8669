"""The camera recogniser (issue 12): out of the box on the held-out deck (touati) and on the
training decks, after enrollment, on borderless copies of a training deck (``anglo+plain``: its
border line painted white), and the time from a 640x480 frame to a card on one core; then lays
from a rendered 30 fps video of a simulated game.

``python3 bench/camera.py [--scenes N] [--lays N] [--plain-scenes N]`` (defaults 2000 scenes
per deck, 500 borderless, the whole game); ``BENCH_SHORT=1`` runs 60 scenes, 20 borderless and
12 lays. Prints one JSON line. The baseline is
the targets of the issue (97 % correct and 0.5 % wrong out of the box; 99.5 % / 0.1 % after
enrollment; 15 ms median; every lay once within two frame periods): figures, not pass marks;
the bench exits non-zero only when the recogniser cannot run. With the read times it prints
``reference_ms``, the CPU time of a fixed piece of OpenCV and numpy work measured in the same
run (at the start and after the scenes), and the median read time in units of it: this
shared machine's speed changes by half from hour to hour, and the ratio says whether the
recogniser or the machine changed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from cardtable.simulate import Simulation  # noqa: E402
from hardware.camera.reader.find import find_cards  # noqa: E402
from hardware.camera.reader.lays import LayTracker  # noqa: E402
from hardware.camera.reader.recognise import Recogniser  # noqa: E402
from hardware.camera.reader.templates import EnrolledDeck, template_vector  # noqa: E402
from hardware.camera.reader.warp import warp  # noqa: E402
from hardware.camera.synthetic.evaluate import score_deck  # noqa: E402
from hardware.camera.synthetic.scene import PLAIN, random_scene, render  # noqa: E402
from hardware.camera.synthetic.virtual import film_game  # noqa: E402
from referee.cards import full_deck  # noqa: E402


def enrolled(deck: str) -> EnrolledDeck:
    """The deck enrolled from 52 clean photos (as `referee camera enroll --images` does)."""
    cards, vectors = [], []
    for card in full_deck():
        for seed in range(7, 40):
            scene = random_scene(seed, deck, top=card, beneath=0, hands=False)
            scene.glare, scene.blur, scene.motion = None, 0.0, 0.0
            image = render(scene)
            quads = find_cards(image)
            if quads:
                cards.append(card)
                vectors.append(template_vector(warp(image, quads[0])))
                break
    return EnrolledDeck(tuple(cards), np.stack(vectors))


def reference_ms(repeats: int = 60) -> float:
    """The median CPU time of a fixed piece of OpenCV and numpy work on one 640x480 frame (a
    blur, Canny, a float sum): how fast this machine is at the time of the run, so that a read
    time can be compared across runs of a shared, noisy machine."""
    image = np.random.default_rng(0).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        blurred = cv2.GaussianBlur(image, (0, 0), 2.0)
        cv2.Canny(cv2.cvtColor(blurred, cv2.COLOR_BGR2GRAY), 50, 150)
        float((image.astype(np.float32) * 0.5 + 3).sum())
        times.append((time.process_time() - t0) * 1000)
    return statistics.median(times)


def lays_figures(n_lays: int | None) -> dict[str, object]:
    """Film a seeded Banka bäver game at 30 fps and find its lays."""
    filmed = film_game(Simulation("banka-bever", 3, 7).moves(), "anglo", 7, max_lays=n_lays)
    recogniser, tracker = Recogniser(), LayTracker()
    found = []
    frames = 0
    for frame in filmed.table.frames(0, filmed.lays[-1][0] + 500_000_000):
        frames += 1
        lay = tracker.feed(frame.t, recogniser.read(frame.image).card)
        if lay is not None:
            found.append((lay.t, lay.card))
    true = list(filmed.lays)
    matched, late, i, out_of_order = 0, [], 0, 0
    for t, card in found:
        j = i
        while j < len(true) and true[j][1] != card:
            j += 1
        if j == len(true):
            out_of_order += 1
            continue
        matched += 1
        late.append((t - true[j][0]) / 1e6)
        i = j + 1
    period = 1000 / 30
    return {"video_lays": len(true), "video_frames": frames, "lays_found": matched,
            "lays_spurious": out_of_order,
            "lays_within_2_frames": sum(1 for d in late if 0 <= d <= 2 * period),
            "lay_delay_ms_median": round(statistics.median(late), 1) if late else None}


def main() -> int:
    short = os.environ.get("BENCH_SHORT") == "1"
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=60 if short else 2000)
    ap.add_argument("--lays", type=int, default=12 if short else 0)
    ap.add_argument("--plain-scenes", type=int, default=20 if short else 500,
                    help="scenes of anglo with its border line painted white (borderless, "
                    "as most real decks; the finder's hard case)")
    args = ap.parse_args()
    cv2.setNumThreads(1)  # one core
    seeds = range(10_000, 10_000 + args.scenes)
    reference_start = reference_ms()  # and again after the scenes: the two averaged
    plain = Recogniser()
    t0 = time.monotonic()
    held = score_deck("touati", seeds, plain)
    trained = score_deck("anglo", seeds, plain)
    with_deck = score_deck("touati", seeds, Recogniser(enrolled("touati")))
    borderless = score_deck("anglo" + PLAIN, range(10_000, 10_000 + args.plain_scenes), plain)
    times = held.times_ms + trained.times_ms
    reference = (reference_start + reference_ms()) / 2
    line = {"bench": "camera", "scenes_per_deck": args.scenes,
            "held_out_touati": held.figures(), "trained_anglo": trained.figures(),
            "enrolled_touati": with_deck.figures(), "borderless_anglo": borderless.figures(),
            "frame_to_card_ms_median": round(statistics.median(times), 2),
            "frame_to_card_ms_p90": round(float(np.percentile(times, 90)), 2),
            "reference_ms": round(reference, 3),
            "frame_to_card_per_reference": round(statistics.median(times) / reference, 3),
            **lays_figures(args.lays or None),
            "seconds": round(time.monotonic() - t0, 1),
            "baseline": {"out_of_box_correct": 0.97, "out_of_box_wrong": 0.005,
                         "enrolled_correct": 0.995, "enrolled_wrong": 0.001,
                         "median_ms": 15, "lays": "every lay once, within 2 frames"}}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
