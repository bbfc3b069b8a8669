"""Whether enrolment's self-check names the cards the table then fails to read (issue 33: "at
the end reports which cards of the deck it cannot tell apart").

Each deck (default fold 1's, which the shipped networks never saw) is enrolled from 52 rendered
photos, as ``bench/camera_decks.py`` enrols it; :func:`~hardware.camera.reader.enroll.self_check`
reads each photo again; then the deck is read, enrolled, in rendered scenes over the issue's
range. Printed per deck: the cards the check named (with what they were read as) and how their
scenes were read; in all: the share of scenes not read right for the cards named and, as the
baseline, for the cards not named. A check worth its words names few cards, and those fail in
the scenes far more often than the rest.

``python3 bench/camera_selfcheck.py [--scenes N] [--decks a,b] [--first-seed S]`` (default 180
scenes a deck from seed 52 000; ``BENCH_SHORT=1``: 20 scenes, two decks). One JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402

from hardware.camera.reader.enroll import Enroller, Seen, build, self_check  # noqa: E402
from hardware.camera.reader.recognise import Recogniser  # noqa: E402
from hardware.camera.synthetic.artwork import FOLDS  # noqa: E402
from hardware.camera.synthetic.evaluate import photo  # noqa: E402
from hardware.camera.synthetic.scene import random_scene, render  # noqa: E402
from referee.cards import Card, full_deck  # noqa: E402


def enrolled_seen(deck: str, enroller: Enroller) -> dict[Card, Seen]:
    """The 52 cards seen as :func:`hardware.camera.synthetic.evaluate.enrolled` sees them,
    each with its photo."""
    seen: dict[Card, Seen] = {}
    for card in full_deck():
        for attempt in range(5):
            image = render(photo(deck, card, 100 * attempt))
            got = enroller.see(image)
            if got is not None:
                seen[card] = replace(got, photo=image)
                break
        else:
            raise RuntimeError(f"{deck}: no photo of {card} showed a card")
    return seen


def main() -> int:
    short = os.environ.get("BENCH_SHORT") == "1"
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=20 if short else 180)
    ap.add_argument("--decks", default=",".join(FOLDS[0][:2] if short else FOLDS[0]),
                    help="comma-separated allowed decks (default: fold 1's)")
    ap.add_argument("--first-seed", type=int, default=52_000)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    t0 = time.monotonic()
    enroller = Enroller()
    per_deck: dict[str, dict[str, object]] = {}
    named_reads = named_bad = other_reads = other_bad = 0
    check_s = 0.0
    for deck in args.decks.split(","):
        seen = enrolled_seen(deck, enroller)
        enrolled = build(seen)
        recogniser = Recogniser(enrolled)
        c0 = time.process_time()
        unread = self_check(enrolled, seen, recogniser)
        check_s += time.process_time() - c0
        named = {card for card, _, _ in unread}
        scenes: dict[str, list[int]] = {}  # each named card: [right, seen]
        for seed in range(args.first_seed, args.first_seed + args.scenes):
            s = random_scene(seed, deck)
            right = recogniser.read(render(s)).card == s.top
            if s.top in named:
                named_reads += 1
                named_bad += not right
                scenes.setdefault(str(s.top), [0, 0])
                scenes[str(s.top)][0] += right
                scenes[str(s.top)][1] += 1
            else:
                other_reads += 1
                other_bad += not right
        per_deck[deck] = {
            "named": [f"{card}->{'unclear' if got is None else got}"
                      + (f" ({why})" if why else "") for card, got, why in unread],
            "named_in_scenes_right_of": scenes}
        print(f"{deck}: {per_deck[deck]}", file=sys.stderr, flush=True)
    decks = len(per_deck)
    print(json.dumps({
        "bench": "camera_selfcheck", "scenes_per_deck": args.scenes,
        "first_seed": args.first_seed, "decks": per_deck,
        "cards_named": sum(len(d["named"]) for d in per_deck.values()),  # type: ignore[arg-type]
        "cards_checked": 52 * decks,
        "named_not_right": round(named_bad / named_reads, 4) if named_reads else None,
        "named_reads": named_reads,
        "baseline": {"others_not_right": round(other_bad / max(1, other_reads), 4),
                     "other_reads": other_reads},
        "check_cpu_s_per_deck": round(check_s / max(1, decks), 2),
        "seconds": round(time.monotonic() - t0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
