"""``referee camera``: the camera over the pile at the command line: read the top card of
photos, enroll a deck, watch a video or a camera for lays ([docs/camera.md](docs/camera.md)).
Needs the ``camera`` extra (``pip install 'card-referee[camera]'``): each subcommand says so
in one line when it is missing."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from cardtable.commands.argtypes import lay_frames, path_name
from cardtable.errors import CommandError
from cardtable.extras import require
from referee.errors import visible

#: How long live enrolment waits, with no card seen or the card before still there, before it
#: says so (once a card).
STUCK_S = 4.0

_LETTERS_HELP = ("the index sets the deck may print (english A/K/Q/J, german B/D/K, french "
                 "R/D/V, russian В/Д/К/Т, swedish Kn/D/K, italian F/D/R, dutch H/V/B), "
                 "comma-separated (default: all of them but dutch)")


def _source(value: str) -> str:
    """A camera named on the command line: not blank (OpenCV would say "cannot open " of
    nothing)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("give a camera: /dev/videoN or its number, picamera, "
                                         "a video file or a stream URL")
    return value


def _letters(value: str | None) -> tuple[str, ...]:
    from hardware.camera.config import DEFAULT_INDEX_LETTERS, INDEX_SETS, index_sets

    if value is None:
        return DEFAULT_INDEX_LETTERS
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:  # no letters at all: no ace or court would ever be named
        raise CommandError("--index-letters: name at least one index set (known: "
                           f"{', '.join(INDEX_SETS)})")
    try:
        return index_sets(names)
    except ValueError as exc:
        raise CommandError(f"--index-letters: {exc}") from None


def _recogniser(deck: str | None, letters: str | None = None) -> Any:
    from hardware.camera.reader import recognise
    from hardware.camera.reader.classify import RecogniserError
    from hardware.camera.reader.locate import LocatorError
    from hardware.camera.reader.templates import EnrolledDeck

    enrolled = None
    if deck is not None:
        try:
            enrolled = EnrolledDeck.load(deck)
        except OSError as exc:
            raise CommandError(f"--deck {deck}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise CommandError(f"--deck {deck}: {exc}") from None
        if enrolled.outdated:
            print(f"referee camera: note: {enrolled.outdated}", file=sys.stderr)
    try:
        return recognise.Recogniser(enrolled, letters=_letters(letters))
    except (RecogniserError, LocatorError) as exc:
        raise CommandError(str(exc)) from None


def _cmd_read(args: argparse.Namespace) -> int:
    require("camera", "referee camera read")
    from hardware.camera.reader.draw import annotated
    from hardware.camera.reader.sources import SourceError, read_image

    show = Path(args.show) if args.show else None
    targets = _drawings(show, args.images)
    recogniser = _recogniser(args.deck, args.index_letters)
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
            print(f"{visible(path)}: {read_words(read)}")
        if path in targets:
            import cv2

            target = targets[path]
            try:
                written = cv2.imwrite(str(target), annotated(image, read))
            except cv2.error:
                written = False
            if not written:
                raise CommandError(f"--show: cannot write {target}")
    return status


def read_words(read: Any) -> str:
    """One read for a person: ``8H (0.99)``, ``unclear: deck unsure`` or ``no card``. An
    unclear read shows no figure: its confidence may be that of a card it did not name, and
    "unclear (1.00)" read as a contradiction (``--json`` keeps it)."""
    if read.card is not None:
        return f"{read.card} ({read.confidence:.2f})"
    if read.quad is None:
        return "no card"
    return f"unclear: {read.reason}" if read.reason not in ("", "unclear") else "unclear"


def _drawings(show: Path | None, images: list[str]) -> dict[str, Path]:
    """Where ``--show`` draws each image's read: ``show`` itself for one image, else
    ``<show>/<name>.png``, ``<name>-2.png``, … (never one drawing over another, nor over one of
    the images read). Checked before anything is read."""
    if show is None:
        return {}
    import cv2

    if not show.is_dir():
        if len(images) > 1:
            raise CommandError(f"--show {show}: give a folder to draw several images into")
        if not cv2.haveImageWriter(str(show)):
            raise CommandError(f"--show {show}: give a picture's name (.png or .jpg), or a "
                               "folder")
        if not show.parent.is_dir():
            raise CommandError(f"--show {show}: the folder {show.parent} does not exist")
    inputs = {Path(p).resolve() for p in images}
    taken: set[Path] = set()
    out = {}
    for path in images:
        stem, n = Path(path).stem, 1
        target = show if not show.is_dir() else show / f"{stem}.png"
        while show.is_dir() and (target.resolve() in inputs or target in taken):
            n += 1
            target = show / f"{stem}-{n}.png"
        if target.resolve() in inputs:
            raise CommandError(f"--show {show}: that is the image read; give another name")
        taken.add(target)
        out[path] = target
    return out


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _cmd_enroll(args: argparse.Namespace) -> int:
    require("camera", "referee camera enroll")
    from hardware.camera.reader.enroll import (
        CARD_BEFORE,
        NO_CARD,
        EnrollError,
        build,
        court_letters,
        see_images,
        self_check,
        take_live,
    )
    from hardware.camera.reader.recognise import FrameError
    from hardware.camera.reader.sources import SourceError, open_source
    from hardware.camera.reader.templates import check_deck_path
    from referee.cards import full_deck

    out = Path(args.out)
    try:  # before the cards are laid, not after
        check_deck_path(out)
    except OSError as exc:
        raise CommandError(f"--out {out}: {exc.strerror}") from None
    if out.exists() and not args.overwrite:
        raise CommandError(f"--out {out}: the file already exists; add --overwrite to replace it")
    try:
        if args.images is not None:
            seen, problems = see_images(args.images)
            for p in problems:
                _say(f"note: {p}")
        else:
            try:
                source = open_source(args.device)
            except SourceError as exc:
                raise CommandError(f"--device: {exc}") from None  # the error names it
            total = len(full_deck())
            done = 0
            STUCK = {NO_CARD: "the camera sees no card: lay it in view, flat and alone",  # noqa: N806
                     CARD_BEFORE: "the card before is still under the camera: take it away"}
            told: set[str] = set()
            seeing: dict[str, float] = {}  # what the frames show, since when

            def watch(what: str, quad: Any) -> None:
                """Say once a card what keeps it from being taken, once it has lasted."""
                now = time.monotonic()
                if what not in seeing:
                    seeing.clear()
                    seeing[what] = now
                elif what in STUCK and what not in told and now - seeing[what] >= STUCK_S:
                    told.add(what)
                    _say(f"        {STUCK[what]}")

            def show(card: Any, what: str) -> None:
                nonlocal done
                if what == "lay":
                    told.clear()
                    _say(f"[{done + 1:2}/{total}] lay {card.name()} ({card}) alone under the "
                         "camera, and hold still")
                elif what == "no colour":
                    _say("        the camera gives no colour (black and white, or too dark): "
                         "red and black suits cannot be told apart; set it to colour or light "
                         "the table (the card is taken once it can be)")
                else:
                    done += 1
                    _say(f"        {card}: taken; take it away")

            _say("Enrolling a deck: the camera takes each card as it is asked for, once it "
                 "lies still (Ctrl-C stops).")
            try:
                seen = take_live(source.frames(), show, full_deck(), watch=watch)
            except KeyboardInterrupt:
                raise CommandError("enrollment stopped: nothing written") from None
            finally:
                source.close()
    except (EnrollError, FrameError) as exc:
        raise CommandError(str(exc)) from None
    deck = build(seen)
    try:
        deck.save(out)
    except OSError as exc:
        raise CommandError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"{out}: 52 cards enrolled")
    named = ", ".join(f"{rank} as {'/'.join(g)}" for rank, g in court_letters(deck).items())
    if named:
        print(f"its index prints {named}")
    if deck.other_corners:
        print("its index stands in the top-right corner too (or only): read as the deck's own "
              "(a camera that mirrors its picture also looks so: turn mirroring off and "
              "enroll again if this deck prints its index top left)")
    try:
        unread = self_check(deck, seen)
    except (OSError, ValueError) as exc:  # a photo gone or changed since it was enrolled
        print(f"self-check: not done ({exc}); the deck is written")
        return 0
    if unread:
        found = ", ".join(f"{card} left unclear ({why})" if got is None else f"{card} read as {got}"
                          for card, got, why in unread)
        # a card read as another, or most of the deck unread: photos under the wrong names?
        names = any(got is not None for _, got, _ in unread) or len(unread) > 26
        read_again = ("read again from its photo turned round and askew, was" if len(unread) == 1
                      else "read again from their photos turned round and askew, were")
        print(f"self-check: {len(unread)} of its cards, {read_again} not read right: {found}; "
              "the table may leave such a card unclear (type it at the console): "
              + ("check that each photo shows the card it is named after, or " if names else "")
              + "enroll the deck again from clearer photos to read it")
    else:
        print("self-check: each card, read again from its photo turned round and askew, was "
              "read right")
    return 0


def _cmd_watch(args: argparse.Namespace) -> int:
    require("camera", "referee camera watch")
    from hardware.camera.reader.lays import LayTracker
    from hardware.camera.reader.recognise import FrameError
    from hardware.camera.reader.sources import SourceError, open_source

    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    recogniser = _recogniser(args.deck, args.index_letters)
    try:
        source = open_source(args.source)
    except SourceError as exc:  # it names the source: "X: no such file", "cannot open X"
        raise CommandError(str(exc)) from None
    tracker = LayTracker(args.frames)
    t0: int | None = None
    read = laid = 0
    try:
        for frame in source.frames():
            read += 1
            lay = tracker.feed(frame.t, recogniser.read(frame.image).card)
            if lay is None:
                continue
            laid += 1
            if args.json:
                print(json.dumps({"t": lay.t, "card": str(lay.card)}))
            else:
                t0 = lay.t if t0 is None else t0
                print(f"{(lay.t - t0) / 1e9:9.3f} s  {lay.card}")
    except KeyboardInterrupt:
        pass
    except FrameError as exc:  # a video or stream of frames no camera gives
        raise CommandError(f"{args.source}: {exc}") from None
    finally:
        source.close()
    if read == 0:  # OpenCV opens many a file it then gives nothing of
        raise CommandError(f"{args.source}: no frame could be read (not a video OpenCV can "
                           "read, or an empty one)")
    if laid == 0:  # said, so that silence is not taken for a reader that did not run
        print(f"referee camera watch: {args.source}: {read} frame{'s' * (read != 1)} read, "
              "no card laid", file=sys.stderr)
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
    r.add_argument("images", nargs="+", metavar="IMAGE", type=path_name,
                   help="photos (PNG, JPEG, …)")
    r.add_argument("--deck", type=path_name,
                   help="a deck file from referee camera enroll (higher accuracy)")
    r.add_argument("--index-letters", metavar="SETS", help=_LETTERS_HELP)
    r.add_argument("--json", action="store_true", help='one line per image: {"image": PATH, '
                   '"card": "QH" or null, "confidence": 0.0-1.0}, and "reason" when the card '
                   'is null (an image that cannot be read: a line on standard error instead)')
    r.add_argument("--show", metavar="PNG|DIR", type=path_name,
                   help="also draw what the camera saw: the "
                   "outline found and the card read, on the image (a folder for several: "
                   "NAME.png each, NAME-2.png where two images share a name; never over an "
                   "image read)")
    r.set_defaults(func=_cmd_read)
    e = csub.add_parser("enroll", help="learn a particular deck",
                        description="Learn a deck's 52 cards: from a folder of photos named by "
                        "card (QH.png, 10S.jpg), or live from a camera, one card after the other "
                        "(the terminal says which card to lay, and when it was taken). At the "
                        "end each card's photo is read again, turned round and askew, and the "
                        "cards not read right are named.")
    source = e.add_mutually_exclusive_group(required=True)  # the usage shows: one of the two
    source.add_argument("--images", metavar="DIR", type=path_name,
                        help="a folder of 52 photos named by card")
    source.add_argument("--device", metavar="DEV", type=_source,
                        help="a camera: /dev/video0, its number, or picamera (the Pi camera)")
    e.add_argument("--out", required=True, metavar="DECK", type=path_name,
                   help="the deck file to write")
    e.add_argument("--overwrite", action="store_true", help="replace an existing deck file")
    e.set_defaults(func=_cmd_enroll)
    w = csub.add_parser("watch", help="the lays seen in a video or from a camera",
                        description="Print each lay seen: a new top card read in a few "
                        "consecutive frames, with the capture time of the first frame that "
                        "showed it (a camera: CLOCK_MONOTONIC ns; a file: its position).")
    w.add_argument("source", metavar="SOURCE", type=_source,
                   help="a video file or URL, /dev/videoN, its number, or picamera")
    w.add_argument("--deck", type=path_name, help="a deck file from referee camera enroll")
    w.add_argument("--index-letters", metavar="SETS", help=_LETTERS_HELP)
    w.add_argument("--json", action="store_true",
                   help='one line per lay: {"t": ns, "card": "QH"}')
    w.add_argument("--frames", type=lay_frames, default=3,
                   help="reads of the same new card that make a lay (default 3)")
    w.set_defaults(func=_cmd_watch)
