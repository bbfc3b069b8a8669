"""Step 5 of a read: a number card's large pips, counted and read apart from its index
(:func:`find_pips`, :func:`pip_suits`): the number card they plainly show (:func:`pip_card`),
and whether they deny a black card's suit (:func:`pips_deny`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.classify import SUIT_CLASSES, load_model
from hardware.camera.reader.index import RANK_SIZE, SUIT_SIZE, Glyphs, fit_glyph, suit_features
from referee.cards import Card

Array = npt.NDArray[Any]

#: Where a warped card's pips are looked for (shares of its width and height: between the
#: indices' columns, clear of the ends).
PIP_BOX = (0.12, 0.88, 0.05, 0.95)
#: A pip: its height as a share of the card's, its width over its height, and the share of
#: its box its ink fills (suit shapes; not a letter's stroke or a picture's line).
PIP_HEIGHT, PIP_ASPECT, PIP_FILL = (0.05, 0.3), (0.6, 1.5), (0.35, 0.9)
#: Pips whose centre is nearer the card's middle than this share of its height are on the
#: middle row, printed either way up.
PIP_MIDDLE = 0.06
#: At most this many pips of each half of the card are read.
PIP_READ = 2
#: A pip's partner, where the card turned round would put it, is this near (a share of the
#: card's height).
PIP_PLACE = 0.05
#: Pips at least this share of the tallest one's height are taken (the large pips of one
#: card, not a smaller mark beside them).
PIP_SAME = 0.75
#: A number card's pips deny the corners' suit when their chance of it is below the first
#: and of another suit above the second.
PIP_DENY = (0.1, 0.8)
#: Only a read less sure than this is checked against its pips: the corners that blur
#: misled read 0.65-0.84, 90-98 % of the right reads of black number cards 0.9 or more.
PIP_CHECK = 0.9


_NO_RANK = np.zeros((RANK_SIZE[1], RANK_SIZE[0]), np.float32)  # a pip has no rank glyph


@dataclass
class Pips:
    """The large pips found in a warped card's body (:func:`find_pips`)."""

    crop: Array  # the body box of the card
    labels: Array  # its ink's connected components
    stats: Array  # their boxes and areas (OpenCV's stats)
    paper: float  # the paper's brightness
    pips: list[tuple[int, float, float]]  # (label, x, y): centres, shares of the card's size
    whole: bool  # no other blob of a pip's size: a picture, pips run together, a pip cut off


def find_pips(card: Array) -> Pips | None:
    """The large pips in a warped card's body: ink blobs of a pip's size, shape and fill,
    each at least ``PIP_SAME`` of the tallest one's height; None when there are none."""
    h_, w_ = card.shape[:2]
    x0, x1 = round(PIP_BOX[0] * w_), round(PIP_BOX[1] * w_)
    y0, y1 = round(PIP_BOX[2] * h_), round(PIP_BOX[3] * h_)
    crop = card[y0:y1, x0:x1]
    b, g, r = cv2.split(crop)
    gray = cv2.min(cv2.min(b, g), r)  # the darkest channel: red ink is ink
    sample = gray[::2, ::2].ravel()
    k = int(0.85 * (sample.size - 1))
    paper = float(np.partition(sample, k)[k])
    if paper < 40 or paper - float(sample.min()) < 50:
        return None
    otsu, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ink = (gray < min(float(otsu), paper - 35)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    ch, cw = ink.shape
    found: list[tuple[int, int, float, float]] = []  # (height, label, x, y)
    blobs: list[tuple[int, int, bool]] = []  # other blobs: (height, area, cut by the box)
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        cut = x <= 0 or y <= 0 or x + w >= cw or y + h >= ch
        if not cut and PIP_HEIGHT[0] * h_ <= h <= PIP_HEIGHT[1] * h_ \
                and PIP_ASPECT[0] <= w / h <= PIP_ASPECT[1] \
                and PIP_FILL[0] <= a / (w * h) <= PIP_FILL[1]:
            found.append((h, i, (x0 + x + w / 2) / w_, (y0 + y + h / 2) / h_))
        else:
            blobs.append((h, a, cut))
    if not found:
        return None
    tallest = max(f[0] for f in found)
    pips = [(i, x, y) for h, i, x, y in found if h >= PIP_SAME * tallest]
    area = float(np.median([stats[i][4] for i, _, _ in pips]))
    # A blob inside the box as big as half a pip, or one cut by the box as tall as a pip
    # (not an index's glyph), means the pips seen are not all the card's.
    whole = not any(a >= 0.5 * area if not cut else h >= PIP_SAME * tallest and a >= 0.5 * area
                    for h, a, cut in blobs)
    return Pips(crop, labels, stats, paper, pips, whole)


def pip_suits(card: Array, found: Pips | None = None) -> Array | None:
    """The suit chances (``SUIT_CLASSES`` order) of the large pips in a warped card's body,
    each read the way up it is printed, averaged; None when no pip is seen. The pips
    are several times the size of the index's suit: blur that makes a club in the corner
    pass for a spade leaves the pips plain."""
    found = find_pips(card) if found is None else found
    if found is None:
        return None
    # Pips in the card's lower half are printed upside down (an upside-down club reads as a
    # spade); a pip on the middle row is either way up, as the card lies, and is left out.
    # A few from each half are enough.
    upper = [i for i, _, y in found.pips if y <= 0.5 - PIP_MIDDLE]
    lower = [i for i, _, y in found.pips if y >= 0.5 + PIP_MIDDLE]
    features = []
    for i, flip in [(i, False) for i in upper[:PIP_READ]] + [(i, True) for i in lower[:PIP_READ]]:
        x, y, w, h, _ = (int(v) for v in found.stats[i])
        mask = found.labels[y:y + h, x:x + w] == i
        pix = found.crop[y:y + h, x:x + w][mask].astype(np.float32)
        red = float((pix[:, 2].mean() - (pix[:, 0].mean() + pix[:, 1].mean()) / 2)
                    / max(found.paper, 1.0))
        if flip:
            mask = mask[::-1, ::-1]
        features.append(suit_features(Glyphs(_NO_RANK, fit_glyph(mask, SUIT_SIZE), red, 1.0,
                                             w / h)))
    if not features:
        return None
    _, suit_net = load_model()
    return np.asarray(suit_net.probabilities(np.stack(features)).mean(axis=0), np.float32)


def pip_card(card: Array, found: Pips | None = None) -> tuple[Card, float] | None:
    """The number card its pips show, with the pips' chance of its suit, or None when they do
    not plainly show one: 2 to 10 pips, nothing else of a pip's size in the card's body, laid
    out as a number card's pips are (each has a partner where the card turned round would put
    it, but for an odd count's one in the middle column), their suit above 0.9. ``found``:
    what :func:`find_pips` found on ``card``, if it was looked for already."""
    found = find_pips(card) if found is None else found
    if found is None or not found.whole or not 2 <= len(found.pips) <= 10:
        return None
    aspect = card.shape[0] / card.shape[1]
    odd = [(x, y) for i, x, y in found.pips
           if not any(j != i and abs(px - (1 - x)) < PIP_PLACE * aspect
                      and abs(py - (1 - y)) < PIP_PLACE for j, px, py in found.pips)]
    n = len(found.pips)
    if n % 2 == 0 and odd:
        return None
    if n % 2 == 1:
        # One pip of an odd count has no partner: in the middle column, and for a 3, 5 or 9
        # near the middle row (a 7's is above or below it).
        if len(odd) != 1 or abs(odd[0][0] - 0.5) >= PIP_PLACE * aspect \
                or (n != 7 and abs(odd[0][1] - 0.5) >= 0.1):
            return None
    chances = pip_suits(card, found)
    if chances is None or float(chances.max()) < 0.9:
        return None
    return Card(n, SUIT_CLASSES[int(chances.argmax())]), float(chances.max())


def pips_deny(card_img: Array, card: Card, found: Pips | None = None) -> bool:
    """Whether a black number card's pips plainly show another suit than ``card``'s. Blur
    joins a club's lobes into a spade's outline (and may part a spade's); the red suits differ
    by more than blur takes away, and are not checked (the check costs about 2.5 ms).
    ``found``: as for :func:`pip_card`."""
    if not 2 <= card.rank <= 10 or card.suit not in "CS":
        return False  # a court card's picture and an ace's large pip are not pips to read
    chances = pip_suits(card_img, found)
    if chances is None:
        return False
    named = float(chances[SUIT_CLASSES.index(card.suit)])
    return named < PIP_DENY[0] and float(chances.max()) > PIP_DENY[1]
