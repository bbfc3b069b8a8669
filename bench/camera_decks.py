"""Leave-decks-out figures of the camera (issue 33): each allowed real deck read by networks
that never saw it, out of the box and after enrolling it.

The real decks (:data:`hardware.camera.synthetic.artwork.REAL_DECKS`) lie in five folds
(:data:`~hardware.camera.synthetic.artwork.FOLDS`; decks that share artwork in one fold). The
locator and the classifier of fold K were trained without fold K's decks (``python3 -m
training.locator --fold K``, ``python3 -m training.classifier --fold K``, in the cache); each of
fold K's decks is read with them, in scenes over the issue's whole range
(:func:`~hardware.camera.synthetic.scene.random_scene`: 640x480 to 1280x960, the top card 120
pixels to 90 % of the frame, any turn, tilt to 30 degrees, 0-4 cards beneath, any table, glare,
blur, noise, JPEG), out of the box and with the deck enrolled from 52 rendered photos.

``python3 bench/camera_decks.py [--scenes N] [--folds 1,2,...] [--dump PATH]`` (default 120
scenes a deck, every fold whose networks are there: fold 1's ship, so fold 1 always is;
``BENCH_SHORT=1``: 10 scenes a deck, fold 1). Prints one JSON line:
each deck's shares right, wrong and unclear, both ways, and the totals over all decks, with
the issue's targets as the baseline. ``--dump`` writes what each read was made of (one JSON
line a scene), from which the thresholds were chosen (docs/camera.md). Exits non-zero only
when a fold's networks are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from hardware.camera.reader.classify import CLASSIFIER_PATH, suit_chances  # noqa: E402
from hardware.camera.reader.enroll import Enroller  # noqa: E402
from hardware.camera.reader.locate import LOCATOR_PATH  # noqa: E402
from hardware.camera.reader.recognise import (  # noqa: E402
    INDEX,
    Read,
    Recogniser,
    likeliest,
)
from hardware.camera.reader.templates import picture  # noqa: E402
from hardware.camera.reader.warp import pip_count, views, warp  # noqa: E402
from hardware.camera.synthetic.artwork import FOLDS, cache_dir  # noqa: E402
from hardware.camera.synthetic.evaluate import (  # noqa: E402
    TARGETS,
    Score,
    enrolled,
    timed_read,
)
from hardware.camera.synthetic.scene import random_scene, render  # noqa: E402

#: The scenes' seeds: apart from every seed training drew.
FIRST_SEED = 50_000


#: The fold whose networks ship (hardware/camera/reader/weights.json): without its networks in
#: the cache, the shipped files are that fold's.
SHIPPED_FOLD = 1


def fold_models(k: int) -> tuple[Path, Path]:
    """The locator and classifier of fold ``k`` (``training --fold K`` writes them)."""
    models = cache_dir() / "models"
    locator, classifier = models / f"locator-fold-{k}.onnx", models / f"classifier-fold-{k}.onnx"
    if k == SHIPPED_FOLD and not (locator.exists() and classifier.exists()):
        return LOCATOR_PATH, CLASSIFIER_PATH
    return locator, classifier


def trained_folds() -> list[int]:
    """The folds whose networks are there."""
    return [k for k in range(1, len(FOLDS) + 1) if all(p.exists() for p in fold_models(k))]


def before_pips(read: Read) -> str | None:
    """The card a read named before its pips were looked at (None: unclear before)."""
    card = read.guess if read.reason == "pips disagree" else read.card
    return None if card is None else str(card)


def totals(scores: list[Score]) -> dict[str, object]:
    """Shares over several decks' scores."""
    n = sum(s.total for s in scores) or 1
    return {"scenes": n, "correct": round(sum(s.correct for s in scores) / n, 4),
            "wrong": round(sum(s.wrong for s in scores) / n, 4),
            "unclear": round(sum(s.unclear for s in scores) / n, 4)}


def main() -> int:
    short = os.environ.get("BENCH_SHORT") == "1"
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=10 if short else 120)
    ap.add_argument("--folds", default="1" if short else ",".join(map(str, trained_folds())),
                    help="the folds to read, comma-separated (default: every fold whose "
                    "networks are there; the shipped networks are fold 1's)")
    ap.add_argument("--dump", type=Path, help="write each read's parts here (JSON lines)")
    ap.add_argument("--first-seed", type=int, default=FIRST_SEED,
                    help=f"the first scene's seed (default {FIRST_SEED}; the thresholds were "
                    "chosen on scenes from 40000, training.calibrate)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    t0 = time.monotonic()
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    per_deck: dict[str, dict[str, object]] = {}
    out_of_box: list[Score] = []
    with_deck: list[Score] = []
    for k in (int(f) for f in args.folds.split(",")):
        locator, classifier = fold_models(k)
        if not (locator.exists() and classifier.exists()):
            print(f"fold {k}: {locator.name} or {classifier.name} missing in {locator.parent} "
                  f"(python3 -m training.locator --fold {k}; python3 -m training.classifier "
                  f"--fold {k})", file=sys.stderr)
            return 2
        plain = Recogniser(locator=locator, classifier=classifier)
        for deck in FOLDS[k - 1]:
            enrolled_deck = enrolled(deck, Enroller(plain.locator, plain.classifier))
            mine = Recogniser(enrolled_deck, locator=locator, classifier=classifier)
            a, b = Score(deck), Score(deck)
            for seed in range(args.first_seed, args.first_seed + args.scenes):
                scene = random_scene(seed, deck)
                frame = render(scene)
                read, ms = timed_read(plain, frame)
                a.add(scene, read, ms)
                read2, ms2 = timed_read(mine, frame)
                b.add(scene, read2, ms2)
                if dump is not None:
                    row: dict[str, object] = {
                        "fold": k, "deck": deck, "seed": seed, "top": str(scene.top),
                        "size": list(scene.size), "read": read.to_json(),
                        "enrolled": read2.to_json(), "reason": read.reason,
                        "enrolled_reason": read2.reason,
                        "named": before_pips(read), "enrolled_named": before_pips(read2)}
                    spots = plain.locator.look(frame, 1).spots
                    if spots:
                        row["on_top"] = round(spots[0].on_top, 4)
                    if read.quad is not None:
                        warped = warp(frame, read.quad)
                        look = plain.classifier.look(views(warped))
                        card, chance, index = likeliest(look, plain.meaning)
                        m = enrolled_deck.match(look)
                        dcard, dchance, dindex = likeliest(look, enrolled_deck.meaning)
                        row.update(guess=str(card), chance=round(chance, 4),
                                   index=round(index, 4), match=str(m.card),
                                   score=round(m.score, 4), margin=round(m.margin, 4),
                                   deck_guess=str(dcard), deck_chance=round(dchance, 4),
                                   deck_index=round(dindex, 4), indexed=index >= INDEX,
                                   deck_guess_score=round(
                                       enrolled_deck.scores(look)[dcard], 4),
                                   glyphs=np.round(look.glyphs, 4).tolist(),
                                   suits=np.round(look.suits, 4).tolist())
                        row["pips"] = np.round(plain.pips(warped), 4).tolist()
                        row.update(count=pip_count(warped),
                                   suit=round(float(suit_chances(look).max()), 4))
                        pm = enrolled_deck.match_picture(picture(warped))
                        if pm is not None:
                            row.update(picture=str(pm.card), picture_score=round(pm.score, 4),
                                       picture_margin=round(pm.margin, 4))
                    dump.write(json.dumps(row) + "\n")
            per_deck[deck] = {"fold": k, "out_of_box": a.figures(), "enrolled": b.figures()}
            out_of_box.append(a)
            with_deck.append(b)
            print(f"{deck}: {a.figures()} / enrolled {b.figures()}", file=sys.stderr,
                  flush=True)
    if dump is not None:
        dump.close()
    times = [t for s in out_of_box for t in s.times_ms]
    line = {"bench": "camera_decks", "scenes_per_deck": args.scenes,
            "folds": args.folds, "decks": per_deck,
            "out_of_box": totals(out_of_box), "enrolled": totals(with_deck),
            "read_ms_median": round(float(np.median(times)), 2) if times else None,
            "seconds": round(time.monotonic() - t0, 1),
            "baseline": TARGETS}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
