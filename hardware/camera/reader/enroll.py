"""Enrollment of a particular deck for the camera: its 52 cards shown once each, from photos
named by card (``QH.png``, ``10S.jpg``) or live from a camera as the screen asks for them card
by card, kept in a deck file (npz) that ``--deck`` and ``[camera] deck`` give to the recogniser
(:mod:`hardware.camera.reader.templates`).

Each card is found as the recogniser finds it (the locator), read by the classifier from its
outline and from :data:`COPIES` outlines moved a little (the locator's outline at the table is
a few pixels off now and then), and kept as descriptors and as the glyphs it prints. At the end
the deck checks itself (:func:`self_check`): each card's photo is read again, turned round and
askew, by the recogniser with the new deck; the cards it does not read are named.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from hardware.camera.reader.classify import GLYPHS, NO_GLYPH, Classifier, Look
from hardware.camera.reader.locate import DRAWN_OUT, Locator
from hardware.camera.reader.recognise import (
    Recogniser,
    as_bgr,
    checked,
    colourless,
    in_its_corners,
    shows_index,
)
from hardware.camera.reader.sources import Frame, read_image
from hardware.camera.reader.templates import (
    PICTURE_SIZE,
    EnrolledDeck,
    centred,
    deck_meaning,
    descriptor,
    picture,
    turned,
)
from hardware.camera.reader.warp import Array, views, warp
from referee.cards import Card, full_deck, parse_card
from referee.errors import CardError, RefereeError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")
#: Outlines read for each card: the one found, and others with each corner moved up to this
#: share of the card's length.
COPIES, MOVE = 8, 0.015
#: Enrollment takes the outline of its look at a photo drawn out (:meth:`Enroller.quad`) only
#: where it is at least this much larger than the first look's: where the first outline took a
#: part of a card close to the camera (a court's frame, a pip), not where the two are of one
#: card and the classifier only doubted an index it was never taught.
LARGER = 1.25
#: How :func:`self_check` looks at each card's photo again: turned round and this many
#: degrees askew, the card this share of its size. On fold 1's 7 decks (the shipped networks
#: never saw them) it left 1 card of 364 unclear, a card read unclear in their rendered scenes
#: too; the feature margins it replaced flagged 9 to 31 pairs a deck, whose cards read no worse
#: than the rest (docs/camera.md, "Enrolling a deck").
SHAKE_TURN, SHAKE_SCALE = 12.0, 0.7
#: A card lying still is the card taken before where its corners' features are this alike
#: (cosine) *and* its whole face this alike (correlation of :func:`picture`, either way round):
#: two cards of one deck in a row were up to 0.978 alike by features alone (fold 1's decks,
#: two photos each), which stalled the taking; by face at most 0.93, the same card 0.99.
SAME_FEATURES, SAME_FACE = 0.97, 0.95


#: Where :meth:`Enroller.index_at` sees a card's index (one classifier pass for all three).
CORNERS, ELSEWHERE, NOWHERE = "corners", "elsewhere", ""

#: Why a photo or camera without colour is refused: the table names no card in its frames.
NO_COLOUR = ("no colour (black and white, or too dark): red and black suits cannot be told "
             "apart")


class EnrollError(RefereeError, ValueError):
    """A folder or a camera that does not give the 52 cards."""


class CameraStopped(EnrollError):
    """The camera gave no more frames before :attr:`card` was taken."""

    def __init__(self, card: Card) -> None:
        super().__init__(f"the camera stopped before {card} was taken")
        self.card = card


@dataclass(frozen=True)
class Seen:
    """One card as enrollment keeps it: its descriptors and the glyphs it was read with."""

    descriptors: Array
    glyphs: Array
    #: Its :func:`~hardware.camera.reader.templates.picture` upright and turned (2 x P), or
    #: None.
    pictures: Array | None = None
    #: Whether a view of its top-right or bottom-left corner showed an index.
    other_corners: bool = False
    #: The photo it was seen in (a frame, or the photo's file), for :func:`self_check`.
    photo: Array | Path | None = None


def area(quad: Array) -> float:
    """The area of an outline, in square pixels."""
    return abs(float(cv2.contourArea(quad.reshape(-1, 1, 2).astype(np.float32))))


def card_of(path: Path) -> Card | None:
    """The card a photo is named after (``QH.png`` → QH), or None."""
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        return None
    try:
        return parse_card(path.stem)
    except (CardError, ValueError):
        return None


class Enroller:
    """Sees cards one at a time, as the recogniser would."""

    def __init__(self, locator: Locator | None = None,
                 classifier: Classifier | None = None) -> None:
        self.locator = locator or Locator()
        self.classifier = classifier or Classifier()

    def quad(self, image: Array) -> Array | None:
        """The outline of the card in a photo (the locator's likeliest), or None. Where none
        is found or the classifier sees no index in its corners (none at all, or only in the
        top-right and bottom-left ones: an outline taken the wrong way round, or a piece of
        the card), the photo is looked at again drawn out
        (:data:`~hardware.camera.reader.locate.DRAWN_OUT`), as the recogniser does: a card
        close to the camera, filling most of the photo. That look's outline is taken only
        where it is :data:`LARGER` than the first one and shows an index: in its corners
        where the first showed one elsewhere."""
        image = as_bgr(checked(image))
        spots = self.locator.look(image, 1).spots
        first = spots[0].quad if spots else None
        where = self.index_at(image, first) if first is not None else NOWHERE
        if where == CORNERS:
            return first
        wanted = (CORNERS,) if where == ELSEWHERE else (CORNERS, ELSEWHERE)
        for spot in self.locator.look(image, 1, DRAWN_OUT).spots:
            if (first is None or area(spot.quad) >= LARGER * area(first)) \
                    and self.index_at(image, spot.quad) in wanted:
                return spot.quad
        return first

    def index_at(self, image: Array, quad: Array) -> str:
        """Where the classifier surely sees a rank glyph in the card inside ``quad``: in its
        top-left or bottom-right corner (:data:`CORNERS`,
        :func:`~hardware.camera.reader.recognise.in_its_corners`), only in the other two
        (:data:`ELSEWHERE`), or nowhere (:data:`NOWHERE`: the recogniser's "no index")."""
        look = self.classifier.look(views(warp(image, quad)))
        return CORNERS if in_its_corners(look) else ELSEWHERE if shows_index(look) else NOWHERE

    def see(self, image: Array, quad: Array | None = None) -> Seen | None:
        """A photo of one card as enrollment keeps it (None: no card found in it)."""
        image = as_bgr(checked(image))
        quad = self.quad(image) if quad is None else quad
        if quad is None:
            return None
        length = float(np.linalg.norm(quad[0] - quad[3]))
        rng = random.Random(0)
        card = warp(image, quad)
        looks: list[Look] = [self.classifier.look(views(card))]
        for _ in range(COPIES - 1):
            move = np.array(
                [[rng.uniform(-MOVE, MOVE) * length for _ in range(2)] for _ in range(4)],
                np.float32)
            looks.append(self.classifier.look(views(warp(image, quad + move))))
        index = 1 - looks[0].glyphs[:, NO_GLYPH]
        glyphs = (looks[0].glyphs * index[:, None]).sum(axis=0) / max(1.0, float(index.sum()))
        return Seen(np.stack([descriptor(look) for look in looks]), glyphs,
                    np.stack([picture(card), picture(card[::-1, ::-1])]),
                    shows_index(looks[0], (1, 3)))


def build(seen: dict[Card, Seen]) -> EnrolledDeck:
    """The deck file's content from the 52 cards seen."""
    cards: list[Card] = []
    rows: list[Array] = []
    for card in full_deck():
        for d in seen[card].descriptors:
            cards.append(card)
            rows.append(d)
    meaning = deck_meaning({c: s.glyphs for c, s in seen.items()})
    pictures = [p for p in (seen[card].pictures for card in full_deck()) if p is not None]
    # most of its cards showed an index in the other corners: the deck prints one there
    other = sum(s.other_corners for s in seen.values()) >= len(seen) / 2
    return EnrolledDeck(tuple(cards), np.stack(rows), meaning,
                        np.stack(pictures) if len(pictures) == 52 else None,
                        other_corners=other)


def shaken(image: Array) -> Array:
    """A photo as the self-check looks at it again (:func:`self_check`): turned round and
    :data:`SHAKE_TURN` degrees askew, the card shrunk to :data:`SHAKE_SCALE`, softened and
    darker, as the same card may lie on the pile."""
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), 180 + SHAKE_TURN, SHAKE_SCALE)
    out = cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REPLICATE)
    out = cv2.GaussianBlur(out, (0, 0), 1.0)
    return cv2.convertScaleAbs(out, alpha=0.8, beta=10)


def self_check(deck: EnrolledDeck, seen: dict[Card, Seen],
               recogniser: Recogniser | None = None) -> list[tuple[Card, Card | None, str]]:
    """The cards ``deck`` does not read from their own photo looked at again
    (:func:`shaken`), by the recogniser as the table reads: each with the card it was read as
    (None: unclear) and why it was unclear (empty for a wrong read), wrong reads first. Cards
    seen without a photo are not checked."""
    rec = recogniser or Recogniser(deck)
    out: list[tuple[Card, Card | None, str]] = []
    for card, got in seen.items():
        if got.photo is None:
            continue
        image = read_image(got.photo) if isinstance(got.photo, Path) else got.photo
        read = rec.read(shaken(as_bgr(image)))
        if read.card != card:
            out.append((card, read.card, "" if read.card is not None else read.reason or "unclear"))
    return sorted(out, key=lambda t: t[1] is None)


def enroll_images(folder: str | Path, enroller: Enroller | None = None
                  ) -> tuple[EnrolledDeck, list[str]]:
    """The deck from a folder of photos named by card; also what could not be used."""
    seen, problems = see_images(folder, enroller)
    return build(seen), problems


def see_images(folder: str | Path, enroller: Enroller | None = None
               ) -> tuple[dict[Card, Seen], list[str]]:
    """The 52 cards seen in a folder of photos named by card (:func:`build` makes the deck);
    also what could not be used. Raises :class:`EnrollError` where a card is missing."""
    root = Path(folder)
    if not root.is_dir():
        raise EnrollError(f"{root}: " + ("not a folder" if root.exists() else "no such folder"))
    enroller = enroller or Enroller()
    seen: dict[Card, Seen] = {}
    problems: list[str] = []
    photos: dict[str, list[Path]] = {}  # each photo's pixels, by digest: one photo twice
    named = [(path, card_of(path)) for path in sorted(root.iterdir())]
    by_card: dict[Card, list[Path]] = {}
    for path, card in named:
        if card is not None:
            by_card.setdefault(card, []).append(path)
    _refuse_several(root, by_card.values(), "card",  # one of them would be used without a word
                    lambda found: f"are {len(found)} photos of {card_of(found[0])}", "keep one")
    for path, card in named:
        if card is None:
            if path.suffix.lower() in IMAGE_SUFFIXES:  # a photo misnamed: said, not skipped
                problems.append(f"{path.name}: not named by a card (QH.png, 10S.jpg, AD.jpeg)")
            continue
        try:
            image = read_image(path)
        except OSError as exc:
            problems.append(str(exc))
            continue
        if colourless(image):
            problems.append(f"{path.name}: {NO_COLOUR}")
            continue
        digest = hashlib.sha256(repr(image.shape).encode() + image.tobytes()).hexdigest()
        photos.setdefault(digest, []).append(path)
        got = enroller.see(image)
        if got is None:
            problems.append(f"{path.name}: no card found in the photo")
            continue
        seen[card] = replace(got, photo=path)
    missing = [c for c in full_deck() if c not in seen]
    if missing:
        raise EnrollError(f"{root}: {len(missing)} of the 52 cards are missing or unusable "
                          f"({' '.join(map(str, missing[:13]))}{' …' if len(missing) > 13 else ''})"
                          + (f"; not used: {problems[0]}" if problems else "")
                          + (f" (and {len(problems) - 1} more photos not usable)"
                             if len(problems) > 1 else ""))
    _refuse_several(root, photos.values(), "set",  # one card's face under several names
                    lambda found: "are the same photo", "each card needs a photo of its own")
    return seen, problems


def _refuse_several(root: Path, groups: Iterable[list[Path]], kind: str,
                    what: Callable[[list[Path]], str], advice: str) -> None:
    """Refuse the folder where a group holds more than one photo: the first group's photos,
    ``what`` they are, how many more such groups (of ``kind``) there are, and ``advice``."""
    several = [found for found in groups if len(found) > 1]
    if several:
        more = len(several) - 1
        raise EnrollError(f"{root}: {', '.join(p.name for p in several[0])} {what(several[0])}"
                          + (f" (and {more} more such {kind}{'s' * (more > 1)})" if more else "")
                          + f": {advice}")


#: What :func:`take_live` makes of each frame (its ``watch``): no card found, the card taken
#: before still there, a card that moved since the frame before, a card lying still.
NO_CARD, CARD_BEFORE, MOVING, STILL = "no card", "the card before", "moving", "still"


def take_live(frames: Iterator[Frame], show: Callable[[Card, str], None],
              cards: Sequence[Card], *, steady: int = 6,
              enroller: Enroller | None = None,
              watch: Callable[[str, Array | None], None] | None = None) -> dict[Card, Seen]:
    """Cards from a live camera: each in turn is asked for (``show(card, "lay")``) and taken
    (``show(card, "taken")``) once a card has lain still for ``steady`` frames and is not the
    card taken before (the locator's outline moved less than 2 % of the card's length). A card
    lying still in frames without colour is not taken: ``show(card, "no colour")``, once a
    card (a black-and-white camera, or one too dark), and the camera is watched on. A frame
    no camera gives raises :class:`~hardware.camera.reader.recognise.FrameError`.
    ``watch(what, outline)``: what each frame showed (:data:`NO_CARD`, :data:`CARD_BEFORE`,
    :data:`MOVING`, :data:`STILL`) and the card's outline (None: none found), for a page
    that shows what the camera sees."""
    enroller = enroller or Enroller()
    seen: dict[Card, Seen] = {}
    before: tuple[Array, Array] | None = None  # the last card taken: descriptor, picture

    def saw(what: str, quad: Array | None) -> None:
        if watch is not None:
            watch(what, quad)

    for card in cards:
        show(card, "lay")
        told = False
        run: list[tuple[Array, Array]] = []
        for frame in frames:
            image = as_bgr(checked(frame.image))  # grey or BGRA cameras too
            quad = enroller.quad(image)
            if quad is None:
                run = []
                saw(NO_CARD, None)
                continue
            warped = warp(image, quad)
            d, face = descriptor(enroller.classifier.look(views(warped))), picture(warped)
            length = float(np.linalg.norm(quad[0] - quad[3]))
            if before is not None and same_card(d, face, *before):
                run = []  # still the card before
                saw(CARD_BEFORE, quad)
                continue
            if run and float(np.abs(quad - run[-1][0]).max()) > 0.02 * length:
                run = []  # it moved: start again
            run.append((quad, d))
            saw(STILL if len(run) > 1 else MOVING, quad)
            if len(run) >= steady:
                if colourless(image):
                    if not told:
                        show(card, "no colour")
                        told = True
                    run = []
                    continue
                got = enroller.see(image, quad)
                if got is None:
                    run = []
                    continue
                seen[card], before = replace(got, photo=image), (d, face)
                show(card, "taken")
                break
        else:
            raise CameraStopped(card)
    return seen


def same_card(d: Array, face: Array, d_before: Array, face_before: Array) -> bool:
    """Whether a card (its :func:`descriptor` and :func:`picture`) is the one taken before,
    either way round (:data:`SAME_FEATURES`, :data:`SAME_FACE`)."""
    if max(float(d @ d_before), float(d @ turned(d_before))) <= SAME_FEATURES:
        return False
    w, h = PICTURE_SIZE
    a, b = face.reshape(1, h, w, 3), face_before.reshape(1, h, w, 3)
    both = centred(np.concatenate([a, b, b[:, ::-1, ::-1]]))
    return float((both[1:] @ both[0]).max()) > SAME_FACE


def court_letters(deck: EnrolledDeck) -> dict[str, list[str]]:
    """The letters an enrolled deck prints for its courts and ace, by the English letter of
    the rank (``{"J": ["B"], "Q": ["D"], …}``), jack first."""
    return {"A" if r == 14 else "JQK"[r - 11]: g
            for r, g in sorted(glyph_names(deck).items()) if r > 10}


def glyph_names(deck: EnrolledDeck) -> dict[int, list[str]]:
    """For each rank, the letters an enrolled deck prints for it (the numbers left out)."""
    out: dict[int, list[str]] = {}
    from hardware.camera.reader.classify import RANKS

    for g, name in enumerate(GLYPHS):
        if name.isdigit() and name != "1":
            continue
        for r in np.nonzero(deck.meaning[g])[0].tolist():
            out.setdefault(RANKS[r], []).append(name)
    return out
