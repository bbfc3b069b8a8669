"""The recogniser: the top card of a pile in a camera frame, with a confidence.

1. Find the top card (:mod:`hardware.camera.reader.locate`): the locator network's map of
   where the top card lies, each blob fitted as a quad and its sides laid on the card's edges;
   where no card is named, the network looks again at the frame with its edges drawn out (a
   card close to the camera, filling most of the frame).
2. Warp it upright and take its four corner views (:mod:`hardware.camera.reader.warp`).
3. The classifier network reads each view (:mod:`hardware.camera.reader.classify`): the rank
   glyph it shows upright, if any, and the card's suit.
4. Decide. Out of the box, the glyphs mean what the table's index sets say (``[camera]
   index_letters``); the confidence is the chance of the rank times that of the suit, and a
   read below :data:`THRESHOLD` is *unclear* (``card`` None), never a guess. With an enrolled
   deck (:mod:`hardware.camera.reader.templates`), :func:`decide_enrolled`: the deck's nearest
   card when the classifier (reading the deck's own glyphs) names the same card; never the
   deck's features alone, however clear (on real photos they were wrong more often than right),
   but with the deck's clear whole-card picture of the same card; where the deck's features are
   unsure, its nearest whole-card picture, if clear and not denied by a sure classifier; what
   the features only just agree on with an unsure classifier is unclear where the card's
   picture is like no enrolled card (:data:`UNLIKE`). Out of the box, a number card or an ace
   whose pips the classifier surely sees as the other suit of its colour is left unclear
   (:data:`PIPS`): a club read as a spade in its small index; an unclear read is named by the
   pips counted on the card where the index holds that rank likely enough (:data:`COUNTED`; as
   a last resort, where no look named a card, :data:`COUNTED_LAST`). Where an enrolled deck
   leaves a read unclear, the out-of-the-box decision names the card unless the deck's own
   faces hold another nearest (:func:`or_out_of_box`). A read left "index misplaced" in a
   nearly square outline (:data:`SQUARE`) is read again with the outline turned a quarter
   (:meth:`Recogniser.read_quad`). Where no place named a card and the first saw no index (an
   outline round a court's picture or an ace's pip), outlines grown from it are read
   (:meth:`Recogniser.read_grown`). A card named less surely than the threshold (an enrolled
   agreement, a pips' count) is unclear where another outline of the same card names another
   card at the threshold or more (:meth:`Recogniser.against`).

The thresholds were calibrated on decks the networks had not seen (the leave-decks-out folds of
``bench/camera_decks.py``; docs/camera.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hardware.camera.config import DEFAULT_INDEX_LETTERS
from hardware.camera.reader.classify import (
    CLASSIFIER_PATH,
    NO_GLYPH,
    RANKS,
    SUITS,
    Classifier,
    Look,
    glyph_ranks,
    rank_chances,
    suit_chances,
)
from hardware.camera.reader.locate import DRAWN_OUT, LOCATOR_PATH, Locator, grown, overlap
from hardware.camera.reader.templates import EnrolledDeck, Match, picture
from hardware.camera.reader.warp import pip_count, pip_views, squareness, views, warp
from referee.cards import Card
from referee.errors import RefereeError

Array = npt.NDArray[Any]

#: Out of the box, a read is named at this confidence or more (rank times suit).
THRESHOLD = 0.95
#: Views must see an index this surely (the surest view's chance of a glyph at all).
INDEX = 0.5
#: With an enrolled deck (:func:`decide_enrolled`): the least margin of the nearest card over
#: any other, and the least cosine, for the deck's features to be clear (then no picture
#: decides against them, and without the classifier no card is named); how sure the classifier
#: must be of a card to deny another; and, where the deck and the classifier name the same
#: card, the least margin and the least chance of the classifier's read.
MARGIN, NEAR, DENY = 0.05, 0.6, 0.95
AGREE, AGREE_CHANCE = 0.01, 0.5
#: Where the deck's features leave a card unclear: the least margin and likeness of the
#: deck's nearest whole-card picture (:func:`~hardware.camera.reader.templates.picture`) for
#: it to name the card, unless the classifier surely names another.
PICTURE_MARGIN, PICTURE_NEAR = 0.03, 0.9
#: Where the deck's features only just agree with the classifier and the deck's clear picture
#: is of another card, that card is named where the picture is at least this alike (else the
#: read is unclear): on fold 1's rendered scenes, the vetoed reads below it included a wrong
#: picture (0.905), those above it none (docs/camera.md).
OVERRULE = 0.95
#: Where the deck's features only just agree with a classifier unsure out of the box (under
#: the threshold), the deck's nearest whole-card picture must be at least this alike: a warp
#: unlike every card the deck holds is an outline gone astray or a card half hidden. On fold
#: 1's 840 calibration scenes (seeds 40 000-40 119) it left the two such wrong reads unclear
#: (0.45, 0.53: a club named as a heart, as a diamond) and no such right one (the nearest
#: 0.54); read end to end, one right read, named by another outline before, was lost
#: (docs/camera.md).
UNLIKE = 0.535
#: Where the enrolled deck is unclear and the out-of-the-box decision names a card
#: (:func:`or_out_of_box`): how alike the deck's nearest picture must be to deny it.
DENY_NEAR = 0.7
#: Out of the box, a number card or ace is left unclear where its pips (the four
#: :func:`~hardware.camera.reader.warp.pip_views` together) are at least this sure of the
#: other suit of its colour.
PIPS = 0.99
#: Out of the box, an unclear read is named by the pips counted on the card
#: (:func:`~hardware.camera.reader.warp.pip_count`): the number card (an ace: one pip) of
#: that rank and the likeliest suit, where its chance (the index's chance of the counted rank
#: times the suit's) is at least this, its suit alone as sure as the threshold and the
#: likeliest suit of the pips' views (:func:`confirm_by_count`).
COUNTED = 0.5
#: The same with a lower least chance, asked last, where no look named a card: on rendered
#: scenes of fold 1's decks it named 27 more right and none wrong; asked at every outline
#: from the first, it forestalled a later look's right read on a real photo and named it
#: wrong (5 pips counted on a 9; docs/camera.md).
COUNTED_LAST = 0.1
#: The reasons of an unclear first read that the last resort does not ask (it needs an
#: index read, in its corners, an outline of the top card, no picture or pips against it).
UNCOUNTED = ("not the top card", "no index", "index misplaced", "picture disagrees",
             "picture unlike",
             "pips disagree")
#: The other suit of each suit's colour: the suit an index's small sign is taken for.
TWIN = {"C": "S", "S": "C", "D": "H", "H": "D"}
#: The locator's places tried, likeliest first (in the frame as it is, then, where none was
#: named, in the frame drawn out: :data:`~hardware.camera.reader.locate.DRAWN_OUT`), and the
#: least mean chance inside an outline for it to be read (an outline taking in a card
#: beneath, or the table, has less).
SPOT_TRIES, ON_TOP = 2, 0.7
#: A frame whose colour channels differ by less than this on average (levels of 255, every
#: eighth pixel each way) has no colour: a black-and-white camera. The classifier took colour
#: as part of a suit, and in such frames read red cards as black at 0.95 and more (fold 1's
#: calibration scenes turned grey: 25 of 420 wrong, against 1 in colour), so no card is named
#: in them ("no colour"). Colour frames differ by 7 or more in the rendered scenes and 2.6 or
#: more in the real photos; their black-and-white copies by less than 2.
COLOURLESS = 2.0
#: The most a frame may be wider than high, or higher than wide: cameras give 4:3 to 21:9 (2.3),
#: either way up. The locator's input is 160 pixels wide whatever the frame, so a frame of
#: 5000 x 1 would ask it for a map 800 000 high (gigabytes); such a frame is refused.
MOST_ASPECT = 4.0
#: An outline squarer than this (its long sides over its short ones) whose index shows only in
#: the other corners is read again turned a quarter (:meth:`Recogniser.read_quad`). In a
#: mirrored frame the turn puts the mirrored index where it is trusted; where the outline
#: read mirrored names another card, the turn does not count. On rendered scenes of the
#: allowed decks, as they are and mirrored, it first read a card wrong at 1.30-1.35: a card
#: of an Oxygen deck, whose index stands in the top-right corner (docs/camera.md).
SQUARE = 1.30
#: Two outlines are of the same card where they overlap at least this much (their common
#: area over the area either covers): a read named less surely than the threshold is
#: unclear where another outline of the same card surely names another
#: (:meth:`Recogniser.against`). On fold 1's rendered scenes an outline cut short and the
#: whole card's overlapped 0.85; a queen and the seven half under it, 0.39.
SAME_PLACE = 0.6
#: Where no place named a card and the first place tried saw no index, its outline is read
#: again grown these times about its centre, its sides laid on the card's edges
#: (:meth:`Recogniser.read_grown`): on real photos the locator took a court's picture or an
#: ace's ornate pip for the card. The grown reads count where at least two of them name the
#: same card and none another; on rendered scenes of the allowed decks, their cards' outlines
#: shrunk (2 448 of them, to as little as 1/2.5, and 0.45 by 0.33 as a pip), that read 1 489
#: right and none wrong (docs/camera.md).
GROWN = (1.2, 1.35, 1.5, 1.8, 2.2, 2.7)


@dataclass(frozen=True)
class Read:
    """What the recogniser made of one frame."""

    card: Card | None
    confidence: float
    quad: Array | None = None  # the top card's corners in the frame's pixels (a card cut by
    # the frame's edge may reach past it), or None: no card seen
    reason: str = ""  # why it is unclear; of a named read, "pips counted" or ""
    guess: Card | None = None  # of an unclear read: the likeliest card

    def to_json(self, image: str | None = None) -> dict[str, Any]:
        """``{"image": …, "card": "QH" | None, "confidence": …}``; an unclear read also says
        why (``"reason": "no index"``, "no card" where none was seen)."""
        out: dict[str, Any] = {} if image is None else {"image": image}
        out["card"] = None if self.card is None else str(self.card)
        out["confidence"] = round(float(self.confidence), 4)
        if self.card is None:
            out["reason"] = self.reason or ("no card" if self.quad is None else "unclear")
        return out


class Recogniser:
    """Reads the top card of frames; ``deck`` (an enrolled deck) decides for that deck;
    ``letters``: the index sets whose glyphs count out of the box."""

    def __init__(self, deck: EnrolledDeck | None = None, *,
                 letters: tuple[str, ...] = DEFAULT_INDEX_LETTERS,
                 threshold: float = THRESHOLD, locator: Path = LOCATOR_PATH,
                 classifier: Path = CLASSIFIER_PATH) -> None:
        self.deck = deck
        self.threshold = threshold
        self.meaning = glyph_ranks(letters)
        self.locator = Locator(locator)
        self.classifier = Classifier(classifier)
        if deck is not None:
            deck.prepare_pictures()  # ~70 ms once, here rather than on a read mid-game

    def read(self, frame: Array) -> Read:
        """The top card of a BGR frame, or an unclear read (``card`` None; its reason and
        outline those of the first place tried). Where no place named a card (or only less
        surely than the threshold: :meth:`against`), the frame is looked at again drawn
        out, and where that names none either and the first place saw no index, its outline
        is read again grown (:meth:`read_grown`), else its pips' count asked at a lower
        chance (:meth:`read_counted`); each names a card or leaves the read as it was (an
        empty table stays "no card"). In a frame without colour
        (:func:`colourless`) no card is named: a card found there is unclear, "no colour",
        whatever else the read said (the table then tells why). A frame no camera gives
        raises :class:`FrameError` (:func:`checked`)."""
        frame = as_bgr(checked(frame))
        if frame.size == 0:
            return Read(None, 0.0, None, "no card")  # a camera's empty frame
        got = self._read(frame)
        if got.quad is not None and colourless(frame):
            return Read(None, 0.0, got.quad, "no colour", got.card or got.guess)
        return got

    def _read(self, frame: Array) -> Read:
        first: Read | None = None
        weak: Read | None = None
        disputed: Read | None = None  # the deck's clear witnesses against a sure classifier
        for spot in self.locator.look(frame, SPOT_TRIES).spots:
            if spot.on_top < ON_TOP:
                # the outline takes in much the network sees as no top card: one beneath
                first = first or Read(None, 0.0, spot.quad, "not the top card")
                continue
            got = self.read_quad(frame, spot.quad)
            if got.card is not None and disputed is not None and self.disputes(disputed, got):
                return disputed
            if got.card is not None and got.confidence >= self.threshold:
                return got if weak is None else self.against(weak, got)
            if got.card is not None:
                weak = weak or got
            else:
                first = first or got
                if got.reason == "classifier disagrees":
                    disputed = disputed or got
        # no place named a card (or only less surely than the threshold): another outline
        # of it, drawn out, gives the classifier another try (an outline cut short, or
        # taken the wrong way round; docs/camera.md)
        for spot in self.locator.look(frame, SPOT_TRIES, DRAWN_OUT).spots:
            if spot.on_top >= ON_TOP:
                got = self.read_quad(frame, spot.quad)
                if got.card is not None and disputed is not None and self.disputes(disputed, got):
                    return disputed
                if got.card is not None:
                    return got if weak is None else self.against(weak, got)
        if weak is not None:
            return weak
        if first is not None and first.reason == "no index" and first.quad is not None:
            return self.read_grown(frame, first.quad) or first
        if first is not None and first.quad is not None and first.reason not in UNCOUNTED:
            return self.read_counted(frame, first.quad) or first
        return first or Read(None, 0.0, None, "no card")

    def against(self, weak: Read, other: Read) -> Read:
        """A read named less surely than the threshold, where another outline named
        ``other``: unclear where ``other`` is another card named at the threshold or more on
        an outline of the same card (:data:`SAME_PLACE`; not a card beneath)."""
        if (other.card != weak.card and other.confidence >= self.threshold
                and same_place(weak, other)):
            return Read(None, weak.confidence, weak.quad, "outlines disagree", weak.card)
        return weak

    def disputes(self, disputed: Read, other: Read) -> bool:
        """Whether ``other``, read on an outline of the same card (:data:`SAME_PLACE`) as a
        read whose enrolled deck's clear features named one card and a sure classifier
        another ("classifier disagrees"), names a card the deck did not: then neither is
        named (a deck whose suits the classifier was never taught, a Swiss-suited one, had
        its 8 of roses named the 8 of diamonds so, by the look drawn out)."""
        return other.card != disputed.guess and same_place(disputed, other)

    def look(self, frame: Array, quad: Array) -> Look:
        """The classifier's reading of the card inside ``quad``."""
        return self.classifier.look(views(warp(frame, quad)))

    def read_quad(self, frame: Array, quad: Array) -> Read:
        """The card inside one quad of the frame. Where its index shows only in the other
        corners ("index misplaced") and the outline is nearly square (:data:`SQUARE`), the
        outline may have been taken the wrong way round: it is read again turned a quarter,
        and that read counts where it names a card, unless the outline read mirrored names
        another (then the frame is the mirrored one, and the turn read the mirrored index on
        its side)."""
        got = self._read_quad(frame, quad)
        if got.reason == "index misplaced" and squareness(quad) < SQUARE:
            q = quad.reshape(4, 2)
            turned = self._read_quad(frame, np.roll(q, 1, axis=0))
            if turned.card is not None:
                mirrored = self._read_quad(frame, q[[1, 0, 3, 2]])
                if mirrored.card in (None, turned.card):
                    return turned
        return got

    def read_grown(self, frame: Array, quad: Array) -> Read | None:
        """The card in outlines grown from ``quad`` (:data:`GROWN`; an outline round a
        court's picture or an ace's pip, no index in it): the first grown read naming a card,
        where at least two name that card and none names another; else None."""
        reads = [self.read_quad(frame, grown(frame, quad, k)) for k in GROWN]
        named = [r for r in reads if r.card is not None]
        if len(named) >= 2 and len({r.card for r in named}) == 1:
            return named[0]
        return None

    def read_counted(self, frame: Array, quad: Array) -> Read | None:
        """The card inside ``quad`` where its pips' count names it at the last resort's
        least chance (:data:`COUNTED_LAST`), else None: asked only where no look named a
        card, so that no look that would have read the card is forestalled."""
        got = self._read_quad(frame, quad, COUNTED_LAST)
        return got if got.card is not None else None

    def _read_quad(self, frame: Array, quad: Array, counted: float = COUNTED) -> Read:
        card = warp(frame, quad)
        look = self.classifier.look(views(card))
        deck = self.deck
        if deck is None:
            return self.out_of_box(card, look, self.meaning, quad, counted=counted)
        face = picture(card) if deck.pictures is not None else None
        read = decide_enrolled(look, deck, self.threshold, quad, face)
        return or_out_of_box(read, lambda: self.out_of_box(
            card, look, deck.meaning, quad, corners=not deck.other_corners, counted=counted),
            deck, look, face)

    def out_of_box(self, card: Array, look: Look, meaning: Array, quad: Array, *,
                   corners: bool = True, counted: float = COUNTED) -> Read:
        """The decision without an enrolled deck, on the warped ``card`` the classifier read
        as ``look``: its likeliest card if sure enough, an unclear one named by its counted
        pips, a number card or ace left unclear where its pips are of the twin suit.
        ``corners``: an index seen only in the other corners is unclear (an enrolled deck
        that prints one there says not)."""
        read = decide(look, meaning, self.threshold, quad, corners=corners)
        pips = functools.cache(lambda: self.pips(card))  # a classifier pass: asked once, if
        if read.reason == "unclear" and read.guess is not None:
            read = confirm_by_count(read, rank_chances(look, meaning)[0],
                                    float(suit_chances(look).max()), pip_count(card), pips,
                                    self.threshold, counted)
        if read.card is None or not has_pips(read.card):
            return read
        return check_pips(read, pips())

    def pips(self, card: Array) -> Array:
        """The chance of each suit by the pips of a warped card (:func:`pip_views`)."""
        return suit_chances(self.classifier.look(pip_views(card)))


class FrameError(RefereeError, ValueError):
    """A frame no camera gives (:func:`checked`)."""


def checked(frame: Array) -> Array:
    """``frame`` if it is one a camera gives: 8-bit (uint8), of one, three or four channels,
    at most :data:`MOST_ASPECT` times as wide as high or as high as wide; else
    :class:`FrameError`, saying what it is (a stream or a video of another kind, a program
    passing floats)."""
    shape = getattr(frame, "shape", None)
    dtype = getattr(frame, "dtype", None)
    if shape is None:
        raise FrameError(f"a frame is an array of pixels, not a {type(frame).__name__}")
    if len(shape) not in (2, 3):
        raise FrameError(f"a frame is an image of rows and columns, not an array of shape "
                         f"{shape}")
    if len(shape) == 3 and shape[2] not in (1, 3, 4):
        raise FrameError(f"a frame of {shape[2]} channels: a camera gives 1 (grey), 3 (BGR) "
                         "or 4 (BGRA)")
    if dtype != np.uint8:
        raise FrameError(f"a frame of {dtype}: the camera's frames are 8-bit (uint8)")
    h, w = shape[:2]
    if too_oblong(w, h):
        raise FrameError(f"a frame of {w} x {h} pixels: no camera's (at most "
                         f"{MOST_ASPECT:g} times as wide as high, or as high as wide)")
    return frame


def same_place(a: Read, b: Read) -> bool:
    """Whether two reads are of outlines of the same card (:data:`SAME_PLACE`)."""
    return (a.quad is not None and b.quad is not None
            and overlap(a.quad, b.quad) >= SAME_PLACE)


def too_oblong(w: int, h: int) -> bool:
    """Whether a picture ``w`` x ``h`` is more than :data:`MOST_ASPECT` times as wide as high
    or as high as wide (an empty one is not: it is no card)."""
    return min(w, h) > 0 and max(w, h) > MOST_ASPECT * min(w, h)


def as_bgr(frame: Array) -> Array:
    """A frame as three channels, BGR: a grey frame (one channel) repeated, a BGRA one
    without its alpha (a camera or a file may give either)."""
    if frame.ndim == 2 or (frame.ndim == 3 and frame.shape[2] == 1):
        return np.repeat(frame.reshape(frame.shape[0], frame.shape[1], 1), 3, axis=2)
    if frame.ndim == 3 and frame.shape[2] == 4:
        return np.ascontiguousarray(frame[..., :3])
    return frame


def colourless(frame: Array, least: float = COLOURLESS) -> bool:
    """Whether a BGR frame has no colour: its channels differ by less than ``least`` on
    average (every eighth pixel each way; a grey frame, one channel, has none)."""
    if frame.ndim < 3 or frame.shape[2] < 3 or frame.size == 0:
        return True
    s = frame[::8, ::8, :3].astype(np.int16)
    return float(np.mean(np.abs(s[..., 0] - s[..., 1]) + np.abs(s[..., 1] - s[..., 2]))) < least


def has_pips(card: Card) -> bool:
    """A number card or an ace: a card whose middle shows its suit's pips."""
    return card.rank <= 10 or card.rank == 14


def confirm_by_count(read: Read, ranks: Array, suit: float, count: int | None,
                     pips: Callable[[], Array], threshold: float,
                     least: float = COUNTED) -> Read:
    """An unclear read named by the ``count`` of pips on the card: the number card (an ace for
    one pip) of that rank and the likeliest suit, where its chance (``ranks``' chance of that
    rank, :func:`~hardware.camera.reader.classify.rank_chances`, times the ``suit`` chance)
    is at least ``least``, the ``suit`` chance at least ``threshold`` and that suit the
    likeliest of the ``pips`` (:meth:`Recogniser.pips`, asked last, only where all else
    holds): the index read a little unsure, the pips as many as one of the ranks it holds
    likely and of its suit."""
    g = read.guess
    if (read.card is not None or read.reason != "unclear" or g is None or count is None
            or not 1 <= count <= 10):
        return read
    card = Card(14 if count == 1 else count, g.suit)
    chance = float(ranks[RANKS.index(card.rank)]) * suit
    if chance < least or suit < threshold or SUITS[int(pips().argmax())] != g.suit:
        return read
    return Read(card, chance, read.quad, "pips counted")


def check_pips(read: Read, pips: Array, least: float = PIPS) -> Read:
    """``read`` left unclear where the pips' suit chances (:meth:`Recogniser.pips`) are at
    least ``least`` for the other suit of the named card's colour."""
    if read.card is None or float(pips[SUITS.index(TWIN[read.card.suit])]) < least:
        return read
    return Read(None, read.confidence, read.quad, "pips disagree", read.card)


def likeliest(look: Look, meaning: Array) -> tuple[Card, float, float]:
    """The likeliest card of a reading, its chance (rank times suit) and how surely a view
    sees an index at all."""
    ranks, index = rank_chances(look, meaning)
    suits = suit_chances(look)
    r, s = int(ranks.argmax()), int(suits.argmax())
    return Card(RANKS[r], SUITS[s]), float(ranks[r] * suits[s]), index


def shows_index(look: Look, views: tuple[int, ...] = (0, 1, 2, 3)) -> bool:
    """Whether one of ``views`` (0 top left, 1 top right, 2 and 3 those of the card turned
    half round) surely shows a rank glyph (:data:`INDEX`)."""
    return float((1 - look.glyphs[list(views), NO_GLYPH]).max()) >= INDEX


def in_its_corners(look: Look) -> bool:
    """Whether a view of the card's top-left or bottom-right corner (views 0 and 2) surely
    shows a rank glyph, where nearly every deck prints its index. An index seen only in the
    other two corners is one the warp turned on its side (a card outlined the wrong way
    round) or a mirrored frame."""
    return shows_index(look, (0, 2))


def decide(look: Look, meaning: Array, threshold: float, quad: Array | None = None, *,
           corners: bool = True) -> Read:
    """Out of the box: the likeliest card if sure enough, else an unclear read; an index seen
    only in the top-right and bottom-left corners is unclear (:func:`in_its_corners`) unless
    ``corners`` is False (a deck that prints its index there)."""
    card, chance, index = likeliest(look, meaning)
    if index < INDEX:
        return Read(None, 0.0, quad, "no index")
    if corners and not in_its_corners(look):
        return Read(None, 0.0, quad, "index misplaced", card)
    if chance < threshold:
        return Read(None, chance, quad, "unclear", card)
    return Read(card, chance, quad)


def or_out_of_box(read: Read, plain: Callable[[], Read], deck: EnrolledDeck, look: Look,
                  picture_seen: Array | None = None) -> Read:
    """An enrolled deck's unclear ``read``, or the out-of-the-box decision (``plain()``, its
    glyphs meaning what they mean in this deck) where that names a card the deck does not
    deny (:func:`deck_denies`): an enrolled deck names what out of the box names, except
    where its own faces say otherwise (on real photos, enrolled from one photo of each card,
    it had named about half as many). A read a clear picture of another card vetoed (reason
    ``picture disagrees``) stays unclear."""
    if read.card is not None or read.reason == "picture disagrees":
        return read
    got = plain()
    if got.card is None or deck_denies(deck, got.card, look, picture_seen):
        return read
    return got


def deck_denies(deck: EnrolledDeck, card: Card, look: Look,
                picture_seen: Array | None = None, near: float = DENY_NEAR) -> bool:
    """Whether an enrolled deck's own faces hold a card other than ``card`` nearest: its
    clear whole-card picture (:data:`PICTURE_MARGIN`, :data:`PICTURE_NEAR`) another card; or
    its features' nearest card another, and its picture's nearest the same card and at least
    ``near`` alike (a picture unlike every enrolled one, as of a card enrolled in other light,
    denies nothing). A deck file without pictures, or with an earlier version's smaller ones:
    its features' nearest card alone."""
    seen = None if picture_seen is None else deck.match_picture(picture_seen)
    if (seen is not None and seen.card != card and seen.margin >= PICTURE_MARGIN
            and seen.score >= PICTURE_NEAR):
        return True
    nearest = deck.match(look).card
    if nearest == card:
        return False
    return seen is None or (seen.card == nearest and seen.score >= near)


def _sure(margin: float) -> float:
    """The confidence of a card an enrolled deck names by a nearest-card ``margin``."""
    return float(min(1.0, 0.5 + margin * 5))


def decide_enrolled(look: Look, deck: EnrolledDeck, threshold: float,
                    quad: Array | None = None, picture_seen: Array | None = None) -> Read:
    """With an enrolled deck: the deck's nearest card and the classifier (its glyphs meaning
    what they mean in this deck) together (:func:`enrolled_verdict`); an index seen only in
    the corners the deck leaves blank is unclear (:func:`in_its_corners`). ``picture_seen``:
    the warped card's whole-card picture, matched with the deck's only where the verdict asks
    (a deck file enrolled before pictures has none)."""
    m = deck.match(look)
    card, chance, index = likeliest(look, deck.meaning)
    seen = index >= INDEX
    if seen and not deck.other_corners and not in_its_corners(look):
        # an index only in the corners this deck leaves blank: turned on its side, mirrored
        return Read(None, 0.0, quad, "index misplaced", m.card)
    pictured = functools.cache(lambda: None if picture_seen is None
                               else deck.match_picture(picture_seen))  # asked twice at most
    return enrolled_verdict(seen, card, chance, m, pictured, threshold, quad)


@dataclass(frozen=True)
class Margins:
    """The enrolled verdict's thresholds (:func:`enrolled_verdict`), the shipped ones unless
    given (``training.calibrate`` replays the verdict on dumped reads with others):
    :data:`AGREE`, :data:`AGREE_CHANCE`, :data:`MARGIN`, the least margin and likeness of a
    clear whole-card picture (:data:`PICTURE_MARGIN`, :data:`PICTURE_NEAR`; None: pictures take
    no part) and the least likeness of a just-agreeing read's picture (:data:`UNLIKE`; None:
    not asked)."""

    agree: float = AGREE
    agree_chance: float = AGREE_CHANCE
    margin: float = MARGIN
    picture: tuple[float, float] | None = (PICTURE_MARGIN, PICTURE_NEAR)
    unlike: float | None = UNLIKE


def enrolled_verdict(seen: bool, card: Card, chance: float, m: Match,
                     pictured: Callable[[], Match | None], threshold: float,
                     quad: Array | None = None, margins: Margins = Margins()) -> Read:
    """The enrolled decision from its figures: the classifier's likeliest ``card`` in this
    deck at ``chance`` (``seen``: the views saw an index), the deck's nearest card by its
    features ``m``, and the deck's nearest whole-card picture (``pictured()``, None where
    there is none; asked only where it decides, as it costs most of a millisecond).

    A card is named where the features and the classifier agree (or, where the features are
    unsure, where the classifier reads the deck's nearest card as surely as out of the box),
    never by the features alone, however clear, but by clear features and a clear picture of
    the same card where the classifier is not sure of another. Where the features are unsure,
    the picture names the card when it is near and clear enough and the classifier does not
    surely name another; and a clear picture of another card leaves unclear what the features
    only just agree on with the classifier, or names its own card where it is at least
    :data:`OVERRULE` alike; what they just agree on, the classifier unsure out of the box, is
    unclear where the nearest picture is less alike than :data:`UNLIKE` ("picture unlike")."""

    def clear_picture() -> Match | None:
        """The deck's nearest picture where it is clear (else it takes no part)."""
        if margins.picture is None:
            return None
        least_margin, least_near = margins.picture
        p = pictured()
        return p if p is not None and p.margin >= least_margin and p.score >= least_near else None

    if seen and card == m.card and (m.margin >= margins.agree and chance >= margins.agree_chance
                                    or chance >= threshold):
        if m.margin < margins.margin and (p := clear_picture()) is not None and p.card != card:
            # features only just agreeing, the clear picture another card (a club the
            # classifier read as a spade): the picture's card where very like it, else unclear
            if p.score >= OVERRULE:
                return Read(p.card, _sure(p.margin), quad)
            return Read(None, m.margin, quad, "picture disagrees", card)
        if (m.margin < margins.margin and chance < threshold and margins.unlike is not None
                and (p := pictured()) is not None and p.score < margins.unlike):
            return Read(None, m.margin, quad, "picture unlike", card)
        return Read(card, max(chance, _sure(m.margin)), quad)
    if m.margin >= margins.margin and m.score >= NEAR:
        # the features alone name no card: on real photos (bench/camera_photos.py) their
        # clear choice, the classifier not agreeing, was wrong in 125 of 164 reads; with the
        # deck's clear picture of the same card, and the classifier not sure of another, the
        # deck's two witnesses name it
        sure_other = seen and card != m.card and chance >= DENY
        if not sure_other and (p := clear_picture()) is not None and p.card == m.card:
            return Read(m.card, _sure(min(m.margin, p.margin)), quad)
        why = ("no index" if not seen else "classifier disagrees"
               if sure_other else "classifier unsure")
        return Read(None, m.margin, quad, why, m.card)
    p = clear_picture()
    if p is not None and not (seen and card != p.card and chance >= DENY):
        return Read(p.card, _sure(p.margin), quad)
    return Read(None, max(m.margin, chance if seen else 0.0), quad,
                "deck unsure" if seen else "no index", m.card)
