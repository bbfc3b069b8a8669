"""Real photographs read by the camera's recogniser: 377 phone photos of one ordinary deck's
cards, one card each, on wood, stone, white and dark tables (``bench/photos/README.md``: where
they come from, their licence, what was done to them). No network was trained on them;
ten choices were made with their help (the README says which).

Each photo is published in three copies, each changed a little by the dataset's maker (light,
blur, specks, a slight shear). 119 photos are black and white: copies without colour are
counted apart (:func:`grey`). The photos were published squeezed into 640x640 from upright
3:4 phone pictures: they are read both as published and drawn back to 480x640, as the phone
took them (fewer pixels across).

Out of the box: every copy, with the shipped networks. Enrolled: the deck enrolled as
``referee camera enroll --images`` does it, from the first photo of each card (its first colour
copy, by name, in which the locator finds a card; ``enrolment_passed_over`` lists the copies in
which it found none), and every copy of the other photos read with it.

``python3 bench/camera_photos.py --get CLONE`` first: copies the photos out of a clone of
https://github.com/Ammememe/CardCounterML (``git clone`` it; about 340 MB) at the pinned
commit into ``.cache/camera/photos`` (or ``$REFEREE_CAMERA_CACHE/photos``). Then
``python3 bench/camera_photos.py`` prints one JSON line: right, wrong and unclear, out of the
box and enrolled, each way of reading, with the wrong reads and the issue's targets as the
baseline. Exits 2 without the photos.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from hardware.camera.reader.enroll import Enroller, enroll_images  # noqa: E402
from hardware.camera.reader.recognise import Recogniser  # noqa: E402
from hardware.camera.synthetic.artwork import cache_dir  # noqa: E402
from hardware.camera.synthetic.evaluate import TARGETS, Score, timed_read  # noqa: E402
from referee.cards import Card  # noqa: E402

MANIFEST = Path(__file__).with_name("photos") / "cadyze.csv"
SOURCE = "https://github.com/Ammememe/CardCounterML"
COMMIT = "a0e040bd4db845437aad261b951b1912cb0b1439"
#: The ways a photo is read: as published, and drawn back to the phone's 3:4.
SHAPES = {"published": None, "taken": (480, 640)}


@dataclass(frozen=True)
class Photo:
    """One copy of a photo: its file here, its card, the source's path."""

    file: str
    card: Card
    source: str

    @property
    def stem(self) -> str:
        """The photo, whichever copy."""
        return self.file.rsplit("-", 1)[0]


@dataclass(frozen=True)
class Seen:
    """What :class:`Score` asks of a scene: its top card and a number to name it by."""

    top: Card
    seed: int


def photos() -> list[Photo]:
    with open(MANIFEST, newline="") as fh:
        return [Photo(r["file"], Card.parse(r["card"]), r["source_path"])
                for r in csv.DictReader(fh)]


def folder() -> Path:
    return cache_dir() / "photos"


def get(clone: Path) -> int:
    """Copy the photos out of a clone (or a bare copy) of the source at :data:`COMMIT`."""
    git_dir = clone / ".git" if (clone / ".git").exists() else clone
    out = folder()
    out.mkdir(parents=True, exist_ok=True)
    for p in photos():
        got = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{COMMIT}:{p.source}"],
                             capture_output=True, check=False)
        if got.returncode != 0:
            print(f"{clone}: {p.source} not found at {COMMIT[:12]} "
                  f"({got.stderr.decode(errors='replace').strip()})", file=sys.stderr)
            return 2
        (out / p.file).write_bytes(got.stdout)
    print(f"{len(photos())} photos in {out}", file=sys.stderr)
    return 0


def grey(image: Any) -> bool:
    """A copy without colour (a black-and-white photo, or a copy the dataset's maker turned
    grey): its colours differ by less than 2 levels on average (359 of the 1 131 copies: the
    119 black-and-white photos' and 2 more; a red card at 1.0 was grey to the eye, the colour
    copies differ by 2.6 or more, most by 6)."""
    b, g, r = (image[..., i].astype(np.int16) for i in range(3))
    return bool(float(np.mean(np.abs(b - g) + np.abs(g - r))) < 2.0)


def shaped(image: Any, size: tuple[int, int] | None) -> Any:
    return image if size is None else cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def enrolment_photos(every: list[Photo], colourless: dict[str, bool],
                     size: tuple[int, int] | None, image: Callable[[Photo], Any],
                     enroller: Enroller) -> tuple[dict[Card, Photo], list[str]]:
    """The photo each card is enrolled from: its first colour copy (by name) in which the
    locator finds a card, read at ``size``; and the copies passed over for finding none (a
    person enrolling would take that card's photo again)."""
    first: dict[Card, Photo] = {}
    passed: list[str] = []
    for p in sorted(every, key=lambda p: p.file):
        if p.card in first or colourless[p.file]:
            continue
        if enroller.quad(shaped(image(p), size)) is None:
            passed.append(p.file)
        else:
            first[p.card] = p
    return first, passed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--get", type=Path, metavar="CLONE",
                    help=f"copy the photos out of a clone of {SOURCE}")
    args = ap.parse_args()
    if args.get is not None:
        return get(args.get)
    every = photos()
    missing = [p.file for p in every if not (folder() / p.file).exists()]
    if missing:
        print(f"{len(missing)} of the {len(every)} photos are not in {folder()}: "
              f"git clone {SOURCE} /tmp/ccml && python3 bench/camera_photos.py --get /tmp/ccml",
              file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    t0 = time.monotonic()
    plain = Recogniser()
    def image(p: Photo) -> Any:
        return cv2.imread(str(folder() / p.file))  # read when used: all of them are 1.4 GB

    colourless = {p.file: grey(image(p)) for p in every}
    enroller = Enroller(plain.locator, plain.classifier)
    line: dict[str, object] = {"bench": "camera_photos", "source": f"{SOURCE}@{COMMIT[:12]}",
                               "photos": len({p.stem for p in every}), "copies": len(every)}
    for shape, size in SHAPES.items():
        first, passed = enrolment_photos(every, colourless, size, image, enroller)
        enrolment = {p.stem for p in first.values()}
        with tempfile.TemporaryDirectory() as tmp:
            for card, p in first.items():
                cv2.imwrite(str(Path(tmp) / f"{card}.png"), shaped(image(p), size))
            deck, problems = enroll_images(tmp, enroller)
        mine = Recogniser(deck)
        scores: dict[str, Score] = defaultdict(lambda: Score("photos"))
        for k, p in enumerate(every):
            frame = shaped(image(p), size)
            seen, kind = Seen(p.card, k), "grey" if colourless[p.file] else "colour"
            read, ms = timed_read(plain, frame)
            scores[f"out_of_box_{kind}"].add(seen, read, ms)  # type: ignore[arg-type]
            if p.stem in enrolment:
                continue
            scores[f"out_of_box_{kind}_not_enrolment_photos"].add(
                seen, read, ms)  # type: ignore[arg-type]
            read, ms = timed_read(mine, frame)
            scores[f"enrolled_{kind}"].add(seen, read, ms)  # type: ignore[arg-type]
        out: dict[str, object] = {name: s.figures() for name, s in sorted(scores.items())}
        out["enrolment_problems"] = problems
        out["enrolment_passed_over"] = passed
        out["wrong"] = {name: [f"{every[k].file}: {t}->{r}" for k, t, r in s.wrong_seeds]
                        for name, s in sorted(scores.items()) if "not_enrolment" not in name}
        line[shape] = out
        print(f"{shape}: " + "; ".join(f"{n} {s.figures()}" for n, s in sorted(scores.items())),
              file=sys.stderr, flush=True)
    line["seconds"] = round(time.monotonic() - t0, 1)
    line["baseline"] = TARGETS
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
