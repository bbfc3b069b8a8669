"""The recogniser: the top card of a pile in a camera frame, with a confidence.

1. Find the top card: first where the locator network sees it
   (:mod:`hardware.camera.reader.locate`); when that does not read, by the frame's edges
   (:mod:`hardware.camera.reader.find`): paper regions grown into card-shaped rectangles
   (:mod:`~hardware.camera.reader.regions`), the rectangles of straight lines
   (:mod:`~hardware.camera.reader.rectangles`), cards found from one corner. The largest
   whole card is the top one (and the locator's map must agree that it is on top).
2. Warp it upright to 200x300 (:mod:`hardware.camera.reader.warp`).
3. Read both corner indices (:mod:`hardware.camera.reader.index`): each corner's rank and suit
   glyphs, named by two small classifiers (numpy MLPs trained by ``python3 -m
   training.classifier`` and shipped as ``model.npz``, :mod:`hardware.camera.reader.classify`).
4. The card is named only when both corners agree (or, with an enrolled deck, when its
   template clearly sides with one of two corners that differ,
   :mod:`hardware.camera.reader.templates`); the confidence combines the readings. Below the
   threshold (:data:`AGREED` for two corners that agree by themselves, :data:`THRESHOLD`
   otherwise) the read is *unclear* (``card`` None), never a guess.
5. A number card's large pips, counted and read apart from the index
   (:mod:`hardware.camera.reader.pips`), make a read below :data:`PIP_CHECK` unclear when they
   plainly show another card (or, for a black card, another suit), and name a card left
   unclear when they plainly show one that a corner or the template named too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy.typing as npt

from hardware.camera.reader.classify import load_model
from hardware.camera.reader.find import find
from hardware.camera.reader.index import read_corners
from hardware.camera.reader.locate import Locator, Sight
from hardware.camera.reader.pips import PIP_CHECK, find_pips, pip_card, pips_deny
from hardware.camera.reader.templates import EnrolledDeck, alike
from hardware.camera.reader.warp import grow_quad, reshaped, warp
from referee.cards import Card

Array = npt.NDArray[Any]

#: A read below this confidence is unclear; AGREED for two corners that name one card by
#: themselves (the geometric mean of their readings), THRESHOLD for every other read.
THRESHOLD, AGREED = 0.80, 0.65
#: Cards found from a corner tried when no whole card read.
CORNER_TRIES = 5
#: Reads of a quad that may be a court card's picture frame, and how many such quads are
#: widened onto their card.
BLANK, BLANK_TRIES = ("no index", "one corner"), 3
#: Quads read unclear whose sides are moved in
#: (:meth:`~hardware.camera.reader.find.Finding.shrunk`), and how many are tried.
UNSURE, UNSURE_TRIES = ("unclear", "one corner", "no index"), 2
#: Pixels (of the frame) by which a quad is widened, in turn, when a corner cannot be read.
READ_WIDER = (4.0, 8.0)
#: The locator's places tried, likeliest first.
SPOT_TRIES = 2
#: An outline of the edge finder is read only where the locator's map holds at least this
#: mean chance (a card beneath, or the table, is near 0).
ON_TOP = 0.25


@dataclass(frozen=True)
class Read:
    """What the recogniser made of one frame."""

    card: Card | None
    confidence: float
    quad: Array | None = None  # the top card's corners in the frame, or None: no card seen
    reason: str = ""
    guess: Card | None = None  # of an unclear read: the card both its corners named, if any

    def to_json(self, image: str | None = None) -> dict[str, Any]:
        """``{"image": …, "card": "QH" | None, "confidence": …}``."""
        out: dict[str, Any] = {} if image is None else {"image": image}
        out["card"] = None if self.card is None else str(self.card)
        out["confidence"] = round(float(self.confidence), 4)
        return out


class Recogniser:
    """Reads the top card of frames; ``deck`` (an enrolled deck) sharpens the reads."""

    def __init__(self, deck: EnrolledDeck | None = None, threshold: float = THRESHOLD,
                 agreed: float = AGREED, locator: Locator | None | bool = True) -> None:
        self.deck = deck
        self.threshold = threshold
        self.agreed = agreed
        self.locator = Locator() if locator is True else (locator or None)
        load_model()

    def read(self, frame: Array) -> Read:
        """The top card of a BGR frame, or an unclear read (``card`` None): where the
        locator sees the top card first (then its likeliest place given a card's shape,
        :func:`reshaped`), then the outlines found in the frame's edges."""
        first: Read | None = None
        sight: Sight | None = None
        if self.locator is not None:
            sight = self.locator.look(frame)
            for spot in sight.spots[:SPOT_TRIES]:
                got = self.read_quad(frame, spot.quad)
                if got.card is not None:
                    return got
                first = first or got
            if sight.spots:
                # the likeliest place, one side a few pixels off: given a card's shape
                for quad in reshaped(sight.spots[0].quad):
                    got = self.read_quad(frame, quad)
                    if got.card is not None and sight.on_top(quad) >= ON_TOP:
                        return got
        got = self.read_outlines(frame)
        if got.card is not None and sight is not None and got.quad is not None \
                and sight.on_top(got.quad) < ON_TOP:
            # the network takes that outline for a card beneath, or the table
            got = Read(None, got.confidence, got.quad, "beneath the top card", got.card)
        return got if got.card is not None or first is None else first

    def read_outlines(self, frame: Array) -> Read:
        """The top card by the outlines found in the frame's edges. The whole cards
        found are tried largest first (two cards that happen to line up can pass for one
        large card; such a quad reads unclear and the next is tried)."""
        first: Read | None = None
        finding = find(frame)
        blank: list[Array] = []  # quads in which no index, or one alone, was seen
        unsure: list[Array] = []  # quads read unclear, whatever the reason (UNSURE)
        beneath: Read | None = None  # a read of a quad a straight edge runs across
        doubts: list[Read] = []  # whole cards read unclear, with the card they named
        for quad in finding.quads[:3]:
            got = self.read_quad(frame, quad)
            if got.guess is not None:
                doubts.append(got)
            if got.card is not None:
                if not finding.crossed(quad):
                    return got
                # It lies beneath a card (or spans two): only when no other quad reads.
                beneath = beneath or got
                continue
            if got.reason in BLANK:
                blank.append(quad)
            if got.reason in UNSURE:
                unsure.append(quad)
            first = first or got
        if beneath is not None:
            return beneath
        for quad in finding.rectangles():
            got = self.read_quad(frame, quad)
            if got.guess is not None:
                doubts.append(got)
            if got.card is not None and not finding.crossed(quad):
                return got
            if got.reason in BLANK:
                blank.append(quad)
            if got.reason in UNSURE:
                unsure.append(quad)
            first = first or got
        # No whole card read: a card whose sides on a white card beneath are faint. Such a
        # quad may also be a card beneath one whose sides there are faint: not one that
        # another quad found lies on (a quad a straight edge runs across lies beneath a card
        # itself, or spans two: it tells nothing).
        corners = finding.from_corners()[:CORNER_TRIES]
        for quad in corners:
            got = _unless_disputed(self.read_quad(frame, quad), doubts)
            if got.card is not None:
                if not finding.covered(quad, corners + finding.quads[:3]):
                    return got
                got = Read(None, got.confidence, quad, "beneath another")
            if got.reason in BLANK:
                blank.append(quad)
            first = first or got
        # A quad without an index may be a court card's picture frame (its one "index" a
        # piece of the picture): the card around it.
        for quad in blank[:BLANK_TRIES]:
            wider = finding.around(quad)
            for card in ([wider] if wider is not None else []) + finding.enclosing(quad):
                got = _unless_disputed(self.read_quad(frame, card), doubts)
                if got.card is not None:
                    return got
        # A quad that ran on along a card beneath, past the top card's faint side.
        for quad in unsure[:UNSURE_TRIES]:
            for card in finding.shrunk(quad):
                got = _unless_disputed(self.read_quad(frame, card), doubts)
                if got.card is not None and not finding.covered(card, corners + finding.quads[:3]):
                    return got
        return first or Read(None, 0.0, None, "no card")

    def read_quad(self, frame: Array, quad: Array) -> Read:
        """The card inside one quad of the frame."""
        card_img = warp(frame, quad)
        corners = read_corners(card_img)
        for px in READ_WIDER:
            if all(c is not None for c in corners):
                break
            # The outline may have been found a few pixels inside the card, cutting an index:
            # read a little wider (the margins of the corners take off what lies beyond).
            wider = read_corners(warp(frame, grow_quad(quad, px)))
            corners = [c if c is not None else w for c, w in zip(corners, wider, strict=True)]
        seen = [c for c in corners if c is not None]
        if not seen:
            return Read(None, 0.0, quad, "no index")
        card: Card | None = None
        conf = 0.0
        agreed = len(seen) == 2 and seen[0][0] == seen[1][0]
        need = self.threshold
        if agreed:
            # Two corners read apart agree (their geometric mean: the corners of one deck err
            # alike, so they are not independent evidence).
            card, conf = seen[0][0], (seen[0][1] * seen[1][1]) ** 0.5
            need = min(self.threshold, self.agreed)
        elif len(seen) == 2:
            surer = max(seen, key=lambda s: s[1])
            card, conf = surer[0], 0.5 * surer[1] * (1 - min(s[1] for s in seen))
        elif len(seen) == 1:
            # One corner alone is too often a card beneath whose other corner is covered, and
            # the visible part of such a card can match its enrolled template well (2 of the
            # 3 wrong reads of 2 000 enrolled scenes): never a card.
            return Read(None, 0.85 * seen[0][1], quad, "one corner")
        # The cards the readings name, for the pips to settle an unclear read (below); where
        # both corners name one card, the surer one's chance (sorted: it is set last).
        support = dict(sorted(seen, key=lambda s: s[1]))
        if self.deck is not None and card is not None:
            t = self.deck.look(card_img)
            tcard, tconf = t.card, t.clear
            sides = {s[0]: s[1] for s in seen if alike(s[0], tcard)}
            if tconf >= 0.5:
                support[tcard] = max(support.get(tcard, 0.0), tconf)
            if card != tcard or tconf < 0.5:
                need = self.threshold  # an enrolled deck's template must confirm a lesser read
            if card == tcard:
                conf = 1 - (1 - conf) * (1 - tconf)
            elif len({s[0] for s in seen}) == 2 and len(sides) == 1 and t.clear_kind >= 0.5:
                # the corners differ and the deck's template sides with one of them
                card, conf = next(iter(sides)), t.clear_kind * max(sides.values())
            elif alike(card, tcard):
                pass  # a template a pixel off cannot tell the suits of one colour: the corners
            elif t.clear_kind >= 0.5 and conf < 0.99:
                # the template clearly names another card: unclear, unless the corners are all
                # but sure (a template that is not clear leaves the corners to decide)
                return self._pips_settle(card_img, support,
                                         Read(None, conf, quad, "template disagrees"))
        if card is None or conf < need:
            return self._pips_settle(card_img, support,
                                     Read(None, conf, quad, "unclear", card if agreed else None))
        if conf < PIP_CHECK:
            # Blur joins a club's lobes in a small index into a spade's outline, and makes a
            # 10 of an 8: pips that plainly show another card, or another suit, deny the read.
            found = find_pips(card_img)
            shown = None if found is None else pip_card(card_img, found)
            if shown is not None:
                denied = shown[0] != card
            else:
                denied = found is not None and pips_deny(card_img, card, found)
            if denied:
                unclear = Read(None, conf, quad, "pips disagree", card if agreed else None)
                return _settled(shown, support, unclear)
        return Read(card, conf, quad)

    @staticmethod
    def _pips_settle(card_img: Array, support: dict[Card, float], unclear: Read) -> Read:
        """``unclear``, or the card its pips settle it on (:func:`_settled`)."""
        if not any(2 <= c.rank <= 10 for c in support):
            return unclear  # only a number card's pips are read
        return _settled(pip_card(card_img), support, unclear)


def _settled(shown: tuple[Card, float] | None, support: dict[Card, float],
             unclear: Read) -> Read:
    """``unclear``, or the number card the pips plainly show (``shown``, :func:`pip_card`)
    where a corner or the enrolled deck's template named it too: two readings that cannot err
    alike (the pips are counted and their suit read apart from the index)."""
    if shown is None or shown[0] not in support:
        return unclear
    card, chance = shown
    return Read(card, 1 - (1 - chance) * (1 - support[card]), unclear.quad, "pips")


def _unless_disputed(got: Read, doubts: list[Read]) -> Read:
    """``got``, or an unclear read when a whole card found on the same place named another
    card, if not surely (an outline found from a corner may be a few pixels off, onto the
    card beneath)."""
    if got.card is None or got.quad is None:
        return got
    centre = got.quad.mean(axis=0)
    for d in doubts:
        if d.quad is not None and d.guess != got.card and cv2.pointPolygonTest(
                d.quad.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])), False) > 0:
            return Read(None, got.confidence, got.quad, "outlines disagree", got.card)
    return got
