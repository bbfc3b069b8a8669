"""``referee camera``: the camera over the pile at the command line: read the top card of
photos, enroll a deck, watch a video or a camera for lays ([docs/camera.md](docs/camera.md)).
Needs the ``camera`` extra (``pip install 'card-referee[camera]'``): each subcommand says so
in one line when it is missing."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from cardtable.errors import CommandError
from cardtable.extras import require


def _recogniser(deck: str | None) -> Any:
    from hardware.camera.reader import recognise
    from hardware.camera.reader.classify import RecogniserError
    from hardware.camera.reader.templates import EnrolledDeck

    enrolled = None
    if deck is not None:
        try:
            enrolled = EnrolledDeck.load(deck)
        except (OSError, ValueError) as exc:
            raise CommandError(f"--deck {deck}: {exc}") from None
    try:
        return recognise.Recogniser(enrolled)
    except RecogniserError as exc:
        raise CommandError(str(exc)) from None


def _cmd_read(args: argparse.Namespace) -> int:
    require("camera", "referee camera read")
    from hardware.camera.reader.sources import SourceError, read_image

    recogniser = _recogniser(args.deck)
    status = 0
    for path in args.images:
        try:
            image = read_image(path)
        except SourceError as exc:
            print(f"referee camera read: {exc}", file=sys.stderr)
            status = 2
            continue
        read = recogniser.read(image)
        if args.json:
            print(json.dumps(read.to_json(path)))
        else:
            what = str(read.card) if read.card is not None else (
                "no card" if read.quad is None else "unclear")
            print(f"{path}: {what} ({read.confidence:.2f})")
    return status


def _cmd_enroll(args: argparse.Namespace) -> int:
    require("camera", "referee camera enroll")
    from hardware.camera.reader.enroll import EnrollError, enroll_images, enroll_live
    from hardware.camera.reader.sources import SourceError, open_source

    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise CommandError(f"--out {out}: the file already exists; add --overwrite to replace it")
    if (args.images is None) == (args.device is None):
        raise CommandError("give --images DIR or --device DEV (one of them)")
    try:
        if args.images is not None:
            deck, problems = enroll_images(args.images)
            for p in problems:
                print(f"note: {p}", file=sys.stderr)
        else:
            try:
                source = open_source(args.device)
            except SourceError as exc:
                raise CommandError(f"--device {args.device}: {exc}") from None

            def show(card: Any, what: str) -> None:
                print(f"\r{str(card):>3}: {what}   ", end="" if what != "taken" else "\n",
                      file=sys.stderr, flush=True)

            try:
                deck = enroll_live(source.frames(), show)
            finally:
                source.close()
    except EnrollError as exc:
        raise CommandError(str(exc)) from None
    try:
        deck.save(out)
    except OSError as exc:
        raise CommandError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"{out}: 52 cards enrolled")
    return 0


def _cmd_watch(args: argparse.Namespace) -> int:
    require("camera", "referee camera watch")
    from hardware.camera.reader.lays import LayTracker
    from hardware.camera.reader.sources import SourceError, open_source

    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    recogniser = _recogniser(args.deck)
    try:
        source = open_source(args.source)
    except SourceError as exc:
        raise CommandError(f"{args.source}: {exc}") from None
    tracker = LayTracker(args.frames)
    t0: int | None = None
    try:
        for frame in source.frames():
            lay = tracker.feed(frame.t, recogniser.read(frame.image).card)
            if lay is None:
                continue
            if args.json:
                print(json.dumps({"t": lay.t, "card": str(lay.card)}))
            else:
                t0 = lay.t if t0 is None else t0
                print(f"{(lay.t - t0) / 1e9:9.3f} s  {lay.card}")
    except KeyboardInterrupt:
        pass
    finally:
        source.close()
    return 0


def register(sub: Any) -> None:
    """Add ``referee camera`` and its subcommands."""
    p = sub.add_parser("camera", help="the camera over the pile: read, enroll, watch",
                       description="The camera over the pile (docs/camera.md): read the top card "
                       "of photos, enroll a deck for higher accuracy, watch a video or a camera "
                       "for lays. Needs the camera extra.")
    csub = p.add_subparsers(dest="camera_command", metavar="SUBCOMMAND")
    csub.required = True
    r = csub.add_parser("read", help="the top card of each image",
                        description="Read the top card of the pile in each image. A read that "
                        "is not sure is unclear (card null), never a guess.")
    r.add_argument("images", nargs="+", metavar="IMAGE", help="photos (PNG, JPEG, …)")
    r.add_argument("--deck", help="a deck file from referee camera enroll (higher accuracy)")
    r.add_argument("--json", action="store_true", help='one line per image: {"image": PATH, '
                   '"card": "QH" or null, "confidence": 0.0-1.0}')
    r.set_defaults(func=_cmd_read)
    e = csub.add_parser("enroll", help="learn a particular deck",
                        description="Learn a deck's 52 cards: from a folder of photos named by "
                        "card (QH.png, 10S.jpg), or live from a camera, one card after the other "
                        "(the terminal says which card to lay, and when it was taken).")
    e.add_argument("--images", metavar="DIR", help="a folder of 52 photos named by card")
    e.add_argument("--device", metavar="DEV", help="a camera: /dev/video0, its number, or "
                   "picamera (the Pi camera)")
    e.add_argument("--out", required=True, metavar="DECK", help="the deck file to write")
    e.add_argument("--overwrite", action="store_true", help="replace an existing deck file")
    e.set_defaults(func=_cmd_enroll)
    w = csub.add_parser("watch", help="the lays seen in a video or from a camera",
                        description="Print each lay seen: a new top card read in a few "
                        "consecutive frames, with the capture time of the first frame that "
                        "showed it (a camera: CLOCK_MONOTONIC ns; a file: its position).")
    w.add_argument("source", metavar="SOURCE", help="a video file or URL, /dev/videoN, its "
                   "number, or picamera")
    w.add_argument("--deck", help="a deck file from referee camera enroll")
    w.add_argument("--json", action="store_true",
                   help='one line per lay: {"t": ns, "card": "QH"}')
    w.add_argument("--frames", type=int, default=3,
                   help="reads of the same new card that make a lay (default 3)")
    w.set_defaults(func=_cmd_watch)
